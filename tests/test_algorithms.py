"""Scheduling algorithms behind one interface: EASY backfilling, batsched's easy_bf_fast, conservative
backfilling, strict queue order (``fcfs``) and filler; the paper's method under each of them."""

import pytest
from hypothesis import given, settings

from batsim_classifier_scheduler import registry
from batsim_classifier_scheduler.cli import build_parser
from batsim_classifier_scheduler.cli.options import config_from_args
from batsim_classifier_scheduler.compose import build_core
from batsim_classifier_scheduler.config import SchedulerConfig
from batsim_classifier_scheduler.core.messages import JobSubmitted, SimulationBegins
from batsim_classifier_scheduler.core.filler import Filler
from batsim_classifier_scheduler.core.job import Job
from batsim_classifier_scheduler.core.machines import from_interval_string
from batsim_classifier_scheduler.errors import ConfigError
from batsim_classifier_scheduler.sim.peer import run_peer
from batsim_classifier_scheduler.sim.simulate import simulate
from batsim_classifier_scheduler.workloads.synthetic import generate

from tests.helpers import make_workload
from tests.test_easy_properties import workloads
from tests.test_end_to_end import free_endpoint, serve_in_thread
from tests.test_safeguard import run as run_classified

# job 0 holds 3 of 4 machines until 100; job 1 (4 machines) must wait for it; job 2 (1 machine, 10 s)
# fits in the hole: EASY backfills it at 2, strict order keeps it behind job 1.
HOLE = [(0, 3, 100, 100), (1, 4, 100, 50), (2, 1, 10, 10)]

ALGORITHMS = {name: registry.target("algorithm", name) for name in registry.builtins("algorithm")}


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


@pytest.mark.slow
@settings(max_examples=100, deadline=None)
@given(workloads())
def test_fcfs_starts_jobs_in_submission_order(workload):
    result, _ = simulate(workload, SchedulerConfig(algorithm="fcfs"))
    jobs = result.jobs.sort_values(["submission_time", "job_id"])  # FCFS ties: ids compared as strings
    assert jobs.starting_time.is_monotonic_increasing
    assert (jobs.starting_time >= jobs.submission_time).all()


@pytest.mark.slow
@pytest.mark.parametrize("algorithm", ALGORITHMS)
@pytest.mark.parametrize("options", [{}, {"predictor": "ave2", "correction": "incremental"},
                                     {"probe_threshold": 0.02, "divider_estimates": "all"}],
                         ids=["idempotent", "idempotent-ave2", "probing"])
def test_classes_safeguard_and_predictions_work_with_every_algorithm(algorithm, options):
    workload = generate(600, weeks=2, nb_res=16, seed=3)
    config = SchedulerConfig.variant("classification-idempotent", algorithm=algorithm, **options)
    result, core = simulate(workload, config)
    outcome = core.outcome()
    assert outcome.classifier["nb_small"] > 0 and outcome.classifier["kills"] > 0
    assert outcome.predictions is None or outcome.predictions["nb_jobs"] > 0
    assert outcome.accounting["completed"] == len(workload)
    assert len(result.jobs) == len(workload) + outcome.classifier["kills"]
    check_capacity(result.jobs, 16)


def check_capacity(jobs, nb_res):
    """Every job runs on machines of the platform, no machine runs two jobs at once."""
    ends = [(end, 0, text) for end, text in zip(jobs.finish_time, jobs.allocated_resources)]
    busy = 0
    for _, starting, text in sorted(ends + [(start, 1, text) for start, text in zip(jobs.starting_time,
                                                                                    jobs.allocated_resources)]):
        mask = from_interval_string(text)
        assert 0 < mask < 1 << nb_res
        if starting:
            assert not busy & mask
        busy = busy | mask if starting else busy & ~mask


# job 0 holds the one machine until 50 (asking 100 s); large job 1 and small job 2 (asking 40 s) wait
OVERTAKE = [(0, 1, 100, 50), (1, 1, 100, 5), (2, 1, 40, 5)]


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_q_small_stays_ahead_under_every_algorithm(algorithm):
    config = SchedulerConfig(algorithm=algorithm, classifier="oracle")
    result, *_ = run_classified(OVERTAKE, 1, {"w0!2"}, config)
    assert starts(result) == {"0": 0, "2": 50, "1": 55}
    result, _ = simulate(make_workload(OVERTAKE, nb_res=1), SchedulerConfig(algorithm=algorithm))
    assert starts(result) == {"0": 0, "1": 50, "2": 55}  # without classes, in submission order


