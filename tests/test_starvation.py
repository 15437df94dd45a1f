"""The starvation threshold in whole simulations: within each queue (the default) it keeps Q_small ahead of Q,
ahead of every queue it does not."""

import pytest

from batsim_classifier_scheduler.config import SchedulerConfig
from batsim_classifier_scheduler.sim.simulate import simulate
from batsim_classifier_scheduler.workloads import load_workload

from tests.helpers import REPO

HOUR = 3600.0


@pytest.fixture(scope="module")
def sample():
    return load_workload(REPO / "workloads" / "sample.json")


def jobs(workload, **options):
    result, _ = simulate(workload, SchedulerConfig.variant("class-clairvoyant", **options))
    return result.jobs


def small_jobs_mean_wait(table):
    return table.loc[table["metadata"] == "class=small", "waiting_time"].mean()


@pytest.mark.slow
def test_within_each_queue_the_threshold_changes_nothing_under_fcfs(sample):
    # the oldest job of each queue heads it already, so starving jobs are where they were
    plain = jobs(sample, policy="fcfs")
    assert jobs(sample, policy="fcfs", starvation_threshold=HOUR).equals(plain)
    # ahead of every queue, old large jobs pass the small ones, which then wait longer
    everywhere = jobs(sample, policy="fcfs", starvation_threshold=HOUR, starvation_scope="all")
    assert not everywhere.equals(plain)
    assert small_jobs_mean_wait(everywhere) > 1.5 * small_jobs_mean_wait(plain)


@pytest.mark.slow
def test_within_each_queue_the_threshold_bounds_spf_without_undoing_the_classes(sample):
    plain = jobs(sample, policy="spf")
    queue = jobs(sample, policy="spf", starvation_threshold=6 * HOUR)
    everywhere = jobs(sample, policy="spf", starvation_threshold=6 * HOUR, starvation_scope="all")
    large = plain["metadata"] == "class=large"
    # the large jobs' longest wait is shorter with the threshold
    assert queue.loc[large, "waiting_time"].max() < plain.loc[large, "waiting_time"].max()
    # and the small jobs keep most of their priority, which the threshold ahead of every queue takes away
    assert small_jobs_mean_wait(queue) < small_jobs_mean_wait(everywhere)
