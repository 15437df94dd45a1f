"""SimGrid's clock and sleeps (``scheduler.sim.simgrid``): exact double arithmetic, as SimGrid 3.32 does it."""

import math

import pytest
from hypothesis import given, settings, strategies as st

from scheduler.sim.simgrid import MESSAGE_TIME, PRECISION, Timeline, after_messages


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
