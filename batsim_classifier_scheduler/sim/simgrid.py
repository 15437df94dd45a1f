"""SimGrid 3.32's clock and sleeping actions, computed as Batsim 4.2.1 has SimGrid compute them.

Batsim's ``ptask_L07`` host model updates every action at every step: SimGrid adds the next action's remaining
duration to the clock and subtracts it from every sleep's remainder; a remainder below 1e-9 s (``surf/precision``)
ends in that step. On the zero-latency, 1000 GBps platforms of :mod:`batsim_classifier_scheduler.platforms`, each of
Batsim's 1-byte messages takes one step of 1e-12 s. In floating point these steps round (above 16384 s the clock
ignores a 1e-12 s step; a remainder up to 16384 s loses up to 1.8e-12 s to it), so two sleeps due at the same instant
end in the same step only when their remainders differ by less than 1e-9 s, else one step apart, which Batsim reports
at the same time (6 decimals) in two messages. :class:`Timeline` reproduces that arithmetic exactly (Python floats are
IEEE doubles, as SimGrid's) without touching every sleep at every step: a sleep's remainder is replayed from a log of
the steps when it is about to end, in bulk within a binade where the log is long (:class:`BinadeSums`).
"""
from __future__ import annotations

import heapq
import math
import struct
from array import array
from bisect import bisect_left, bisect_right
from typing import Any

import numpy as np


#: The duration of one of Batsim's internal messages (1 byte at 1000 GBps, no latency).
MESSAGE_TIME = 1e-12
#: SimGrid's ``surf/precision``: a remainder below it is zero.
PRECISION = 1e-9
#: Sleeps whose ends are this close to the next end are followed step by step (drift is ~1e-8 s at most).
_NEAR = 1e-6
#: Above this, one message step does not change a double (at it, the next double down is 1.8e-12 away).
_ABSORBED = 16384.0


class Sleep:
    """A sleeping action: ``remaining`` seconds as of log entry ``mark`` (or now, once followed). It began after
    that entry's step and the first ``offset`` message steps of its run."""

    __slots__ = ("seq", "remaining", "mark", "offset", "end", "owner", "cancelled", "followed")

    def __init__(self, seq: int, remaining: float, mark: int, offset: float, end: float, owner: Any = None) -> None:
        self.seq = seq  # (one assignment each: cheaper than a tuple's)
        self.remaining = remaining
        self.mark = mark
        self.offset = offset
        self.end = end
        self.owner = owner
        self.cancelled = self.followed = False


def after_messages(remaining: float, count: int) -> float:
    """``remaining`` after ``count`` message steps, each ``remaining -= MESSAGE_TIME`` rounded as a double
    (and zero below :data:`PRECISION`), in a few operations per binade crossed."""
    if count <= 4:  # the common case (a sleep that began inside a run): step by step is cheaper
        for _ in range(count):
            remaining -= MESSAGE_TIME
            if remaining < PRECISION:
                return 0.0
        return remaining
    while count and remaining:
        if remaining > _ABSORBED:
            return remaining
        step = remaining - MESSAGE_TIME
        if step < PRECISION:
            return 0.0
        loss = remaining - step  # exact: the decrement every step takes within this binade
        low = max(math.ldexp(0.5, math.frexp(remaining)[1]), PRECISION)  # the binade's lower bound, or zero's
        safe = min(count, int((remaining - low - MESSAGE_TIME) / loss))  # steps that stay in the binade, above it
        if safe > 1:
            remaining -= safe * loss
            count -= safe
        else:
            remaining = step
            count -= 1
    return remaining


