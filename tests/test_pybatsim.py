"""pybatsim 3.2.1 (installed with --no-deps) against our Batsim peer, and our scheduler inside pybatsim."""

import json
import shutil
import subprocess
import sys

import pandas as pd
import pytest

from batsim_classifier_scheduler.sim.simulate import simulate
from batsim_classifier_scheduler.config import SchedulerConfig
from batsim_classifier_scheduler.workloads import load_workload

from tests.helpers import REPO, SHARED
from tests.test_end_to_end import free_endpoint

pytest.importorskip("batsim.batsim", reason="pybatsim is not installed (pip install --no-deps pybatsim==3.2.1)")

TRANSCRIPTS = SHARED / "batsim-transcripts"
PYBATSIM = shutil.which("pybatsim", path=str(REPO / ".venv" / "bin")) or shutil.which("pybatsim")


def run_pair(scheduler_args, workload, platform, prefix, extra=()):
    endpoint = free_endpoint()
    pybatsim = subprocess.Popen([sys.executable, "-m", "batsim.cmds.launcher", *scheduler_args, "-s", endpoint,
                                 "-v", "warning"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        peer = subprocess.run([sys.executable, "-m", "batsim_classifier_scheduler", "batsim-peer", "-p", str(platform), "-w",
                               str(workload), "-e", str(prefix), "-s", endpoint.replace("127.0.0.1", "localhost"),
                               "--timeout", "60", *extra], capture_output=True, text=True, timeout=120)
        output, _ = pybatsim.communicate(timeout=60)
    finally:
        pybatsim.kill()
    assert peer.returncode == 0, peer.stderr
    assert pybatsim.returncode == 0, output
    return pd.read_csv(f"{prefix}_jobs.csv", dtype={"job_id": str})


@pytest.mark.skipif(not TRANSCRIPTS.is_dir(), reason="../shared/batsim-transcripts is not here")
def test_pybatsim_easy_backfill_runs_against_our_peer_as_against_batsim(tmp_path):
    inputs = TRANSCRIPTS / "inputs"
    ours = run_pair(["easyBackfill"], inputs / "example_workload_hpc_seed1_jobs250.json",
                    inputs / "cluster512.xml", tmp_path / "pyb", ["--mmax-workload"])
    real = pd.read_csv(TRANSCRIPTS / "easy-250" / "out_jobs.csv", dtype={"job_id": str})
    merged = ours.merge(real, on="job_id", suffixes=("", "_real"), validate="one_to_one")
    assert len(merged) == 250
    # same decisions; times differ only by the real platform's network latencies (ms)
    assert (merged.allocated_resources == merged.allocated_resources_real).all()
    assert (merged.final_state == merged.final_state_real).all()
    assert (merged.starting_time - merged.starting_time_real).abs().max() < 0.1


@pytest.mark.skipif(not TRANSCRIPTS.is_dir(), reason="../shared/batsim-transcripts is not here")
def test_decisions_stamped_in_the_future_apply_at_their_time(tmp_path):
    """pybatsim's fillerSched stamps each decision 5 ms after the previous one and replies with a later
    ``now``: Batsim sleeps until each timestamp. Against our peer every job starts as in the real run, all
    shifted by the same 2.4 ms of the real platform's latency before the first decision."""
    inputs = TRANSCRIPTS / "inputs"
    workload = json.loads((inputs / "test_walltime.json").read_text())
    # a 10 s parallel task on these hosts is a 10 s delay (only 'delay' profiles are simulated)
    workload["profiles"]["compute_only_10s"] = {"type": "delay", "delay": 10}
    (tmp_path / "walltime.json").write_text(json.dumps(workload))
    ours = run_pair(["fillerSched"], tmp_path / "walltime.json", inputs / "cluster512.xml", tmp_path / "filler",
                    ["--mmax-workload"])
    real = pd.read_csv(TRANSCRIPTS / "walltime" / "out_jobs.csv", dtype={"job_id": str})
    merged = ours.merge(real, on="job_id", suffixes=("", "_real"), validate="one_to_one")
    assert len(merged) == 44
    shift = merged.starting_time_real - merged.starting_time
    assert shift.min() == pytest.approx(0.0024, abs=1e-6) and shift.max() == pytest.approx(0.0024, abs=1e-6)
    assert (merged.allocated_resources == merged.allocated_resources_real).all()
    # only job 1010 differs: a parallel task that takes exactly its walltime succeeds, a delay is killed
    differs = merged[merged.final_state != merged.final_state_real]
    assert list(differs.job_id) == ["1010"]


def test_our_scheduler_runs_inside_pybatsim(tmp_path):
    import batsim_classifier_scheduler.batsim.pybatsimAdapter as adapter

    workload = REPO / "workloads" / "sample.json"
    ours = run_pair([adapter.__file__, "-o", '{"policy": "saf"}'], workload, REPO / "platforms" / "sdsc_sp2.xml",
                    tmp_path / "adapter")
    local, _ = simulate(load_workload(workload), SchedulerConfig(policy="saf"))
    assert list(ours.starting_time) == list(local.jobs.starting_time)
    assert list(ours.allocated_resources) == list(local.jobs.allocated_resources)
