"""What the README, the docs it points to and the commands' help say holds (issue 23, item 5)."""

from __future__ import annotations

import json
import re
import socket
import threading

import pandas as pd
import pytest

from batsim_classifier_scheduler import registry
from batsim_classifier_scheduler.batsim.server import DecisionServer
from batsim_classifier_scheduler.cli import build_parser, main
from batsim_classifier_scheduler.workloads import write_batsim_json
from batsim_classifier_scheduler.workloads.synthetic import generate

from tests.helpers import REPO

README = (REPO / "README.md").read_text()
BATSIM_DOC = (REPO / "docs" / "batsim.md").read_text()
USAGE = (REPO / "docs" / "usage.md").read_text()
WALL_CLOCK = ["scheduling_time", "simulation_time"]


def free_endpoint() -> str:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return f"tcp://127.0.0.1:{probe.getsockname()[1]}"


@pytest.mark.slow
def test_batsim_peer_writes_what_simulate_writes_but_the_wall_clock(tmp_path):
    """The README said both files were byte-identical; _schedule.csv holds wall-clock times."""
    assert "byte-identical to `simulate`'s, and `_schedule.csv` too but for its two wall-clock columns" in BATSIM_DOC
    workload = tmp_path / "w.json"
    write_batsim_json(generate(300, weeks=1, nb_res=16, seed=4), workload)
    endpoint = free_endpoint()
    thread = threading.Thread(target=lambda: DecisionServer(endpoint, {"policy": "spf"}, timeout=60).run(), daemon=True)
    thread.start()
    assert main(["batsim-peer", "-p", str(REPO / "platforms" / "small-16.xml"), "-w", str(workload),
                 "-e", str(tmp_path / "peer"), "-s", endpoint, "--timeout", "60"]) == 0
    thread.join(timeout=60)
    assert main(["simulate", str(workload), "--policy", "spf", "-e", str(tmp_path / "sim"), "--no-progress"]) == 0
    assert (tmp_path / "peer_jobs.csv").read_bytes() == (tmp_path / "sim_jobs.csv").read_bytes()
    peer, sim = (pd.read_csv(tmp_path / f"{name}_schedule.csv") for name in ("peer", "sim"))
    pd.testing.assert_frame_equal(peer.drop(columns=WALL_CLOCK), sim.drop(columns=WALL_CLOCK))
    assert (peer[WALL_CLOCK] > 0).all(axis=None)  # the scheduler's time is told, as Batsim does


@pytest.mark.slow
def test_the_summary_makespan_is_batsims(tmp_path):
    """The sample's first job comes at 21,657 s: the summary's makespan (from it) was not _schedule.csv's."""
    sample = REPO / "workloads" / "sample.json"
    assert main(["simulate", str(sample), "-e", str(tmp_path / "run"), "--no-progress"]) == 0
    metrics = json.loads((tmp_path / "run_summary.json").read_text())["metrics"]
    schedule = pd.read_csv(tmp_path / "run_schedule.csv")
    assert metrics["makespan"] == schedule["makespan"][0] == 3_059_789
    first = json.loads(sample.read_text())["jobs"][0]["subtime"]
    assert metrics["span"] == metrics["makespan"] - first
    assert metrics["utilisation"] == pytest.approx(schedule["time_computing"][0] / (128 * metrics["span"]))


def test_tau_in_a_config_file_says_where_it_goes(tmp_path, capsys):
    """The README listed --tau among the options a --config file takes; it is refused there, with a hint."""
    assert "a `--config` file does not take it" in USAGE
    config = tmp_path / "c.json"
    config.write_text('{"tau": 10}')
    assert main(["simulate", str(REPO / "workloads" / "sample.json"), "--config", str(config)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "unknown option(s) tau (tau is not a scheduling option: simulate takes --tau" in err


def test_the_trace_cache_default_is_told():
    """fetch-trace --cache-dir said 'default: see README' and the README did not say."""
    help_text = build_parser("fetch-trace")._subparsers._group_actions[0].choices["fetch-trace"].format_help()
    assert "see README" not in help_text and "$BATSIM_CLASSIFIER_SCHEDULER_CACHE" in help_text
    for text in (README, USAGE):
        assert "`$BATSIM_CLASSIFIER_SCHEDULER_CACHE`, else `$XDG_CACHE_HOME/batsim-classifier-scheduler`" in text


@pytest.mark.parametrize("path", sorted((REPO / "experiments").glob("*.json")), ids=lambda p: p.name)
def test_a_sweep_configs_description_counts_what_it_lists(path):
    """dev-traces.json said five variants and listed six."""
    config = json.loads(path.read_text())
    for count, what in re.findall(r"\b(\d+) (policies|variants|seeds|traces)\b", config.get("description", "")):
        assert int(count) == len(config[what]), f"{path.name}: {count} {what}"


def test_the_option_reference_lists_every_predictor():
    path = REPO / "docs" / "options.md"
    row = next(line for line in path.read_text().splitlines() if line.startswith("| `--predictor"))
    names = set(re.findall(r"one of ([^(]+)", row)[0].replace(",", " ").split())
    for name in registry.builtins("predictor"):
        assert name in names, name