class Timeline:
    """SimGrid's clock and its sleeping actions, step by step: each step is a message step (:meth:`message_step`) or
    a jump to the next end of a sleep (:meth:`jump`); both return the sleeps that ended in it, in the order they
    started. Creating actions (sleeps, messages) draws from one sequence, which orders what ends in the same step."""

    def __init__(self, shortcuts: bool = True) -> None:
        self.shortcuts = shortcuts  # whether a sleep that ends alone is jumped to without following it first
        self.now = 0.0
        self._seq = 0
        # the log, one entry per step other than a message's (a jump, or a message step cut short by a sleep's
        # end): the step's duration, then the number of message steps that followed it; the first entry's is 0
        self._steps = array("d", [0.0])
        self._runs = array("d", [0.0])  # (counts as doubles: a replay multiplies them by doubles)
        self._waiting: list[tuple[float, int, Sleep]] = []  # heap of (approximate end, seq, sleep)
        self._sums = BinadeSums()  # what the log takes from a remainder within a binade, for long replays
        self.followed: list[Sleep] = []  # sleeps about to end, their remainders exact and current (one list, kept)

    def next_seq(self) -> int:
        self._seq += 1
        return self._seq

    def sleep(self, duration: float, owner: Any) -> Sleep:
        """A sleep of ``duration`` seconds starting now: at the log's last entry, past the message steps logged
        so far in its run."""
        self._seq += 1
        runs = self._runs
        sleep = Sleep(self._seq, duration, len(runs) - 1, runs[-1], self.now + duration, owner)
        followed = self.followed
        if duration < _NEAR or (followed and sleep.end <= min(s.end for s in followed) + _NEAR):
            sleep.followed = True
            followed.append(sleep)
        else:
            heapq.heappush(self._waiting, (sleep.end, sleep.seq, sleep))
        return sleep

    def cancel(self, sleep: Sleep) -> None:
        sleep.cancelled = True
        if sleep.followed:
            self.followed.remove(sleep)

    @property
    def idle(self) -> bool:
        """No sleep left."""
        waiting = self._waiting
        while waiting and waiting[0][2].cancelled:
            heapq.heappop(waiting)
        return not waiting and not self.followed

    def message_step(self, limit: float = MESSAGE_TIME) -> tuple[float, list[Sleep]]:
        """A step of a message in flight that needs ``limit`` more seconds: its duration (shorter when a
        sleep ends first) and the sleeps that ended."""
        followed = self.followed
        if not followed and limit == MESSAGE_TIME:  # the common case: nothing else ends in it
            self._runs[-1] += 1
            self.now += MESSAGE_TIME
            return MESSAGE_TIME, []
        delta = limit
        if followed:
            delta = min(delta, min(s.remaining for s in followed))
        if delta == MESSAGE_TIME:
            self._runs[-1] += 1
        else:
            self._log_step(delta)
        self.now += delta
        return delta, self._update_followed(delta)

    def lone_message_step(self) -> None:
        """A message's action begins and takes its step, with no sleep about to end (none followed): nothing else
        ends in it. As :meth:`next_seq` then :meth:`message_step`, in one call (the hottest of the engine's)."""
        self._seq += 1
        self._runs[-1] += 1
        self.now += MESSAGE_TIME

    def _log_step(self, delta: float) -> None:
        """Log a step other than a message's: a new entry, no message step after it yet."""
        self._steps.append(delta)
        self._runs.append(0)

    def jump(self) -> list[Sleep]:
        """With no message in flight: the step to the next end of a sleep; the sleeps that ended."""
        if self.shortcuts and not self.followed:
            first = self.jump_alone()
            if first is not None:  # the common case: it ends alone
                return [first]
        self._follow_next()  # others may end with it: follow them all
        followed = self.followed
        delta = min(s.remaining for s in followed)
        self._log_step(delta)
        self.now += delta
        return self._update_followed(delta)

    def jump_alone(self) -> Sleep | None:
        """With no message in flight and no sleep followed: when the next sleep to end ends alone (no other within
        ``_NEAR`` of it), the step to its end, and that sleep; else ``None``, and no step taken."""
        waiting = self._waiting
        if not waiting or waiting[0][2].cancelled:
            return None
        first = heapq.heappop(waiting)[2]
        if waiting and waiting[0][0] <= first.end + _NEAR:
            heapq.heappush(waiting, (first.end, first.seq, first))
            return None
        delta = self._replay(first)
        first.remaining = 0.0  # (its remainder less itself)
        self._steps.append(delta)  # (as _log_step)
        self._runs.append(0)
        self.now += delta
        return first

    # --- internals -----------------------------------------------------------------

    def _update_followed(self, delta: float) -> list[Sleep]:
        ended = []
        for sleep in self.followed:
            sleep.remaining -= delta
            if sleep.remaining < PRECISION:
                sleep.remaining = 0.0
                ended.append(sleep)
        if ended:
            self.followed[:] = [s for s in self.followed if s.remaining]  # (the same list: the engine holds it)
        return ended

    def _follow_next(self) -> None:
        """Follow, with exact remainders, every waiting sleep that may end as soon as the first one."""
        waiting, followed = self._waiting, self.followed
        self._drop_cancelled()
        if not waiting:
            return
        horizon = waiting[0][0]
        if followed:
            horizon = min(horizon, self.now + min(s.remaining for s in followed))
        horizon += _NEAR
        while waiting and waiting[0][0] <= horizon:
            sleep = heapq.heappop(waiting)[2]
            if sleep.cancelled:
                continue
            sleep.remaining = self._replay(sleep)
            sleep.followed = True
            followed.append(sleep)
        followed.sort(key=_seq_of)

    def _replay(self, sleep: Sleep) -> float:
        """A waiting sleep's remainder now, from its remainder at its mark and the steps logged since: its mark's
        entry (it began after that entry's step and the first ``offset`` message steps of its run), then each later
        entry, in bulk within a binade (:class:`BinadeSums`) where the log is long."""
        mark, runs = sleep.mark, self._runs
        first = mark + 1
        if first == len(runs):  # the common case: no step but messages' logged since it began
            return _after_run(sleep.remaining, runs[mark] - sleep.offset)
        if len(runs) - first >= _BULK_FROM and len(self._waiting) >= _BULK_SLEEPS:
            remaining = _after_run(sleep.remaining, runs[mark] - sleep.offset)
            remaining, first = self._sums.replay(remaining, first, self._steps, runs, self._waiting)
            return _replay_entries(remaining, self._steps[first:], runs[first:])
        steps, runs = self._steps[mark:], runs[mark:]
        steps[0] = 0.0  # it began after its mark's step ...
        runs[0] -= sleep.offset  # ... and after the first ``offset`` message steps of its run (as _after_run)
        return _replay_entries(sleep.remaining, steps, runs)

    def _drop_cancelled(self) -> None:
        waiting = self._waiting
        while waiting and waiting[0][2].cancelled:
            heapq.heappop(waiting)


