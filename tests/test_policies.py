from batsim_classifier_scheduler.config import SchedulerConfig
from batsim_classifier_scheduler.core.job import Job
from batsim_classifier_scheduler.core.policies import get_policy
from batsim_classifier_scheduler.core.queue import JobQueue
from batsim_classifier_scheduler.errors import ConfigError

import pytest


def job(job_id, subtime, res, walltime):
    return Job(f"w0!{job_id}", subtime, res, walltime)


JOBS = [job("a", 0, 4, 100), job("b", 10, 1, 1000), job("c", 20, 2, 10), job("d", 30, 8, 50)]


def order(policy, now=100.0, jobs=JOBS, threshold=None):
    queue = JobQueue(get_policy(policy), threshold)
    for j in jobs:
        queue.push(j, j.walltime, now=j.subtime)
    return [j.id[3:] for j in queue.ordered(now)]


def test_fcfs_orders_by_submission():
    assert order("fcfs") == ["a", "b", "c", "d"]


def test_spf_orders_by_estimate():
    assert order("spf") == ["c", "d", "a", "b"]


def test_saf_orders_by_area():
    # areas: a 400, b 1000, c 20, d 400 -> ties broken by submission time
    assert order("saf") == ["c", "a", "d", "b"]


def test_sqf_orders_by_processors():
    assert order("sqf") == ["b", "c", "a", "d"]


def test_wfp_favours_long_waits_relative_to_estimates():
    # (wait/p)^3 * q at t=100: a (1)^3*4=4, b (0.09)^3*1, c (8)^3*2=1024, d (1.4)^3*8=21.9
    assert order("wfp") == ["c", "d", "a", "b"]
    # later, ratios change: at t=1000 a=(10)^3*4=4000, c=(98)^3*2, d=(19.4)^3*8
    assert order("wfp", now=1000.0)[0] == "c"


def test_ties_break_by_submission_then_id():
    same = [job("2", 5, 1, 10), job("10", 5, 1, 10), job("1", 0, 1, 10)]
    # batsched compares ids as strings: "w0!10" < "w0!2"
    assert order("spf", jobs=same) == ["1", "10", "2"]


def test_starving_jobs_jump_to_the_head_oldest_first():
    # at t=100 with a 75 s threshold, a (waited 100) and b (90) starve
    assert order("spf", threshold=75) == ["a", "b", "c", "d"]
    assert order("spf", threshold=85, now=100.0)[:2] == ["a", "b"]
    assert order("spf", threshold=95, now=100.0)[:2] == ["a", "c"]


@pytest.mark.parametrize("policy", ["spf", "wfp"])
def test_a_starving_job_heads_its_own_queue_or_every_queue(policy):
    # a and c in Q_small (rank 0), b and d in Q (rank 1); at t=100 with a 75 s threshold a and b starve
    def ordered(scope):
        queue = JobQueue(get_policy(policy), 75, scope)
        for rank, j in zip([0, 1, 0, 1], JOBS):
            queue.push(j, j.walltime, rank=rank, now=j.subtime)
        ids = [j.id[3:] for j in queue.ordered(100.0)]
        assert queue.head(100.0).id[3:] == ids[0]
        assert [j.id[3:] for j in queue.ordered_within(100.0, 2)] == [i for i in ids if i in "bc"]
        return ids

    assert ordered("queue") == ["a", "c", "b", "d"]  # Q_small stays ahead of Q
    assert ordered("all") == ["a", "b", "c", "d"]


def test_starving_in_its_queue_changes_nothing_under_fcfs():
    # the oldest job of each queue already heads it
    for threshold in (None, 5, 75):
        queue = JobQueue(get_policy("fcfs"), threshold, "queue")
        for rank, j in zip([1, 0, 1, 0], JOBS):
            queue.push(j, j.walltime, rank=rank, now=j.subtime)
        assert [j.id[3:] for j in queue.ordered(100.0)] == ["b", "d", "a", "c"]


def test_a_starvation_scope_needs_a_known_name_and_a_threshold():
    with pytest.raises(ValueError, match="starvation_scope"):
        JobQueue(get_policy("fcfs"), 75, "global")
    with pytest.raises(ConfigError, match="starvation_scope 'all': .*starvation_threshold"):
        SchedulerConfig(starvation_scope="all")
    assert SchedulerConfig(starvation_scope="all", starvation_threshold=60).starvation_scope == "all"


def test_queue_remove_keeps_order():
    queue = JobQueue(get_policy("saf"))
    for j in JOBS:
        queue.push(j, j.walltime)
    queue.remove(JOBS[0])
    assert [j.id for j in queue.ordered(0)] == ["w0!c", "w0!d", "w0!b"]
    assert queue.head(0).id == "w0!c"
    assert len(queue) == 3 and JOBS[0] not in queue


@pytest.mark.parametrize("policy, threshold", [("saf", None), ("fcfs", 75), ("wfp", None)])
def test_queue_ordered_within_a_width_is_the_order_less_the_wider_jobs(policy, threshold):
    # static (kept widths, with ranks and a removal), starving, and dynamic (re-sorted) queues
    queue = JobQueue(get_policy(policy), threshold)
    for rank, j in zip([1, 0, 1, 0], JOBS):
        queue.push(j, j.walltime, rank=rank, now=j.subtime)
    queue.remove(JOBS[2])
    queue.push(JOBS[2], 5.0, rank=0, now=50.0)
    for width in (0, 1, 3, 4, 8):
        expected = [j for j in queue.ordered(100.0) if j.res <= width]
        assert queue.ordered_within(100.0, width) == expected
        assert all(queue.estimate(j) == (5.0 if j is JOBS[2] else j.walltime) for j in expected)


def test_batsched_order_names_are_accepted():
    assert get_policy("asc_walltime").name == "spf"
    assert get_policy("asc_size").name == "sqf"
    assert get_policy("FCFS").name == "fcfs"


def test_unknown_policy_is_a_clear_error():
    with pytest.raises(ConfigError, match="unknown policy 'nope'"):
        SchedulerConfig(policy="nope")
