"""EASY's pass over the jobs the reservation leaves a chance (``JobQueue.backfill_candidates``) starts what the pass
over the whole queue starts."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from batsim_classifier_scheduler.compose import build_core
from batsim_classifier_scheduler.config import SchedulerConfig
from batsim_classifier_scheduler.core.queue import JobQueue
from batsim_classifier_scheduler.sim.engine import BatsimEngine

from tests.helpers import make_workload

NB_MACHINES = 12


@st.composite
def busy_workloads(draw):
    """Many jobs on a few machines: long queues, reservations, and jobs short or narrow enough to backfill."""
    jobs = []
    for _ in range(draw(st.integers(5, 40))):
        subtime = draw(st.integers(0, 60))
        res = draw(st.sampled_from([1, 1, 1, 2, 3, 4, 6, 8, 12]))
        walltime = draw(st.integers(1, 40))
        runtime = draw(st.integers(1, 45))
        jobs.append((subtime, res, walltime, runtime))
    return make_workload(jobs, NB_MACHINES)


def schedule(workload, config):
    return BatsimEngine(workload).run(build_core(config).decide).jobs.sort_values("job_id").reset_index(drop=True)


@settings(max_examples=60, deadline=None)
@given(busy_workloads(), st.sampled_from(["fcfs", "spf", "saf", "lpf"]),
       st.sampled_from([{}, {"starvation_threshold": 20.0}]), st.sampled_from([(1, 0), (6, 3), (12, 2)]))
def test_the_pass_over_candidates_starts_what_the_pass_over_the_queue_starts(workload, policy, starvation,
                                                                             index) -> None:
    """With the width index kept from the first job on, or built and dropped as the queue grows and shrinks past
    small thresholds (``JobQueue.INDEX_FROM``, ``INDEX_UNTIL``), EASY starts what it starts walking the queue."""
    config = SchedulerConfig(policy=policy, **starvation)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(JobQueue, "backfill_candidates", lambda *args: None)  # the whole queue, job by job
        expected = schedule(workload, config)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(JobQueue, "INDEX_FROM", index[0])
        patch.setattr(JobQueue, "INDEX_UNTIL", index[1])
        assert schedule(workload, config).equals(expected)
    assert schedule(workload, config).equals(expected)  # (the thresholds of a run: a short queue, no index)