def _seq_of(sleep: Sleep) -> int:
    return sleep.seq


def _binade(exponent: int) -> tuple[float, float, float]:
    """The binade ``[low, high)`` of the doubles whose ``math.frexp`` exponent is ``exponent``, and what one message
    step takes from a remainder inside it (above its lowest double): the remainder less one of its units in the last
    place, to the nearest. ``low`` is infinite for the binade that reaches below :data:`PRECISION`: a run is never
    taken in bulk there (nor is the binade kept from one entry to the next)."""
    low = math.ldexp(0.5, exponent)
    middle = 1.5 * low
    return low if low > PRECISION else math.inf, 2 * low, middle - (middle - MESSAGE_TIME)


#: :func:`_binade` of every exponent a remainder between :data:`PRECISION` and :data:`_ABSORBED` can have (from -29,
#: indexed from -30 on).
_BINADES = [_binade(exponent) for exponent in range(-30, 16)]


def _kept_from(low: float, loss: float) -> float:
    """The least double ``after`` for which ``after + loss - MESSAGE_TIME >= low``, as doubles compute it (the test
    that a run of message steps stayed in the binade ``low`` begins): the sum and the difference, each rounded, only
    grow with ``after``, so one comparison with this bound says the same. Infinite for an infinite ``low``."""
    if math.isinf(low):
        return math.inf
    below, above = _bits(low / 2), _bits(2 * low)  # (the test fails at the first, holds at the second)
    while above - below > 1:
        middle = (below + above) // 2
        if _double(middle) + loss - MESSAGE_TIME >= low:
            above = middle
        else:
            below = middle
    return _double(above)


def _bits(value: float) -> int:
    """A positive double's bits as an integer: they order positive doubles as their values."""
    return struct.unpack("<q", struct.pack("<d", value))[0]


def _double(bits: int) -> float:
    return struct.unpack("<d", struct.pack("<q", bits))[0]


#: :data:`_BINADES` with each binade's :func:`_kept_from` bound, for :func:`_replay_entries`' loop.
_LOOP_BINADES = [(low, high, loss, _kept_from(low, loss)) for low, high, loss in _BINADES]


def _after_run(remaining: float, count: float) -> float:
    """``remaining`` after a run of ``count`` message steps alone: :func:`_replay_entries` of one entry whose step is
    0, without its loop."""
    return _replay_entry(remaining, 0.0, count)  # (less a step of 0: ``remaining`` itself)


#: Logs at least this long are replayed in numpy (shorter ones cost less entry by entry: with the bulk replays of
#: :class:`BinadeSums` taking the long logs of a large machine, and a small machine's entry by entry, a log reaches
#: numpy only when one sleep lives through thousands of entries, few of them).
_VECTOR_FROM = 4096
#: A replay that begins above :data:`_ABSORBED` (where message steps leave a remainder as it is) through at least this
#: many entries subtracts their steps in numpy (in order, each rounded as Python's) until it comes down to it: a long
#: job on a busy machine lives through hundreds of entries, one by one 50 ns each; a numpy pass costs about 3 µs.
_ABOVE_FROM = 64
#: :data:`_BINADES` as arrays, for :func:`_replay_in_numpy`.
_LOWS, _HIGHS, _LOSSES = (np.array(column) for column in zip(*_BINADES))


