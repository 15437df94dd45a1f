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
    """The ``count`` lowest-numbered machines of ``mask`` (which must hold enough)."""
    if count <= 0:
        return 0
    total = mask.bit_count()
    if total < count:
        raise ValueError(f"mask holds {total} machines, {count} requested")
    if total == count:
        return mask
    # The smallest bit length ``hi`` such that the low ``hi`` bits hold ``count`` machines.
    lo, hi = count, mask.bit_length()
    while lo < hi:
        mid = (lo + hi) // 2
        if (mask & ((1 << mid) - 1)).bit_count() >= count:
            hi = mid
        else:
            lo = mid + 1
    return mask & ((1 << hi) - 1)


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
    """Batsim's interval-set string of ``mask`` (what ``str(to_procset(mask))`` gives), fast."""
    return " ".join(str(a) if a == b else f"{a}-{b}" for a, b in runs(mask))


def from_procset(machines: ProcSet) -> int:
    """The bit mask of a ``ProcSet``."""
    mask = 0
    for interval in machines.intervals():
        mask |= ((1 << (interval.sup - interval.inf + 1)) - 1) << interval.inf
    return mask
