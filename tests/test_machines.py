"""Bit-mask machine sets: :func:`lowest` against its definition, bit by bit."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scheduler.core.machines import lowest, runs


def lowest_by_bits(mask: int, count: int) -> int:
    """The ``count`` lowest set bits of ``mask``, one at a time."""
    chosen = 0
    for _ in range(count):
        low_bit = mask & -mask
        chosen |= low_bit
        mask ^= low_bit
    return chosen


@settings(max_examples=300, deadline=None)
@given(st.integers(min_value=1, max_value=(1 << 300) - 1), st.data())
def test_lowest_takes_the_lowest_machines(mask: int, data: st.DataObject) -> None:
    count = data.draw(st.integers(min_value=0, max_value=mask.bit_count()))
    chosen = lowest(mask, count)
    assert chosen == lowest_by_bits(mask, count)
    assert chosen & ~mask == 0 and chosen.bit_count() == count


def test_lowest_across_runs() -> None:
    mask = 0b1110_0110_1101
    assert runs(mask) == [(0, 0), (2, 3), (5, 6), (9, 11)]
    assert lowest(mask, 4) == 0b0000_0010_1101
    assert lowest(mask, 5) == 0b0000_0110_1101
    assert lowest(mask, 7) == 0b0110_0110_1101


def test_lowest_refuses_more_machines_than_the_mask_holds() -> None:
    with pytest.raises(ValueError, match="holds 3 machines"):
        lowest(0b10101, 4)
