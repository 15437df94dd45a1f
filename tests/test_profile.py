"""The availability profile's running jobs by expected end, kept through starts, ends and changed ends."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from batsim_classifier_scheduler.core.profile import AvailabilityProfile

from tests.helpers import lowest_by_bits

NB_MACHINES = 16

steps = st.lists(st.tuples(st.sampled_from(["start", "finish", "move"]), st.integers(0, 7),
                           st.sampled_from([0.0, 5.0, 10.0, 10.0, 20.0, 35.5])), max_size=40)


@settings(max_examples=200, deadline=None)
@given(steps)
def test_running_jobs_stay_ordered_by_expected_end(operations: list[tuple[str, int, float]]) -> None:
    profile = AvailabilityProfile(NB_MACHINES)
    for operation, number, end in operations:
        job_id = f"w0!{number}"
        if operation == "start" and job_id not in profile.running and profile.nb_free:
            profile.start(job_id, 0.0, end, 1, profile.fits_now(1, end, 0.0))
        elif operation == "finish" and job_id in profile.running:
            profile.finish(job_id)
        elif operation == "move" and job_id in profile.running:
            profile.set_expected_end(job_id, end)
        by_end = profile._by_end
        assert sorted(map(id, by_end)) == sorted(map(id, profile.running.values()))
        assert [holding.end for holding in by_end] == sorted(holding.end for holding in profile.running.values())



def fit_by_definition(profile: AvailabilityProfile, res: int, now: float) -> tuple[float, int]:
    """The first time (now, or an expected end, ``now`` for one passed) by which ``res`` machines are free, and the
    lowest of those free then: computed from scratch, without the profile's kept answer."""
    holdings = profile.running.values()
    for start in sorted({now, *(max(holding.end, now) for holding in holdings)}):
        available = profile.free_mask
        for holding in holdings:
            if max(holding.end, now) <= start:
                available |= holding.mask
        if available.bit_count() >= res:
            return start, lowest_by_bits(available, res)
    raise AssertionError("every machine is free after the last end")


WIDE = 200  # more than a 64-bit word, so that runs cross words

wide_steps = st.lists(st.tuples(st.sampled_from(["start", "start", "finish", "move", "fit", "fit", "time"]),
                                st.integers(0, 15), st.integers(1, 50),
                                st.sampled_from([1.0, 5.0, 10.0, 10.0, 20.0, 35.5])), max_size=80)


def start_scattered(profile: AvailabilityProfile, random, job_id: str, res: int, now: float, end: float) -> None:
    """Start ``job_id`` on up to ``res`` free machines drawn at random: scattered, not only the lowest."""
    free = [m for m in range(profile.nb_machines) if profile.free_mask >> m & 1]
    machines = random.sample(free, min(res, len(free)))
    profile.start(job_id, now, end, len(machines), sum(1 << m for m in machines))


@settings(max_examples=300, deadline=None)
@given(wide_steps, st.randoms(use_true_random=False))
def test_fit_after_ends_is_the_first_fit_by_its_definition(operations, random) -> None:
    """The fit after the ends (a reservation's start and machines), kept from one call to the next while nothing
    changes under its machines, is the one computed afresh, through starts on scattered machines, ends and moved
    expected ends."""
    profile = AvailabilityProfile(WIDE)
    now = 0.0
    for operation, number, res, end in operations:
        job_id = f"w0!{number}"
        if operation == "start" and job_id not in profile.running and profile.nb_free:
            start_scattered(profile, random, job_id, res, now, now + end)
        elif operation == "finish" and job_id in profile.running:
            profile.finish(job_id)
        elif operation == "move" and job_id in profile.running:
            profile.set_expected_end(job_id, now + end)
        elif operation == "time":
            now += end / 2
        elif operation == "fit" and 150 + res % 3 * 20 > profile.nb_free:  # a few sizes, asked again and again
            res = 150 + res % 3 * 20
            assert profile.later_fit(res, 1.0, now) == fit_by_definition(profile, res, now)


def _bits(*machines: int) -> int:
    return sum(1 << m for m in machines)