def _replay_entries(remaining: float, steps: array, runs: array) -> float:
    """``remaining`` after the logged entries ``steps`` and ``runs`` (a step, then a run of message steps), one by
    one, as SimGrid computes it: a step's duration subtracted (zero below :data:`PRECISION`), a run of message steps
    in bulk within a binade. A long log (a sleep that lived through many steps: thousands of jobs running at once)
    is replayed in numpy, whose doubles round as Python's."""
    if len(steps) >= _VECTOR_FROM:
        return _replay_in_numpy(remaining, np.frombuffer(steps), np.frombuffer(runs))
    if remaining > _ABSORBED and len(steps) >= _ABOVE_FROM:  # the steps alone down to _ABSORBED, at once
        after = np.subtract.accumulate(np.concatenate(((remaining,), np.frombuffer(steps))))
        below = int((after <= _ABSORBED).argmax())  # the first entry whose step takes it to _ABSORBED or below
        if not below:
            return float(after[-1])
        remaining = _replay_entry(float(after[below - 1]), steps[below - 1], runs[below - 1])
        steps, runs = steps[below:], runs[below:]
    # the low end of the binade of ``remaining``, its loss per message step and its _kept_from bound, once known
    low, loss, kept = math.inf, 0.0, 0.0
    precision, absorbed, binades = PRECISION, _ABSORBED, _LOOP_BINADES  # (locals: read at every entry)
    for step, count in zip(steps, runs):
        remaining -= step
        if remaining >= low:  # the common case: still in the binade of the last entry (steps and losses are never
            after = remaining - count * loss  # negative: it cannot have grown out of it; its low end is above
            if after >= kept:  # PRECISION): no step left the binade, each lost ``loss`` (none without a run:
                remaining = after  # ``after`` is ``remaining``, and so is after_messages' of no step)
            else:
                remaining = after_messages(remaining, int(count))
        elif remaining < precision:
            remaining = 0.0
        elif count and remaining <= absorbed:
            low, _, loss, kept = binades[math.frexp(remaining)[1] + 30]
            after = remaining - count * loss
            if after >= kept:
                remaining = after
            else:
                remaining = after_messages(remaining, int(count))
    return remaining


def _replay_entry(remaining: float, step: float, count: float) -> float:
    """One entry of :func:`_replay_entries`' loop."""
    remaining -= step
    if remaining < PRECISION:
        return 0.0
    if count and remaining <= _ABSORBED:
        _, _, loss, kept = _LOOP_BINADES[math.frexp(remaining)[1] + 30]
        after = remaining - count * loss
        if after >= kept:  # no step left the binade: each lost ``loss``
            return after
        return after_messages(remaining, int(count))
    return remaining


#: Logs at least this long (after a sleep's mark) are replayed in bulk within binades where they can be, ...
_BULK_FROM = 32
#: ... while at least this many sleeps wait (thousands of jobs running at once): the sums cost a few numpy calls per
#: binade and batch of entries, which only many sleeps replayed over the same entries earn back (on a machine of a
#: hundred the entries are replayed one by one for less).
_BULK_SLEEPS = 128
#: The ``math.frexp`` exponents of the binades :class:`BinadeSums` may sum: remainders from 2**-21 s to 2**30 s.
_BULK_EXPONENTS = range(-20, 31)
#: A binade's sums are brought up to the log's last closed entry when this many are missing, and not begun for fewer.
_BULK_BATCH = 48
#: Entries summed in one numpy pass at most (the sums of one pass stay below 2**62).
_BULK_PASS = 1000
#: Every this many entries, those before the oldest waiting sleep's mark are dropped from the sums as they grow.
_BULK_TRIM = 4096
_TWO_52 = 2.0 ** 52
_INT64_SAFE = 2 ** 62
#: Per binade: its low end, and the factor that turns seconds into its units in the last place.
_BULK_LOWS = [math.ldexp(0.5, exponent) for exponent in _BULK_EXPONENTS]
_BULK_SCALES = [math.ldexp(1.0, 53 - exponent) for exponent in _BULK_EXPONENTS]
#: What a message step takes from a remainder in each binade, in its units in the last place (none from 16384 s).
_BULK_LOSSES = [math.ldexp(_BINADES[exponent + 30][2], 53 - exponent) if exponent <= 15 else 0.0
                for exponent in _BULK_EXPONENTS]


