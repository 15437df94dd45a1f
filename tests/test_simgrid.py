"""SimGrid's clock and sleeps (``batsim_classifier_scheduler.sim.simgrid``): exact double arithmetic, as SimGrid 3.32 does it."""

import math
from array import array

import pytest
from hypothesis import given, settings, strategies as st

from batsim_classifier_scheduler.sim.simgrid import (MESSAGE_TIME, PRECISION, Timeline, _after_run, _replay_entries,
                                                     after_messages)


def one_step_at_a_time(remaining: float, count: int) -> float:
    for _ in range(count):
        remaining -= MESSAGE_TIME
        if remaining < PRECISION:
            remaining = 0.0
    return remaining


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(st.one_of(st.floats(0, 40000), st.floats(0, 1e-6), st.sampled_from([2.0 ** k for k in range(-30, 16)])),
       st.integers(0, 5000))
def test_message_steps_in_bulk_round_as_one_by_one(remaining, count):
    assert after_messages(remaining, count) == one_step_at_a_time(remaining, count)


@settings(max_examples=200, deadline=None)
@given(st.one_of(st.floats(0, 40000), st.floats(0, 1e-6), st.sampled_from([2.0 ** k for k in range(-31, 16)])),
       st.integers(0, 3000))
def test_a_run_alone_replays_as_the_logs_loop_and_one_by_one(remaining, count):
    """The replay of a sleep with no step logged since it began (``_after_run``: its run of message steps alone) is the
    log's loop over one entry whose step is 0, and SimGrid's steps one by one."""
    alone = _after_run(remaining, float(count))
    assert alone == _replay_entries(remaining, array("d", [0.0]), array("d", [float(count)]))
    if remaining >= PRECISION:
        assert alone == one_step_at_a_time(remaining, count)


def test_message_steps_in_bulk_stop_at_zero_inside_a_binade():
    # 2**-30 s < PRECISION < 2**-29 s: a bulk run within that binade must still zero below PRECISION
    assert after_messages(2.0 ** -29, 863) == one_step_at_a_time(2.0 ** -29, 863) == 0.0


def test_message_steps_leave_remainders_and_the_clock_alone_above_16384_s():
    assert after_messages(16384.5, 10**6) == 16384.5
    assert after_messages(16384.0, 1) == 16384.0 - 2 ** -39  # the next double down is closer than 1e-12 s
    assert after_messages(16383.0, 1) == 16383.0 - 2 ** -39  # one ulp of that binade, 1.82e-12 s
    assert 20000.0 + MESSAGE_TIME == 20000.0 and 100.0 + MESSAGE_TIME > 100.0


def sleeps_ending(timeline: Timeline) -> list[list[str]]:
    ended = []
    while not timeline.idle:
        ended.append([sleep.owner for sleep in timeline.jump()])
    return ended


def test_sleeps_due_together_end_in_one_step_below_1e9_s_apart():
    timeline = Timeline()
    first = timeline.sleep(20000.0, "clock")  # bring the clock where it ignores message steps
    assert [s.owner for s in timeline.jump()] == ["clock"] and timeline.now == 20000.0 and first.remaining == 0
    timeline.sleep(5000.0, "a")
    for _ in range(500):  # a's remainder (4096..8192 s) loses 2^-40 s per message step: 4.5e-10 s in all
        timeline.message_step()
    timeline.sleep(5000.0, "b")
    assert sleeps_ending(timeline) == [["a", "b"]]


def test_sleeps_due_together_end_one_step_apart_beyond_1e9_s():
    timeline = Timeline()
    timeline.sleep(20000.0, "clock")
    timeline.jump()
    timeline.sleep(5000.0, "a")
    for _ in range(2000):  # 1.8e-9 s
        timeline.message_step()
    timeline.sleep(5000.0, "b")
    assert sleeps_ending(timeline) == [["a"], ["b"]]
    assert math.isclose(timeline.now, 25000.0, abs_tol=1e-8)


def test_a_cancelled_sleep_never_ends():
    timeline = Timeline()
    kept, cancelled = timeline.sleep(3.0, "kept"), timeline.sleep(2.0, "cancelled")
    timeline.cancel(cancelled)
    assert sleeps_ending(timeline) == [["kept"]] and kept.remaining == 0.0