@pytest.mark.parametrize("change", ["finish", "start", "move"])
def test_a_kept_fit_is_dropped_when_a_machine_under_it_changes_by_its_start(change: str) -> None:
    """Nine machines of ten wanted, first found at 20 on machines 0-8 or 1-9; then machine 0 comes free, or is
    taken, by 20 (a job on it ends, starts, or its end moves): the same start, other machines."""
    profile = AvailabilityProfile(10)
    profile.start("b", 0.0, 20.0, 8, _bits(*range(1, 9)))
    if change == "finish":
        profile.start("a", 0.0, 30.0, 1, _bits(0))
        assert profile.later_fit(9, 1.0, 0.0) == (20.0, _bits(*range(1, 10)))
        profile.finish("a")
    elif change == "start":
        assert profile.later_fit(9, 1.0, 0.0) == (20.0, _bits(*range(9)))
        profile.start("a", 0.0, 30.0, 1, _bits(0))
    else:
        profile.start("a", 0.0, 10.0, 1, _bits(0))
        assert profile.later_fit(9, 1.0, 0.0) == (20.0, _bits(*range(9)))
        profile.set_expected_end("a", 30.0)
    assert profile.later_fit(9, 1.0, 0.0) == fit_by_definition(profile, 9, 0.0)
    assert profile.later_fit(9, 1.0, 0.0)[0] == 20.0


SMALL = 40

# ends on a grid of few times, so that jobs often end together, and at the kept start
kept_steps = st.lists(st.tuples(st.sampled_from(["start", "start", "finish", "finish", "move", "move", "time"]),
                                st.integers(0, 11), st.integers(1, 8), st.sampled_from([-2.0, 0.0, 2.0, 4.0])),
                      max_size=60)


@settings(max_examples=150, deadline=None)
@given(st.integers(12, SMALL), kept_steps, st.randoms(use_true_random=False))
def test_a_kept_fit_follows_every_change(res, operations, random) -> None:
    """One job's fit after the ends, asked after every start, end, moved expected end and step of time (as EASY asks
    its priority job's at every decision), is the one computed afresh: its start moves earlier when a job expected to
    end by then or after ends sooner, later when one that ends after it starts or its end moves past it."""
    profile = AvailabilityProfile(SMALL)
    now = 0.0
    for operation, number, width, delay in operations:
        job_id = f"w0!{number}"
        if operation == "start" and job_id not in profile.running and profile.nb_free:
            start_scattered(profile, random, job_id, width, now, now + max(delay, 0.0))
        elif operation == "finish" and job_id in profile.running:
            profile.finish(job_id)
        elif operation == "move" and job_id in profile.running:
            profile.set_expected_end(job_id, now + delay)
        elif operation == "time":
            now += max(delay, 0.0)
        if res > profile.nb_free:
            assert profile.later_fit(res, 1.0, now) == fit_by_definition(profile, res, now)


@pytest.mark.parametrize("change, res, start", [
    ("finish", 7, 10.0),  # a job expected to end after the start ends: 7 free by 10
    ("move earlier", 7, 10.0),  # it is expected to end by 5 instead: 7 free by 10
    ("start", 9, 30.0),  # the free machine is taken until 30: 8 free by 20
    ("move later", 9, 25.0),  # four machines expected back at 20 are at 25
    ("time", 9, 25.0),  # it is 25, and the jobs expected to end by 20 have not ended yet
])
def test_a_kept_start_moves_when_the_machines_free_by_then_change(change: str, res: int, start: float) -> None:
    """Eleven machines: one free, four back at 10, four at 20, two at 30; ``res`` machines are first free at 20 (5
    machines by 10, 9 by 20), then a change moves that start."""
    profile = AvailabilityProfile(11)
    profile.start("x", 0.0, 10.0, 4, _bits(0, 1, 2, 3))
    profile.start("y", 0.0, 20.0, 4, _bits(4, 5, 6, 7))
    profile.start("z", 0.0, 30.0, 2, _bits(8, 9))
    assert profile.later_fit(res, 1.0, 0.0)[0] == 20.0
    now = 0.0
    if change == "finish":
        profile.finish("z")
    elif change == "move earlier":
        profile.set_expected_end("z", 5.0)
    elif change == "start":
        profile.start("w", 0.0, 30.0, 1, _bits(10))
    elif change == "move later":
        profile.set_expected_end("y", 25.0)
    else:
        now = 25.0
    assert profile.later_fit(res, 1.0, now) == fit_by_definition(profile, res, now)
    assert profile.later_fit(res, 1.0, now)[0] == start