class BinadeSums:
    """What the log's entries take from a remainder that stays within a binade, summed, so that a sleep that lived
    through thousands of entries is replayed in a few subtractions.

    Within the binade ``[2**(e-1), 2**e)`` doubles are the multiples of its unit in the last place ``2**(e-53)``. A
    remainder there less a step, rounded to the nearest double, is the remainder less the step rounded to a multiple of
    that unit, unless the step lies exactly halfway between two (a *tie*, which rounds to even) or the difference
    leaves the binade; below 16384 s each message step of a run takes the binade's ``loss`` (as
    :func:`_replay_entries` takes it in bulk). So, for each binade a replay reaches, the running sums of each entry's
    units (its step rounded, plus its run's count times the loss) are kept as Python integers, from the first entry a
    replay needed there: the entries a remainder goes through before it comes within two units of its binade's low end
    (a bisection) take it down by their sum, exactly; the entry that leaves the binade, and a tie, are replayed alone,
    and the next binade goes on. A binade's sums are brought up to date when a replay reaches it.
    """

    def __init__(self) -> None:
        count = len(_BULK_EXPONENTS)
        # per binade: sums[k][j - bases[k]] is the units entries bases[k] .. j-1 take from a remainder in binade k (or
        # None: not begun); ties[k] the log indices of its ties from bases[k] on, in order
        self.sums: list[list[int] | None] = [None] * count
        self.bases = [0] * count
        self.ties: list[list[int]] = [[] for _ in range(count)]
        self._keep = 0  # no replay reads the entries before it
        self._keep_at = _BULK_TRIM  # when to look again for the oldest waiting sleep's mark

    def replay(self, remaining: float, first: int, steps: array, runs: array,
               waiting: list[tuple[float, int, Sleep]]) -> tuple[float, int]:
        """``remaining`` after the entries ``first`` .. as far as the sums go (in bulk where it can, one by one where
        it leaves a binade), and the index of the next entry to replay."""
        closed = len(runs) - 1  # (the last entry's run may still grow)
        if closed >= self._keep_at:
            # entries before the oldest waiting sleep's mark (and before ``first``) are replayed no more
            self._keep = min(first, min((sleep.mark for _, _, sleep in waiting), default=first) + 1)
            self._keep_at = closed + _BULK_TRIM
        sums, bases, ties, lows, scales = self.sums, self.bases, self.ties, _BULK_LOWS, _BULK_SCALES
        low_exponent, nb_binades = _BULK_EXPONENTS[0], len(sums)
        while first < closed:
            k = math.frexp(remaining)[1] - low_exponent
            if not 0 <= k < nb_binades:
                break
            row = sums[k]
            if row is None or not bases[k] <= first < bases[k] + len(row):
                if closed - first < _BULK_BATCH:
                    break
                row = self._begin(k, first)  # (not begun, or not over ``first``: begun at ``first``)
            if closed - (bases[k] + len(row) - 1) >= _BULK_BATCH:
                self._extend(k, steps, runs, closed)
            base = bases[k]
            at, end = first - base, base + len(row) - 1
            if first == end:
                break
            # the entries after which the remainder stays two units or more above the binade's low end
            room = int((remaining - lows[k]) * scales[k]) - 2  # (exact: a power of 2 times a multiple of the unit)
            limit = bisect_right(row, row[at] + room, at) - 1
            tied = ties[k]
            if tied:
                tie = bisect_left(tied, first)
                if tie < len(tied) and tied[tie] - base < limit:
                    limit = tied[tie] - base
            if limit > at:
                remaining -= (row[limit] - row[at]) / scales[k]  # (exact: multiples of the unit)
                first = base + limit
                if first == end:
                    break
            remaining = _replay_entry(remaining, steps[first], runs[first])  # it leaves the binade, or a tie
            first += 1
        return remaining, first

    def _begin(self, k: int, first: int) -> list[int]:
        """Binade ``k``'s sums begun afresh at entry ``first``."""
        row = self.sums[k] = [0]
        self.bases[k] = first
        self.ties[k] = []
        return row

    def _extend(self, k: int, steps: array, runs: array, upto: int) -> None:
        """Binade ``k``'s sums up to entry ``upto`` (excluded); those before the entries kept dropped first."""
        row, base, tied = self.sums[k], self.bases[k], self.ties[k]
        if self._keep - base >= _BULK_TRIM:
            drop = min(self._keep - base, len(row) - 1)
            del row[:drop]
            del tied[:bisect_left(tied, base + drop)]
            base = self.bases[k] = base + drop
        exponent = _BULK_EXPONENTS[k]
        loss = _BULK_LOSSES[k]
        start = base + len(row) - 1
        while start < upto:
            stop = min(upto, start + _BULK_PASS)
            scaled = np.ldexp(np.frombuffer(steps[start:stop]), 53 - exponent)  # each step in the binade's units
            units = np.rint(scaled)
            ties = np.flatnonzero(np.abs(scaled - units) == 0.5)
            if loss:
                units += np.frombuffer(runs[start:stop]) * loss
            np.minimum(units, _TWO_52, out=units)  # (2**52 units or more leave any remainder's binade)
            totals, last = np.cumsum(units.astype(np.int64)), row[-1]
            if last < _INT64_SAFE and int(totals[-1]) < _INT64_SAFE:  # (their sum stays an int64)
                row += (totals + last).tolist()
            else:
                row.extend(map(last.__add__, totals.tolist()))
            if len(ties):
                tied.extend((ties + start).tolist())
            start = stop


