"""Scheduling algorithms behind one interface: EASY backfilling and strict queue order (``fcfs``)."""

import pytest
from hypothesis import given, settings

from scheduler.cli import build_parser
from scheduler.cli.options import config_from_args
from scheduler.config import SchedulerConfig
from scheduler.core.algorithms import ALGORITHMS, algorithm_name
from scheduler.errors import ConfigError
from scheduler.sim.peer import run_peer
from scheduler.sim.simulate import simulate
from scheduler.workloads.synthetic import generate

from tests.helpers import make_workload
from tests.test_easy_properties import workloads
from tests.test_end_to_end import free_endpoint, serve_in_thread

# job 0 holds 3 of 4 machines until 100; job 1 (4 machines) must wait for it; job 2 (1 machine, 10 s)
# fits in the hole: EASY backfills it at 2, strict order keeps it behind job 1.
HOLE = [(0, 3, 100, 100), (1, 4, 100, 50), (2, 1, 10, 10)]


def starts(result):
    return dict(zip(result.jobs.job_id, result.jobs.starting_time))


def test_easy_backfills_and_fcfs_does_not():
    workload = make_workload(HOLE, nb_res=4)
    assert starts(simulate(workload, SchedulerConfig())[0]) == {"0": 0, "1": 100, "2": 2}
    assert starts(simulate(workload, SchedulerConfig(algorithm="fcfs"))[0]) == {"0": 0, "1": 100, "2": 150}


def test_fcfs_keeps_the_order_of_any_policy():
    # SPF puts the short job 2 ahead of job 1 in the queue: it starts first, and nothing else jumps
    workload = make_workload([(0, 4, 100, 100), (1, 4, 500, 50), (2, 4, 20, 10), (3, 4, 30, 10)], nb_res=4)
    result, _ = simulate(workload, SchedulerConfig(algorithm="fcfs", policy="spf"))
    assert starts(result) == {"0": 0, "2": 100, "3": 110, "1": 120}


@settings(max_examples=100, deadline=None)
@given(workloads())
def test_fcfs_starts_jobs_in_submission_order(workload):
    result, _ = simulate(workload, SchedulerConfig(algorithm="fcfs"))
    jobs = result.jobs.sort_values(["submission_time", "job_id"])  # FCFS ties: ids compared as strings
    assert jobs.starting_time.is_monotonic_increasing
    assert (jobs.starting_time >= jobs.submission_time).all()


def test_classes_safeguard_and_predictions_work_with_fcfs():
    workload = generate(600, weeks=2, nb_res=16, seed=3)
    config = SchedulerConfig.variant("classification-idempotent", algorithm="fcfs", predictor="ave2",
                                     correction="incremental")
    result, core = simulate(workload, config)
    outcome = core.outcome()
    assert outcome.classifier["nb_small"] > 0 and outcome.classifier["kills"] > 0 and outcome.predictions["nb_jobs"] > 0
    assert outcome.accounting["completed"] == len(workload)
    assert len(result.jobs) == len(workload) + outcome.classifier["kills"]


def test_served_fcfs_equals_the_in_process_run():
    workload = generate(300, weeks=0.5, nb_res=16, seed=7)
    endpoint = free_endpoint()
    thread, served = serve_in_thread(endpoint, {"algorithm": "fcfs", "policy": "saf"})
    remote = run_peer(workload, endpoint, timeout=60)
    thread.join(timeout=60)
    assert "error" not in served, served.get("error")
    local, _ = simulate(workload, SchedulerConfig(algorithm="fcfs", policy="saf"))
    assert remote.jobs.equals(local.jobs)
    assert not local.jobs.equals(simulate(workload, SchedulerConfig(policy="saf"))[0].jobs)


def test_names_and_flags():
    assert set(ALGORITHMS) == {"easy", "fcfs"}
    assert algorithm_name("EASY_BF") == "easy"
    args = build_parser().parse_args(["serve", "-v", "easy_bf", "-o", "asc_walltime"])
    assert (config_from_args(args).algorithm, config_from_args(args).policy) == ("easy", "spf")
    with pytest.raises(ConfigError, match="unknown algorithm 'conservative'"):
        SchedulerConfig(algorithm="conservative")
    with pytest.raises(ConfigError, match="backfill_order: algorithm 'fcfs' does not backfill"):
        SchedulerConfig(algorithm="fcfs", backfill_order="spf")