class EagerTimeline:
    """SimGrid's L07 update as SimGrid does it: every step subtracts its duration from every sleep."""

    def __init__(self) -> None:
        self.now, self.sleeps = 0.0, []  # [remaining, owner]

    def sleep(self, duration: float, owner: str) -> None:
        self.sleeps.append([duration, owner])

    def step(self, limit: float | None) -> list[str]:
        """A message step (``limit`` = MESSAGE_TIME) or, with None, a jump to the next end."""
        delta = min([s[0] for s in self.sleeps] + ([limit] if limit is not None else []))
        self.now += delta
        ended = []
        for sleep in self.sleeps:
            sleep[0] -= delta
            if sleep[0] < PRECISION:
                sleep[0] = 0.0
                ended.append(sleep[1])
        self.sleeps = [s for s in self.sleeps if s[0]]
        return ended


#: Durations that meet: whole seconds on both sides of 16384 s (where message steps stop counting), tiny ones,
#: and ones just off a whole second.
_DURATIONS = st.one_of(st.integers(1, 40000).map(float), st.sampled_from([1e-7, 5e-7, 2e-6, 1e-5, 0.5, 16384.0]),
                       st.integers(1, 40000).map(lambda s: s - 3e-9))


@settings(max_examples=150, deadline=None)
@given(st.lists(st.one_of(st.tuples(st.just("sleep"), _DURATIONS), st.tuples(st.just("messages"), st.integers(1, 3000)),
                          st.tuples(st.just("jump"), st.just(0))), min_size=1, max_size=120))
def test_lazy_remainders_match_simgrids_eager_update(operations):
    """The timeline's log and replays (one log entry per run of message steps, a sleep starting inside a run)
    end every sleep in the step SimGrid's eager update ends it, with the same clock, to the bit."""
    lazy, eager = Timeline(), EagerTimeline()
    for i, (kind, value) in enumerate(operations):
        if kind == "sleep":
            lazy.sleep(value, str(i))
            eager.sleep(value, str(i))
        elif kind == "messages":
            for _ in range(value):
                ended = [s.owner for s in lazy.message_step()[1]]
                assert ended == eager.step(MESSAGE_TIME)
        elif not lazy.idle:
            assert [s.owner for s in lazy.jump()] == eager.step(None)
        assert lazy.now == eager.now
    while not lazy.idle:
        assert [s.owner for s in lazy.jump()] == eager.step(None)
        assert lazy.now == eager.now
    assert not eager.sleeps


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.integers(0, 10**7).map(float), st.floats(0, 1e7)), st.floats(0, 1e7))
def test_long_double_difference_is_numpys(later, earlier):
    import numpy as np

    from batsim_classifier_scheduler.sim.actors import long_double_difference

    assert long_double_difference(later, earlier) == float(np.longdouble(later) - np.longdouble(earlier))


def replay_entry_by_entry(remaining: float, steps: array, runs: array) -> float:
    """:func:`_replay_entries`' loop, whatever the log's length."""
    for step, count in zip(steps, runs):
        remaining = _replay_entries(remaining, array("d", [step]), array("d", [count]))
    return remaining


@settings(max_examples=40, deadline=None)
@given(st.one_of(st.floats(1e-9, 40000), st.integers(1, 40000).map(float), st.floats(16000, 17000)),
       st.lists(st.tuples(st.one_of(st.floats(0, 300), st.integers(0, 120).map(float), st.floats(0, 1e-9),
                                    st.just(0.0)),
                          st.one_of(st.just(0.0), st.integers(1, 12).map(float), st.integers(0, 3000).map(float))),
                min_size=130, max_size=200),
       st.integers(0, 3))
def test_a_long_log_replays_in_numpy_as_entry_by_entry(remaining, entries, scale):
    """A long log (a sleep that lived through many steps) is replayed in numpy: the same double, whether the remainder
    stays above 16384 s, crosses it, crosses binades during steps or runs, or ends on the way."""
    steps = array("d", [step / 4 ** scale for step, _ in entries])
    runs = array("d", [count for _, count in entries])
    steps[0] = 0.0
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("batsim_classifier_scheduler.sim.simgrid._VECTOR_FROM", 128)  # (from 4096 entries in a run)
        assert _replay_entries(remaining, steps, runs) == replay_entry_by_entry(remaining, steps, runs)


#: Steps that meet in a long log: any size, whole seconds, tiny ones, and ones of few bits (which fall exactly halfway
#: between two doubles of a remainder's binade: ties, which round to even).
_STEPS = st.one_of(st.floats(0, 300), st.integers(0, 120).map(float), st.floats(0, 1e-9), st.just(0.0),
                   st.floats(0, 5000), st.tuples(st.integers(1, 2 ** 20), st.integers(-40, -8)).map(
                       lambda bits: math.ldexp(bits[0] | 1, bits[1])))