def _replay_in_numpy(remaining: float, steps: np.ndarray, runs: np.ndarray) -> float:
    """:func:`_replay_entries`' loop, the same doubles, in a few numpy passes: ``np.subtract.accumulate`` subtracts in
    order, rounding each difference as Python does. Above :data:`_ABSORBED`, where message steps leave a remainder as
    it is, the steps are subtracted alone. Below, a pass guesses each entry's binade from the remainders after the
    steps alone, subtracts the steps interleaved with each run's ``count * loss`` in its guessed binade, and guesses again from the remainders it found until they stay in the binades guessed; then
    it checks every entry as the loop would: the first entry whose arithmetic was not the loop's (a remainder that
    left its guessed binade, ends, or leaves the binade within its run) is replayed alone, and the next pass starts
    after it."""
    at, end = 0, len(steps)
    while at < end:
        if remaining < PRECISION:  # (zero: every later entry leaves it zero)
            return 0.0
        if end - at < _VECTOR_FROM:
            for step, count in zip(steps[at:].tolist(), runs[at:].tolist()):
                remaining = _replay_entry(remaining, step, count)
            return remaining
        if remaining > _ABSORBED:  # above it message steps leave a remainder as it is: the steps alone, at once
            after = np.subtract.accumulate(np.concatenate(((remaining,), steps[at:])))
            below = int((after <= _ABSORBED).argmax())  # the first step that takes it to _ABSORBED or below
            if not below:
                return float(after[-1])
            remaining = _replay_entry(float(after[below - 1]), float(steps[at + below - 1]), float(runs[at + below - 1]))
            at += below
            continue
        rest_steps, counts = steps[at:], runs[at:]
        interleaved = np.empty(2 * len(rest_steps) + 1)
        interleaved[0] = remaining
        interleaved[1::2] = rest_steps
        interleaved[2::2] = 0.0
        after_steps = np.subtract.accumulate(interleaved)[1::2]  # the steps alone: a first guess of the binades
        for _ in range(3):  # the runs' losses in the binades guessed, until no guess changes (twice at most, mostly)
            guessed = after_steps
            index = np.frexp(guessed)[1]
            np.clip(index + 30, 0, len(_BINADES) - 1, out=index)
            in_run = counts != 0  # entries whose run takes ``loss`` per message step
            loss = np.where(in_run, _LOSSES[index], 0.0)
            interleaved[2::2] = counts * loss
            accumulated = np.subtract.accumulate(interleaved)
            after_steps, after_runs = accumulated[1::2], accumulated[2::2]
            if np.array_equal(np.frexp(after_steps)[1], np.frexp(guessed)[1]):
                break
        low = _LOWS[index]
        held = (after_steps >= PRECISION) & ~in_run | (
            (after_steps >= low) & (after_steps < _HIGHS[index]) & (after_runs + loss - MESSAGE_TIME >= low))
        failed = int(held.argmin())
        if held[failed]:  # every entry held
            return float(after_runs[-1])
        if failed:
            remaining = float(after_runs[failed - 1])
        remaining = _replay_entry(remaining, float(rest_steps[failed]), float(counts[failed]))
        at += failed + 1
    return remaining
