"""Our algorithms against real Batsim 4.2.1 + batsched 1.4.0 on the full KTH-SP2 trace: one test per
batsched algorithm and queue order of ``../shared/reference-schedules/KTH-SP2``, job for job (start,
finish, final state, machines)."""

import gzip
import re

import pandas as pd
import pytest

from batsim_classifier_scheduler.config import SchedulerConfig
from batsim_classifier_scheduler.platforms import read_platform
from batsim_classifier_scheduler.sim.batsim_files import write_jobs_csv
from batsim_classifier_scheduler.sim.simulate import simulate
from batsim_classifier_scheduler.workloads import load_workload

from tests.helpers import SHARED

REFERENCE = SHARED / "reference-schedules" / "KTH-SP2"
#: batsched's algorithms, longest first (their names share prefixes).
BATSCHED_ALGORITHMS = ("conservative_bf", "easy_bf_fast", "fcfs_fast", "easy_bf", "filler", "fcfs")

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(not REFERENCE.is_dir(), reason="../shared/reference-schedules is not here")]


def reference_runs() -> list[tuple[str, str, str]]:
    """(algorithm, order, file) of every reference run; a file without an order ran FCFS."""
    runs = []
    for path in sorted(REFERENCE.glob("batsched_*_jobs.csv.gz")) if REFERENCE.is_dir() else []:
        name = re.fullmatch(r"batsched_(.+)_jobs\.csv\.gz", path.name).group(1)
        algorithm = next(a for a in BATSCHED_ALGORITHMS if name == a or name.startswith(a + "_"))
        runs.append((algorithm, name[len(algorithm) + 1:] or "fcfs", path.name))
    return runs


RUNS = reference_runs()


@pytest.fixture(scope="module")
def kth():
    return load_workload(REFERENCE / "workload.json.gz"), read_platform(REFERENCE / "platform.xml").nb_compute_hosts


#: The runs made so far, by config: several reference runs are one config of ours (batsched's desc_slowdown and
#: desc_bounded_slowdown are its FCFS order, fcfs_fast is fcfs), and three tests read easy_bf with FCFS.
_RUNS: dict[str, pd.DataFrame] = {}


def run(kth, algorithm: str, order: str) -> pd.DataFrame:
    """Our jobs table of ``algorithm`` under ``order`` on the trace, simulated once per config (read-only)."""
    workload, nb_machines = kth
    config = SchedulerConfig(algorithm=algorithm, policy=order)
    if repr(config) not in _RUNS:
        _RUNS[repr(config)] = simulate(workload, config, nb_machines)[0].jobs
    return _RUNS[repr(config)]


def first_difference(merged: pd.DataFrame, column: str) -> str | None:
    different = merged[merged[column] != merged[f"{column}_ref"]].sort_values("starting_time_ref")
    if different.empty:
        return None
    row = different.iloc[0]
    return f"{len(different)} jobs differ; first: job {row.job_id}: ours {row[column]!r}, batsched {row[column + '_ref']!r}"


def test_every_reference_run_is_covered():
    assert len(RUNS) == 14 or not REFERENCE.is_dir()


@pytest.mark.parametrize("algorithm, order, file", RUNS, ids=[f"{a}-{o}" for a, o, _ in RUNS])
def test_same_schedule_as_batsched(kth, algorithm, order, file):
    reference = pd.read_csv(REFERENCE / file, dtype={"job_id": str})
    merged = run(kth, algorithm, order).merge(reference, on="job_id", suffixes=("", "_ref"), validate="one_to_one")
    assert len(merged) == len(reference) == 28467
    for column in ("starting_time", "finish_time", "final_state", "allocated_resources"):
        assert first_difference(merged, column) is None, column


def test_strict_walltime_kills(kth):
    jobs = run(kth, "easy_bf", "fcfs")
    assert (jobs.final_state == "COMPLETED_WALLTIME_REACHED").sum() == 513


def test_our_jobs_csv_is_byte_identical_to_batsims(kth, tmp_path):
    write_jobs_csv(tmp_path / "ours_jobs.csv", run(kth, "easy_bf", "fcfs"))
    with gzip.open(REFERENCE / "batsched_easy_bf_jobs.csv.gz", "rb") as reference:
        assert (tmp_path / "ours_jobs.csv").read_bytes() == reference.read()
