"""Our EASY-FCFS against real Batsim 4.2.1 + batsched ``easy_bf`` on the full KTH-SP2 trace."""

import gzip

import pandas as pd
import pytest

from scheduler.config import SchedulerConfig
from scheduler.platforms import read_platform
from scheduler.sim.output import write_jobs_csv
from scheduler.sim.simulate import simulate
from scheduler.workloads import load_workload

from tests.helpers import SHARED

REFERENCE = SHARED / "reference-schedules" / "KTH-SP2"

pytestmark = pytest.mark.skipif(not REFERENCE.is_dir(), reason="../shared/reference-schedules is not here")


@pytest.fixture(scope="module")
def ours():
    workload = load_workload(REFERENCE / "workload.json.gz")
    nb_machines = read_platform(REFERENCE / "platform.xml").nb_compute_hosts
    result, _ = simulate(workload, SchedulerConfig(policy="fcfs"), nb_machines)
    return result.jobs


@pytest.fixture(scope="module")
def runs(ours):
    reference = pd.read_csv(REFERENCE / "batsched_easy_bf_jobs.csv.gz", dtype={"job_id": str})
    return ours.merge(reference, on="job_id", suffixes=("", "_ref"), validate="one_to_one")


def first_difference(merged, column):
    different = merged[merged[column] != merged[f"{column}_ref"]].sort_values("starting_time_ref")
    if different.empty:
        return None
    row = different.iloc[0]
    return f"{len(different)} jobs differ; first: job {row.job_id}: ours {row[column]!r}, batsched {row[column + '_ref']!r}"


def test_every_job_is_in_both_schedules(runs):
    assert len(runs) == 28467


def test_starting_times_match_batsched_for_every_job(runs):
    assert first_difference(runs, "starting_time") is None


def test_final_states_match_including_strict_walltime_kills(runs):
    assert first_difference(runs, "final_state") is None
    assert (runs.final_state == "COMPLETED_WALLTIME_REACHED").sum() == 513


def test_allocations_match_machine_for_machine(runs):
    assert first_difference(runs, "allocated_resources") is None


def test_our_jobs_csv_is_byte_identical_to_batsims(ours, tmp_path):
    write_jobs_csv(tmp_path / "ours_jobs.csv", ours)
    with gzip.open(REFERENCE / "batsched_easy_bf_jobs.csv.gz", "rb") as reference:
        assert (tmp_path / "ours_jobs.csv").read_bytes() == reference.read()
