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


_WORD = (1 << 64) - 1


#: Machines per block of :func:`lowest`: a block's operations cost far less than the whole mask's.
_BLOCK = 16384
_BLOCK_MASK = (1 << _BLOCK) - 1
#: Runs :func:`_end_of_lowest` walks before it bisects: most requests end in them (a job of a few machines).
_WALKED_RUNS = 2


#: Masks below this one (machines 0 to 2047) are small: operations on the whole mask cost little, so :func:`lowest`
#: and :func:`runs` walk its runs from the low end (``mask & -mask``), the cheapest on the few runs a request of a
#: few machines takes; a large machine's mask is read by blocks and words instead.
_SMALL = 1 << 2048
#: Runs :func:`lowest` walks on a small mask before it looks for the rest of the request by bisection.
_WALKED_SMALL_RUNS = 8


def lowest(mask: int, count: int) -> int:
    """The ``count`` lowest-numbered machines of ``mask`` (which must hold enough).

    On a small mask (:data:`_SMALL`) the first runs of consecutive machines are walked from the low end, so that a
    request of a few machines costs a few operations; the rest of a larger one is found as on a large mask.
    On a machine of tens of thousands of machines each operation on the whole mask costs
    microseconds, and those on negative integers (``mask & -mask``) or ``int.bit_count``
    several times more. So the mask is read a block of :data:`_BLOCK` machines at a time
    from the low end (a block's count, then the mask shifted past it), the block where the
    ``count``-th machine lies is searched (:func:`_end_of_lowest`), and the answer is cut from
    ``mask`` in one ``&``: the cost grows with the blocks taken, not with the machine size.
    """
    if count <= 0:
        return 0
    if mask < _SMALL:
        if count == 1 and mask:  # the most common request
            return mask & -mask
        chosen, rest = 0, mask
        for _ in range(_WALKED_SMALL_RUNS):
            if not rest:
                break
            low_bit = rest & -rest
            after = rest & (rest + low_bit)  # the carry clears the lowest run of ones
            run = rest ^ after
            length = run.bit_count()
            if length >= count:
                return chosen | (low_bit * ((1 << count) - 1))  # its first ``count`` machines
            chosen |= run
            count -= length
            rest = after
        else:
            if rest.bit_count() >= count:
                return chosen | (rest & ((1 << _end_of_lowest(rest, count)) - 1))
        raise ValueError(f"mask holds {mask.bit_count()} machines, {count} more requested")
    rest, base = mask, 0  # ``mask`` shifted down by ``base``
    while rest:
        block = rest & _BLOCK_MASK
        held = block.bit_count()
        if held >= count:
            return mask & ((1 << (base + _end_of_lowest(block, count))) - 1)  # every machine up to the last chosen
        count -= held
        rest >>= _BLOCK
        base += _BLOCK
    raise ValueError(f"mask holds {mask.bit_count()} machines, {count} more requested")


def _end_of_lowest(mask: int, count: int) -> int:
    """One past the ``count``-th lowest machine of ``mask`` (which holds at least ``count``): its first
    :data:`_WALKED_RUNS` runs walked from the low end (a shifted copy of the mask measured on its low 64 bits where a
    run or gap fits in them), then, when that machine lies further up, found by bisection on how many machines the
    low bits of the rest hold: on a fragmented machine a few such counts cost less than a walk over hundreds of runs."""
    rest, position = mask, 0  # ``mask`` shifted down by ``position``
    for _ in range(_WALKED_RUNS):
        word = rest & _WORD
        if word:  # the trailing zeros: the gap before the next run
            gap = (word ^ (word - 1)).bit_length() - 1
        else:
            gap = (rest ^ (rest - 1)).bit_length() - 1
        rest >>= gap
        position += gap
        word = rest & _WORD
        if word != _WORD:  # the trailing ones: the run's length
            length = (word ^ (word + 1)).bit_length() - 1
        else:
            length = (rest ^ (rest + 1)).bit_length() - 1
        if length >= count:
            return position + count
        count -= length
        rest >>= length
        position += length
    low, high = count, rest.bit_length()  # the answer within ``rest``: its low ``low`` bits hold too few, all do enough
    while low < high:
        middle = (low + high) >> 1
        if (rest & ((1 << middle) - 1)).bit_count() >= count:
            high = middle
        else:
            low = middle + 1
    return position + low


def runs(mask: int) -> list[tuple[int, int]]:
    """The closed intervals ``(first, last)`` of consecutive machines in ``mask``, in order (found as
    :func:`lowest` finds them)."""
    intervals = []
    if mask < _SMALL:
        while mask:
            low_bit = mask & -mask
            first = low_bit.bit_length() - 1
            carry = mask + low_bit  # clears the lowest run of ones, sets the bit above it
            end = (carry & -carry).bit_length() - 1
            intervals.append((first, end - 1))
            mask &= carry
        return intervals
    position = 0  # ``mask`` shifted down by ``position``
    while mask:
        word = mask & _WORD
        gap = (word ^ (word - 1)).bit_length() - 1 if word else (mask ^ (mask - 1)).bit_length() - 1
        mask >>= gap
        position += gap
        word = mask & _WORD
        length = (word ^ (word + 1)).bit_length() - 1 if word != _WORD else (mask ^ (mask + 1)).bit_length() - 1
        intervals.append((position, position + length - 1))
        mask >>= length
        position += length
    return intervals


def to_procset(mask: int) -> ProcSet:
    """The machines of ``mask`` as a ``ProcSet`` of closed intervals."""
    return ProcSet(*runs(mask))


def to_interval_string(mask: int) -> str:
    """Batsim's interval-set string of ``mask`` (what ``str(to_procset(mask))`` gives), fast: the runs of
    :func:`runs` written as they are found."""
    if mask < _SMALL:  # (the runs written as they are found)
        parts = []
        while mask:
            low_bit = mask & -mask
            first = low_bit.bit_length() - 1
            carry = mask + low_bit
            last = (carry & -carry).bit_length() - 2
            parts.append(str(first) if first == last else f"{first}-{last}")
            mask &= carry
        return " ".join(parts)
    return " ".join([str(first) if first == last else f"{first}-{last}" for first, last in runs(mask)])


def kept_allocation(mask: int) -> int | str:
    """How a record keeps an allocation once the job ended: a small machine's mask as it is (tens of bytes, and no
    string to write at each job end: most allocations repeat, written once for the table), a large machine's as its
    interval string (a mask would keep kilobytes per job)."""
    return mask if mask < _SMALL else to_interval_string(mask)


def from_interval_string(text: str) -> int:
    """The bit mask of Batsim's interval-set string (what ``from_procset(ProcSet.from_str(text))`` gives), fast."""
    mask = 0
    for part in text.split():
        first, _, last = part.partition("-")
        low = int(first)
        mask |= ((1 << (int(last or first) - low + 1)) - 1) << low
    return mask


def interval_runs(text: str) -> list[tuple[int, int]]:
    """The closed intervals ``(first, last)`` of Batsim's interval-set string (what :func:`runs` gives of
    ``from_interval_string(text)``, for a string in order, as :func:`to_interval_string` writes it), without the
    mask: on a large machine a mask per job would cost kilobytes."""
    intervals = []
    for part in text.split():
        first, _, last = part.partition("-")
        intervals.append((int(first), int(last or first)))
    return intervals


def from_procset(machines: ProcSet) -> int:
    """The bit mask of a ``ProcSet``."""
    mask = 0
    for interval in machines.intervals():
        mask |= ((1 << (interval.sup - interval.inf + 1)) - 1) << interval.inf
    return mask
