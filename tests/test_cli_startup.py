"""A lean start: a command imports only its own module, and ``serve`` for EASY needs none of the
heavy libraries (scikit-learn, pandas, numpy, matplotlib, tqdm)."""

from __future__ import annotations

import argparse
import importlib
import subprocess
import sys

from batsim_classifier_scheduler.cli import COMMANDS

from tests.helpers import DATA, REPO

HEAVY = ("sklearn", "pandas", "numpy", "matplotlib", "tqdm", "scipy")


def test_the_command_table_lists_what_each_module_registers():
    for module, commands in COMMANDS.items():
        subparsers = argparse.ArgumentParser().add_subparsers()
        importlib.import_module(f"batsim_classifier_scheduler.cli.{module}").register(subparsers)
        assert tuple(subparsers.choices) == commands


SERVE_EASY = f"""
import sys
from batsim_classifier_scheduler.cli import build_parser
from batsim_classifier_scheduler.batsim import SchedulerCodec
from batsim_classifier_scheduler.batsim.server import DecisionServer
from batsim_classifier_scheduler.compose import build_core
from batsim_classifier_scheduler.cli.batsim import run_serve

args = build_parser("serve").parse_args(["serve", "--policy", "spf"])
server = DecisionServer(options={{}}, overrides={{"policy": args.policy}})
codec = SchedulerCodec()
now, events = codec.decode(b'{{"now": 0, "events": [{{"timestamp": 0, "type": "SIMULATION_BEGINS", '
                           b'"data": {{"nb_resources": 4, "config": {{}}}}}}, {{"timestamp": 0, '
                           b'"type": "JOB_SUBMITTED", "data": {{"job_id": "w0!1", "job": {{"id": 1, '
                           b'"subtime": 0, "res": 2, "walltime": 10, "profile": "p"}}}}}}]}}')
config = server._config(events, 0)
assert config.policy == "spf"
core = build_core(config)
print(codec.encode(now, core.decide(now, events)).decode())
print(" ".join(sorted({{name.split(".")[0] for name in sys.modules}} & set({HEAVY!r}))))
"""


def test_serve_for_easy_imports_no_heavy_library():
    out = subprocess.run([sys.executable, "-c", SERVE_EASY], cwd=REPO, capture_output=True, text=True, check=True)
    reply, heavy = out.stdout.splitlines()
    assert '"EXECUTE_JOB"' in reply
    assert heavy == ""


SIMULATE_BASE = f"""
import sys
from batsim_classifier_scheduler.cli import main
workload, prefix = sys.argv[1:]
sys.argv = ["simulate", "simulate", workload, "--no-progress", "-e", prefix]
main()
print("heavy:", " ".join(sorted({{name.split(".")[0] for name in sys.modules}} & (set({HEAVY!r}) - {{"numpy"}}))))
"""


def test_simulate_base_of_an_swf_trace_imports_no_pandas(tmp_path):
    """pandas' import costs more than simulating a trace of 30,000 jobs for EASY; numpy reads the trace."""
    out = subprocess.run([sys.executable, "-c", SIMULATE_BASE, str(DATA / "tiny.swf"), str(tmp_path / "run")],
                         cwd=REPO, capture_output=True, text=True, check=True)
    assert out.stdout.splitlines()[-1] == "heavy: "
    assert (tmp_path / "run_jobs.csv").exists()