@settings(max_examples=30, deadline=None)
@given(st.lists(st.tuples(_STEPS, st.one_of(st.just(0.0), st.integers(1, 12).map(float),
                                             st.integers(0, 3000).map(float))), min_size=60, max_size=300),
       st.lists(st.tuples(st.floats(0, 1), st.floats(0, 1),
                          st.one_of(st.floats(0, 3e5), st.integers(1, 300000).map(float), st.floats(16000, 17000),
                                    st.integers(7, 22).map(lambda k: 2.0 ** k), st.floats(100, 2000))),
                min_size=1, max_size=12))
def test_binade_sums_replay_a_log_as_entry_by_entry(entries, queries):
    """The bulk replay within binades (``BinadeSums``) gives the double of the entries one by one, whatever the log
    (steps leaving a binade, ties, runs of message steps, huge steps) and wherever a sleep's replay starts in it."""
    from batsim_classifier_scheduler.sim.simgrid import BinadeSums

    steps = array("d", [step for step, _ in entries])
    runs = array("d", [count for _, count in entries])
    sums = BinadeSums()
    grown = 0
    for length_share, first_share, remaining in sorted(queries):  # (the log only grows)
        length = max(grown, 2 + int(length_share * (len(entries) - 2)))
        grown = length
        first = int(first_share * (length - 1))
        log_steps, log_runs = steps[:length], runs[:length]
        bulk, after = sums.replay(remaining, first, log_steps, log_runs, [])
        assert first <= after <= length
        assert _replay_entries(bulk, log_steps[after:], log_runs[after:]) == \
            replay_entry_by_entry(remaining, log_steps[first:], log_runs[first:])


@settings(max_examples=80, deadline=None)
@given(st.lists(st.one_of(st.tuples(st.just("sleep"), _DURATIONS), st.tuples(st.just("messages"), st.integers(1, 300)),
                          st.tuples(st.just("jump"), st.just(0))), min_size=1, max_size=150))
def test_lazy_remainders_in_bulk_match_simgrids_eager_update(operations):
    """As :func:`test_lazy_remainders_match_simgrids_eager_update`, every replay through the sums of a few entries."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("batsim_classifier_scheduler.sim.simgrid._BULK_FROM", 1)
        patch.setattr("batsim_classifier_scheduler.sim.simgrid._BULK_SLEEPS", 0)  # (in a run, from 128 sleeps waiting)
        patch.setattr("batsim_classifier_scheduler.sim.simgrid._BULK_BATCH", 1)
        test_lazy_remainders_match_simgrids_eager_update.hypothesis.inner_test(operations)


@pytest.mark.parametrize("units", [3.7, 2.2, 1.6, 0.6])
def test_binade_sums_leave_a_binade_entry_by_entry(units):
    """A step that takes a remainder to its binade's low end or below rounds on the finer grid below: replayed alone."""
    from batsim_classifier_scheduler.sim.simgrid import BinadeSums, _BULK_BATCH

    unit = 2.0 ** (11 - 53)  # in [1024, 2048)
    steps = array("d", [0.0, units * unit] + [0.0] * _BULK_BATCH)
    runs = array("d", [0.0] * len(steps))
    for remaining in (1024 + 3 * unit, 1024 + 2 * unit, 1024 + unit):
        bulk, after = BinadeSums().replay(remaining, 1, steps, runs, [])
        expected = replay_entry_by_entry(remaining, steps[1:], runs[1:])
        assert after > 1 and _replay_entries(bulk, steps[after:], runs[after:]) == expected


@pytest.mark.parametrize("odd", [101, 4097, 2 ** 40 + 1])
def test_binade_sums_replay_a_tie_alone(odd):
    """A step halfway between two multiples of the unit rounds the remainder to even: replayed alone, not in bulk."""
    from batsim_classifier_scheduler.sim.simgrid import BinadeSums, _BULK_BATCH

    unit = 2.0 ** (11 - 53)
    steps = array("d", [0.0, 2.5 * unit, 0.0, 6.5 * unit] + [1.0] * _BULK_BATCH)
    runs = array("d", [0.0] * len(steps))
    remaining = 1024 + odd * unit
    bulk, after = BinadeSums().replay(remaining, 1, steps, runs, [])
    assert after > 1 and _replay_entries(bulk, steps[after:], runs[after:]) == \
        replay_entry_by_entry(remaining, steps[1:], runs[1:])


def test_each_binades_bound_is_the_least_double_where_a_run_stays_in_it():
    # _replay_entries' one comparison ``after >= kept`` says what ``after + loss - MESSAGE_TIME >= low`` said
    from batsim_classifier_scheduler.sim.simgrid import _LOOP_BINADES

    for low, _, loss, kept in _LOOP_BINADES:
        if math.isinf(low):
            continue
        assert kept + loss - MESSAGE_TIME >= low
        below = math.nextafter(kept, 0.0)
        assert not below + loss - MESSAGE_TIME >= low
