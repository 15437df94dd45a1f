"""Machine sets as Python integer bit masks, and their conversion to ``ProcSet``.

The availability profile does a handful of set operations per decision. On integers
they are single C calls (``&``, ``|``, ``int.bit_count``), far cheaper than interval
arithmetic in pure Python; intervals are materialised (as ``procset.ProcSet``) only
when a job is allocated.
"""

from __future__ import annotations

from procset import ProcSet


def full_mask(nb_machines: int) -> int:
    return (1 << nb_machines) - 1


def lowest(mask: int, count: int) -> int:
    """The ``count`` lowest-numbered machines of ``mask`` (which must hold enough).

    Walks the runs of consecutive machines from the low end, so the cost grows with the
    number of runs taken, not with the machine size.
    """
    if count <= 0:
        return 0
    if count == 1 and mask:  # the most common request
        return mask & -mask
    chosen = 0
    rest = mask
    while rest:
        low_bit = rest & -rest
        after = rest & (rest + low_bit)  # the carry clears the lowest run of ones
        run = rest ^ after
        length = run.bit_count()
        if length >= count:
            return chosen | (low_bit * ((1 << count) - 1))  # its first ``count`` machines
        chosen |= run
        count -= length
        rest = after
    raise ValueError(f"mask holds {mask.bit_count()} machines, {count} more requested")


def runs(mask: int) -> list[tuple[int, int]]:
    """The closed intervals ``(first, last)`` of consecutive machines in ``mask``, in order."""
    intervals = []
    while mask:
        low_bit = mask & -mask
        first = low_bit.bit_length() - 1
        carry = mask + low_bit  # clears the lowest run of ones, sets the bit above it
        end = (carry & -carry).bit_length() - 1
        intervals.append((first, end - 1))
        mask &= carry
    return intervals


def to_procset(mask: int) -> ProcSet:
    """The machines of ``mask`` as a ``ProcSet`` of closed intervals."""
    return ProcSet(*runs(mask))


def to_interval_string(mask: int) -> str:
    """Batsim's interval-set string of ``mask`` (what ``str(to_procset(mask))`` gives), fast: the runs of
    :func:`runs` written as they are found."""
    parts = []
    while mask:
        low_bit = mask & -mask
        first = low_bit.bit_length() - 1
        carry = mask + low_bit
        last = (carry & -carry).bit_length() - 2
        parts.append(str(first) if first == last else f"{first}-{last}")
        mask &= carry
    return " ".join(parts)


def from_interval_string(text: str) -> int:
    """The bit mask of Batsim's interval-set string (what ``from_procset(ProcSet.from_str(text))`` gives), fast."""
    mask = 0
    for part in text.split():
        first, _, last = part.partition("-")
        low = int(first)
        mask |= ((1 << (int(last or first) - low + 1)) - 1) << low
    return mask


def from_procset(machines: ProcSet) -> int:
    """The bit mask of a ``ProcSet``."""
    mask = 0
    for interval in machines.intervals():
        mask |= ((1 << (interval.sup - interval.inf + 1)) - 1) << interval.inf
    return mask
