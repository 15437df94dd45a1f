"""Property tests of EASY backfilling on random small workloads."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from batsim_classifier_scheduler.compose import build_core
from batsim_classifier_scheduler.config import SchedulerConfig
from batsim_classifier_scheduler.sim.engine import BatsimEngine

from tests.helpers import make_workload

NB_MACHINES = 6


@st.composite
def workloads(draw):
    n = draw(st.integers(1, 14))
    jobs = []
    for _ in range(n):
        subtime = draw(st.integers(0, 40))
        res = draw(st.integers(1, NB_MACHINES))
        walltime = draw(st.integers(1, 30))
        runtime = draw(st.integers(1, 35))  # some jobs reach their walltime
        jobs.append((subtime, res, walltime, runtime))
    return make_workload(jobs, NB_MACHINES)


class ReservationLog:
    """Wraps a decision core and records, after each decision, the reserved job and time."""

    def __init__(self, core):
        self.core = core
        self.reservations = {}  # job id -> list of reservation starts

    def __call__(self, now, events):
        decisions = self.core.decide(now, events)
        easy = self.core.algorithm
        if easy is not None and easy.profile.reservation is not None:
            resv = easy.profile.reservation
            self.reservations.setdefault(resv.job_id, []).append(resv.start)
        return decisions


def run(workload, config):
    core = build_core(config)
    log = ReservationLog(core)
    result = BatsimEngine(workload).run(log)
    return result, log


def check_schedule(workload, result):
    jobs = result.jobs
    # every job ends exactly once
    assert sorted(jobs.job_id) == sorted(workload.jobs.id)
    assert not result.unfinished
    # no job starts before its submission
    assert (jobs.starting_time >= jobs.submission_time).all()
    # capacity is never exceeded: sweep the start/finish events
    events = sorted([(t, +q) for t, q in zip(jobs.starting_time, jobs.requested_number_of_resources)]
                    + [(t, -q) for t, q in zip(jobs.finish_time, jobs.requested_number_of_resources)],
                    key=lambda e: (e[0], e[1]))
    used = 0
    for _, delta in events:
        used += delta
        assert used <= NB_MACHINES


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(workloads(), st.sampled_from(["requested", "clairvoyant"]))
def test_easy_fcfs_never_delays_a_reservation(workload, estimates):
    result, log = run(workload, SchedulerConfig(policy="fcfs", estimates=estimates))
    check_schedule(workload, result)
    starts = dict(zip("w0!" + result.jobs.job_id, result.jobs.starting_time))
    for job_id, reserved in log.reservations.items():
        # estimates never under-estimate here, so a reservation only ever moves earlier
        assert starts[job_id] <= min(reserved) + 1e-9
        assert reserved == sorted(reserved, reverse=True)


@pytest.mark.slow
@settings(max_examples=100, deadline=None)
@given(workloads(), st.sampled_from(["spf", "saf", "sqf", "wfp", "lpf"]),
       st.sampled_from([None, 20.0]))
def test_every_policy_gives_a_valid_schedule(workload, policy, threshold):
    result, _ = run(workload, SchedulerConfig(policy=policy, starvation_threshold=threshold))
    check_schedule(workload, result)


@pytest.mark.slow
@settings(max_examples=60, deadline=None)
@given(workloads())
def test_runs_are_deterministic(workload):
    first, _ = run(workload, SchedulerConfig(policy="wfp"))
    second, _ = run(workload, SchedulerConfig(policy="wfp"))
    assert first.jobs.equals(second.jobs)
