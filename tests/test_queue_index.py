"""The queue's width index (``JobQueue.INDEX_FROM``, ``INDEX_UNTIL``): built when the queue grows long, kept up to
date, dropped when it is short again; the jobs ``backfill_candidates`` picks are those of a filter over the whole order."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from batsim_classifier_scheduler.core.job import Job
from batsim_classifier_scheduler.core.policies import get_policy
from batsim_classifier_scheduler.core.queue import JobQueue


def brute_force_pick(queue, now, longest, width, narrow, after):
    """The jobs ``pick(width, narrow, after)`` should give, from the whole order."""
    entries = queue._entry
    return [(entries[job.id], job) for job in queue.ordered(now)
            if job.res <= width and (job.res <= narrow or queue.estimate(job) <= longest)
            and (after is None or entries[job.id] > after)]


def fresh_index(queue):
    """The width index of the queue's jobs, built afresh."""
    copy = JobQueue(queue.policy)
    copy._entries, copy._in_order, copy.estimates = queue._entries, queue._in_order, queue.estimates
    copy._build_index()
    return copy._by_width, copy._queued_widths


_OPERATIONS = st.lists(st.tuples(st.sampled_from(["push", "push", "push", "remove", "update"]),
                                 st.integers(0, 10 ** 6), st.sampled_from([1, 1, 2, 3, 4, 8, 16]),
                                 st.sampled_from([5.0, 10.0, 60.0, 100.0, 3600.0]), st.sampled_from([0, 1, 2])),
                       min_size=1, max_size=80)


@settings(max_examples=120, deadline=None)
@given(_OPERATIONS, st.sampled_from(["fcfs", "spf", "saf", "lpf"]), st.sampled_from([(1, 0), (4, 2), (10, 3)]),
       st.lists(st.tuples(st.floats(0, 4000), st.integers(0, 16), st.integers(0, 16), st.integers(0, 3)),
                min_size=1, max_size=6))
def test_the_width_index_picks_what_a_filter_over_the_order_picks(operations, policy, thresholds, picks) -> None:
    queue = JobQueue(get_policy(policy))
    queue.INDEX_FROM, queue.INDEX_UNTIL = thresholds
    queued: list[Job] = []
    for number, (operation, draw, res, estimate, rank) in enumerate(operations):
        if operation == "push" or not queued:
            job = Job(f"w0!{number}", float(draw % 1000), res, estimate)
            queue.push(job, estimate, rank=rank, now=float(number))
            queued.append(job)
        elif operation == "remove":
            job = queued.pop(draw % len(queued))
            queue.remove(job)
        else:
            queue.update(queued[draw % len(queued)], estimate / 2, now=float(number))
        long_enough = len(queue) >= queue.INDEX_FROM
        if long_enough:
            assert queue._by_width is not None
        if len(queue) < queue.INDEX_UNTIL:
            assert queue._by_width is None
        if queue._by_width is not None:
            assert (queue._by_width, queue._queued_widths) == fresh_index(queue)
    for longest, width, narrow, skip in picks:
        pick = queue.backfill_candidates(0.0, longest)
        if queue._by_width is None:
            assert pick is None
            continue
        order = brute_force_pick(queue, 0.0, longest, width, narrow, None)
        after = order[skip - 1][0] if 0 < skip <= len(order) else None
        assert list(pick(width, narrow, after)) == brute_force_pick(queue, 0.0, longest, width, narrow, after)


def test_a_short_queue_keeps_no_width_index_and_a_long_one_does() -> None:
    queue = JobQueue(get_policy("fcfs"))
    jobs = [Job(f"w0!{i}", float(i), 1 + i % 4, 10.0) for i in range(JobQueue.INDEX_FROM)]
    for job in jobs[:-1]:
        queue.push(job, 10.0)
    assert queue._by_width is None and queue.backfill_candidates(0.0, 5.0) is None
    queue.push(jobs[-1], 10.0)
    assert queue._by_width is not None and queue.backfill_candidates(0.0, 5.0) is not None
    for job in jobs[:-JobQueue.INDEX_UNTIL]:
        queue.remove(job)
    assert queue._by_width is not None  # (down to INDEX_UNTIL jobs: kept)
    queue.remove(jobs[-JobQueue.INDEX_UNTIL])
    assert queue._by_width is None


@pytest.mark.parametrize("policy", ["wfp"])
def test_a_dynamic_policy_keeps_no_width_index(policy) -> None:
    queue = JobQueue(get_policy(policy))
    for i in range(JobQueue.INDEX_FROM + 1):
        queue.push(Job(f"w0!{i}", float(i), 1, 10.0), 10.0)
    assert queue._by_width is None and queue.backfill_candidates(0.0, 5.0) is None