@pytest.mark.parametrize("algorithm", [name for name, cls in ALGORITHMS.items() if cls is not Filler])
@pytest.mark.parametrize("divider_estimates", ["none", "running"])
def test_every_algorithm_plans_a_watched_job_within_the_divider(algorithm, divider_estimates):
    # small job 0 runs on one of two machines asking 100 s (the safeguard would kill it at 10, it ends at 8);
    # large job 1 needs both machines: planned from the bound, it starts at 10, so job 2 (one machine, 20 s)
    # cannot start at 2 without delaying it; planned from p̃ (100 s), it can (but not under strict order)
    config = SchedulerConfig(algorithm=algorithm, classifier="oracle", safeguard="kill",
                             divider_estimates=divider_estimates)
    result, *_ = run_classified([(0, 1, 100, 8), (1, 2, 100, 5), (2, 1, 20, 5)], 2, {"w0!0"}, config)
    backfills = divider_estimates == "none" and algorithm != "fcfs"
    assert starts(result) == {"0": 0, "1": 8, "2": 2 if backfills else 13}


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_every_algorithm_answers_waiting_time_queries(algorithm):
    core = build_core(SchedulerConfig(algorithm=algorithm))
    core.decide(0.0, [SimulationBegins(0.0, 4, {})])
    core.decide(0.0, [JobSubmitted(0.0, Job("w0!0", 0.0, 3, 100.0))])
    assert core.estimate_waiting_time(Job("w0!q", 0.0, 2, 10.0), 5.0) == 95.0
    assert core.estimate_waiting_time(Job("w0!q", 0.0, 1, 10.0), 5.0) == 0.0


def test_easy_bf_fast_backfills_only_jobs_that_end_by_the_priority_jobs_start():
    # job 1 (3 of 4 machines) expects to start at 100; job 2 (one machine, 200 s) would leave it the three
    # machines it needs: EASY backfills it, easy_bf_fast does not, as it ends after 100
    workload = make_workload([(0, 2, 100, 100), (1, 3, 100, 100), (2, 1, 200, 200)], nb_res=4)
    assert starts(simulate(workload, SchedulerConfig(algorithm="easy"))[0]) == {"0": 0, "1": 100, "2": 2}
    assert starts(simulate(workload, SchedulerConfig(algorithm="easy_bf_fast"))[0]) == {"0": 0, "1": 100, "2": 100}


def test_easy_bf_fast_keeps_the_priority_jobs_first_expected_start():
    # job 0 ends at 10 instead of 100; job 1 (all 4 machines) was expected at 100 and keeps that start, so job 3
    # (90 s) still backfills at 10 and delays it to 100; EASY moves job 1's reservation to 82 (job 2's end)
    workload = make_workload([(0, 2, 100, 10), (1, 4, 100, 100), (2, 2, 80, 80), (3, 2, 90, 90)], nb_res=4)
    assert starts(simulate(workload, SchedulerConfig(algorithm="easy_bf_fast"))[0]) == \
        {"0": 0, "1": 100, "2": 2, "3": 10}
    assert starts(simulate(workload, SchedulerConfig(algorithm="easy"))[0]) == {"0": 0, "1": 82, "2": 2, "3": 182}


def test_filler_starts_whatever_fits_and_reserves_nothing():
    # job 1 needs both machines; filler starts the long job 2 beside job 0, EASY keeps job 1's reservation
    workload = make_workload([(0, 1, 10, 10), (1, 2, 10, 10), (2, 1, 100, 100)], nb_res=2)
    assert starts(simulate(workload, SchedulerConfig(algorithm="filler"))[0]) == {"0": 0, "1": 102, "2": 2}
    assert starts(simulate(workload, SchedulerConfig(algorithm="easy"))[0]) == {"0": 0, "1": 10, "2": 20}


@pytest.mark.slow
@pytest.mark.parametrize("algorithm", [name for name in ALGORITHMS if name != "easy"])
def test_served_algorithms_equal_the_in_process_run(algorithm):
    workload = generate(300, weeks=0.5, nb_res=16, seed=7)
    endpoint = free_endpoint()
    thread, served = serve_in_thread(endpoint, {"algorithm": algorithm, "policy": "saf"})
    remote = run_peer(workload, endpoint, timeout=60)
    thread.join(timeout=60)
    assert "error" not in served, served.get("error")
    local, _ = simulate(workload, SchedulerConfig(algorithm=algorithm, policy="saf"))
    assert remote.jobs.equals(local.jobs)
    assert not local.jobs.equals(simulate(workload, SchedulerConfig(policy="saf"))[0].jobs)


def test_names_and_flags():
    assert set(ALGORITHMS) == {"easy", "easy_bf_fast", "conservative_bf", "fcfs", "filler"}
    batsched = {"easy_bf": "easy", "easy_bf_fast": "easy_bf_fast", "conservative_bf": "conservative_bf",
                "fcfs": "fcfs", "fcfs_fast": "fcfs", "filler": "filler"}
    assert {name: registry.canonical("algorithm", name.upper()) for name in batsched} == batsched
    args = build_parser().parse_args(["serve", "-v", "conservative_bf", "-o", "asc_walltime"])
    assert (config_from_args(args).algorithm, config_from_args(args).policy) == ("conservative_bf", "spf")
    with pytest.raises(ConfigError, match="unknown algorithm 'conservative'"):
        SchedulerConfig(algorithm="conservative")
    assert SchedulerConfig(algorithm="easy_bf_fast", backfill_order="spf").backfill_order == "spf"
    for name in ("fcfs", "conservative_bf", "filler"):
        with pytest.raises(ConfigError, match=f"backfill_order: algorithm '{name}' takes its jobs in queue order"):
            SchedulerConfig(algorithm=name, backfill_order="spf")
