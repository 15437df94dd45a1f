"""Bit-mask machine sets: :func:`lowest` against its definition, bit by bit."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from procset import ProcSet

from batsim_classifier_scheduler.core.machines import (from_interval_string, interval_runs, lowest, runs,
                                                       to_interval_string)

from tests.helpers import lowest_by_bits



@settings(max_examples=300, deadline=None)
@given(st.integers(min_value=1, max_value=(1 << 300) - 1), st.data())
def test_lowest_takes_the_lowest_machines(mask: int, data: st.DataObject) -> None:
    count = data.draw(st.integers(min_value=0, max_value=mask.bit_count()))
    chosen = lowest(mask, count)
    assert chosen == lowest_by_bits(mask, count)
    assert chosen & ~mask == 0 and chosen.bit_count() == count


def mask_of_runs(gaps_and_lengths: list[tuple[int, int]]) -> int:
    mask, position = 0, 0
    for gap, length in gaps_and_lengths:
        position += gap
        mask |= ((1 << length) - 1) << position
        position += length
    return mask


# runs and gaps shorter and longer than a 64-bit word, from the low end or thousands of machines up
wide_masks = st.lists(st.tuples(st.integers(1, 150), st.integers(1, 150)), min_size=1, max_size=30).map(
    lambda runs_: mask_of_runs(runs_)) | st.builds(lambda mask, shift: mask << shift,
                                                    st.integers(1, (1 << 300) - 1), st.integers(0, 5000))


@settings(max_examples=300, deadline=None)
@given(wide_masks, st.data())
def test_lowest_takes_the_lowest_machines_of_long_runs(mask: int, data: st.DataObject) -> None:
    count = data.draw(st.integers(min_value=0, max_value=mask.bit_count()))
    assert lowest(mask, count) == lowest_by_bits(mask, count)


def test_lowest_across_runs() -> None:
    mask = 0b1110_0110_1101
    assert runs(mask) == [(0, 0), (2, 3), (5, 6), (9, 11)]
    assert lowest(mask, 4) == 0b0000_0010_1101
    assert lowest(mask, 5) == 0b0000_0110_1101
    assert lowest(mask, 7) == 0b0110_0110_1101


def test_lowest_refuses_more_machines_than_the_mask_holds() -> None:
    with pytest.raises(ValueError, match="holds 3 machines"):
        lowest(0b10101, 4)


@settings(max_examples=300, deadline=None)
@given(wide_masks)
def test_runs_and_interval_strings_list_every_machine(mask: int) -> None:
    intervals = runs(mask)
    assert [m for first, last in intervals for m in range(first, last + 1)] == [
        m for m in range(mask.bit_length()) if mask >> m & 1]
    assert all(last + 1 < following for (_, last), (following, _) in zip(intervals, intervals[1:]))
    text = to_interval_string(mask)
    assert text == str(ProcSet(*intervals)) and from_interval_string(text) == mask
    assert interval_runs(text) == intervals


@settings(max_examples=200, deadline=None)
@given(wide_masks, st.data())
def test_small_and_large_masks_are_read_alike(mask: int, data: st.DataObject) -> None:
    """A small mask's runs walked from the low end (below ``_SMALL``) give what the large machines' reading by blocks
    and words gives."""
    count = data.draw(st.integers(min_value=0, max_value=mask.bit_count()))
    small = lowest(mask, count), runs(mask), to_interval_string(mask)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("batsim_classifier_scheduler.core.machines._SMALL", 1)  # every mask read as a large machine's
        assert (lowest(mask, count), runs(mask), to_interval_string(mask)) == small
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("batsim_classifier_scheduler.core.machines._SMALL", 1 << 6000)  # every mask read as a small machine's
        assert (lowest(mask, count), runs(mask), to_interval_string(mask)) == small


def test_lowest_refuses_more_machines_than_a_fragmented_mask_holds() -> None:
    with pytest.raises(ValueError, match="holds 12 machines"):
        lowest(int("10" * 12, 2), 13)  # (past the runs walked)
    with pytest.raises(ValueError, match="holds 3 machines"):
        lowest(0b10101, 4)
