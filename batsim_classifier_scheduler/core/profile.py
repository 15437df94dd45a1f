"""The availability profile EASY plans on, with batsched's first-fit semantics.

Running jobs hold their machines from their start until their expected end (start +
estimate), or until their completion is reported if that comes later. At most one
future job, the reservation of the queue's priority job, holds machines over
``[start, start + estimate)``.

batsched keeps this as a list of time slices. Because every running job started in
the past, the machines free from running jobs only grow with time, so the machines
free over a whole window are those free at its first slice, less the reservation's
when the window overlaps it. That lets one first-fit query cost a scan over the
running jobs' end times plus a few mask operations, whatever the machine size.

The slices batsched would have are: the first one at ``now`` (the only one whose jobs
"start now"), then one at each distinct expected end of a running job (an end equal to
``now`` for a job whose completion has not been reported yet), and at the
reservation's start and end.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right, insort
from dataclasses import dataclass
from operator import attrgetter
from typing import NamedTuple

from batsim_classifier_scheduler.core.machines import full_mask, lowest


@dataclass(slots=True, eq=False)
class Holding:
    """Machines held by a job over ``[start, end)`` (equal only to itself: found in lists by identity)."""

    job_id: str
    start: float
    end: float
    res: int
    mask: int


@dataclass(slots=True)
class _Planned:
    """The last answer of :meth:`AvailabilityProfile._fit_after_ends`: ``res`` machines from ``start`` on ``mask``
    (None: to be chosen again), or on the lowest of ``mask`` and ``freed``, machines below its highest one freed by
    then since; ``below`` holds every machine up to the highest of ``mask``. Kept up to date as jobs
    start and end: by ``start``, ``spare`` machines beyond ``res`` are free; at every slice before it at least
    ``short`` are missing. While neither is negative nor zero, ``start`` is still the answer."""

    res: int
    start: float
    spare: int
    short: int
    mask: int | None
    below: int
    freed: int = 0

    def add_free(self, machines: int) -> None:
        """``machines`` are free by ``start`` now: the lowest ``res`` machines free then may be lower. (Those free by
        then up to the highest of ``mask`` are ``mask`` itself: the new ones below it are all that can enter.)"""
        self.freed |= machines & self.below

    def chosen(self) -> int | None:
        """The ``res`` lowest machines free by ``start`` (None: to be chosen again)."""
        if self.freed and self.mask is not None:
            self.mask = lowest(self.mask | self.freed, self.res)
            self.below = (1 << self.mask.bit_length()) - 1
        self.freed = 0
        return self.mask


class Fit(NamedTuple):
    """Where first-fit put a job: at ``start`` on ``mask``; ``now`` tells if it starts now."""

    start: float
    mask: int
    now: bool


_expected_end = attrgetter("end")


class AvailabilityProfile:
    """Machine availability over time on a homogeneous platform of ``nb_machines``."""

    def __init__(self, nb_machines: int) -> None:
        self.nb_machines = nb_machines
        self._all = full_mask(nb_machines)
        self.free_mask = self._all  # machines no running job holds
        self.nb_free = nb_machines
        self.running: dict[str, Holding] = {}
        # the same holdings by expected end, kept so as each start, end and change of an expected end comes (a
        # sort at each first fit cost more: a reservation hardly ever finds the running jobs as the last left them)
        self._by_end: list[Holding] = []
        self.reservation: Holding | None = None
        # the last fit after the ends, kept while the changes cannot move it: the same job's reservation is found
        # again at every job end, and with thousands of jobs running, finding its start (a walk over them by
        # expected end) and choosing its machines on a fragmented machine cost far more than checking each change;
        # its machines are chosen again only when one below its highest comes free or gets taken by then
        self._planned: _Planned | None = None

    # --- running jobs --------------------------------------------------------------

    def start(self, job_id: str, start: float, end: float, res: int, mask: int) -> None:
        """Record that ``job_id`` runs on ``mask`` from ``start``, expected to end at ``end``."""
        if mask & self.free_mask != mask:
            raise ValueError(f"job {job_id!r}: machines already in use")
        holding = self.running[job_id] = Holding(job_id, start, end, res, mask)
        insort(self._by_end, holding, key=_expected_end)
        self.free_mask ^= mask  # (the machines were free)
        self.nb_free -= res
        planned = self._planned
        if planned is not None and end > planned.start:  # (ending by then, it changes nothing from then on)
            planned.spare -= res
            if mask & planned.below:
                planned.mask, planned.freed = None, 0  # machines it chose are no longer free by then

    def finish(self, job_id: str) -> Holding:
        """Release the machines of a running job."""
        holding = self.running.pop(job_id)
        self._unlist(holding)
        self.free_mask |= holding.mask
        self.nb_free += holding.res
        planned = self._planned
        if planned is not None and holding.end >= planned.start:  # (expected to end before, nothing changes by then)
            planned.short -= holding.res  # every slice before has more machines free
            if holding.end > planned.start:
                planned.spare += holding.res
                planned.add_free(holding.mask)
        return holding

    def set_expected_end(self, job_id: str, end: float) -> None:
        holding = self.running[job_id]
        self._unlist(holding)
        planned = self._planned
        if planned is not None:
            start, old = planned.start, holding.end
            planned.spare += holding.res * ((end <= start) - (old <= start))
            if end < start <= old:
                planned.short -= holding.res  # the slices from ``end`` on have more machines free
            if old > start >= end:
                planned.add_free(holding.mask)
            elif end > start >= old and holding.mask & planned.below:
                planned.mask, planned.freed = None, 0  # machines it chose, or below them, are no longer free by then
        holding.end = end
        insort(self._by_end, holding, key=_expected_end)

    def _unlist(self, holding: Holding) -> None:
        """Take ``holding`` out of :attr:`_by_end` (among those ending at the same time, by identity)."""
        by_end = self._by_end
        del by_end[by_end.index(holding, bisect_left(by_end, holding.end, key=_expected_end))]

    # --- the reservation -----------------------------------------------------------

    def reserve(self, job_id: str, res: int, duration: float, now: float) -> None:
        """Reserve for ``job_id``, which does not fit now, the machines of its first fit later."""
        start, mask = self.later_fit(res, duration, now)
        self.reservation = Holding(job_id, start, start + duration, res, mask)

    def cancel_reservation(self) -> None:
        self.reservation = None

    # --- first fit -----------------------------------------------------------------

    def fits_now(self, res: int, duration: float, now: float) -> int | None:
        """The machines a job of ``res`` machines and ``duration`` gets if it starts now, else None."""
        if res > self.nb_free:
            return None
        available = self.free_mask
        resv = self.reservation
        if resv is not None and resv.start < now + duration:
            available ^= available & resv.mask  # (not ``&= ~``: bit operations on negative integers cost more)
            if available.bit_count() < res:
                return None
        return lowest(available, res)

    def free_outside_reservation(self) -> int:
        """How many free machines the reservation does not hold (all of them without one): a job that would
        overlap the reservation and needs more does not fit now."""
        if self.reservation is None:
            return self.nb_free
        return self.nb_free - (self.free_mask & self.reservation.mask).bit_count()

    def first_fit(self, res: int, duration: float, now: float) -> Fit | None:
        """The earliest slice at which ``res`` machines stay free for ``duration``.

        Returns None only when the job is larger than the machine.
        """
        if res > self.nb_machines:
            return None
        mask = self.fits_now(res, duration, now)
        if mask is not None:
            return Fit(now, mask, True)
        start, mask = self.later_fit(res, duration, now)
        return Fit(start, mask, False)

    def later_fit(self, res: int, duration: float, now: float) -> tuple[float, int]:
        """:meth:`first_fit`'s start and machines for a job that does not fit now (:meth:`fits_now` refused it)."""
        resv = self.reservation
        if resv is None:
            return self._fit_after_ends(res, now)
        # The slices after the first one start at each distinct expected end of a running
        # job (``now`` for one whose completion is not reported yet) and at the reservation's
        # bounds. Counts decide where the job fits; masks are only built for that slice.
        holdings = self._by_end
        ends = [now if holding.end < now else holding.end for holding in holdings]
        starts = sorted({*ends, resv.start, resv.end}) if resv else dict.fromkeys(ends)
        count, taken, nb_holdings = self.nb_free, 0, len(holdings)
        available, merged = self.free_mask, 0
        for start in starts:
            while taken < nb_holdings and ends[taken] <= start:
                count += holdings[taken].res
                taken += 1
            if count < res:
                continue
            overlap = resv is not None and resv.start < start + duration and start < resv.end
            if overlap and start >= resv.start and count - resv.res < res:
                continue  # the reservation's machines are all free by then, and taken
            while merged < taken:
                available |= holdings[merged].mask
                merged += 1
            if not overlap:
                return start, lowest(available, res)
            candidate = available ^ (available & resv.mask)
            if candidate.bit_count() >= res:
                return start, lowest(candidate, res)
        raise AssertionError("unreachable: every machine is free after the last end")

    def _fit_after_ends(self, res: int, now: float) -> tuple[float, int]:
        """:meth:`first_fit` without a reservation, for a job that does not fit now: it starts at the first
        expected end (``now`` for one already past) by which enough machines are free, on the lowest of the
        machines free then."""
        planned = self._planned
        if planned is not None and planned.res == res and now <= planned.start and planned.spare >= 0 \
                and planned.short > 0:  # (the slices from now on are the same)
            if planned.chosen() is None:
                planned.mask = self._lowest_by(planned.start, res)
                planned.below = (1 << planned.mask.bit_length()) - 1
            return planned.start, planned.mask
        holdings = self._by_end
        count = self.nb_free
        for stop, holding in enumerate(holdings):
            count += holding.res
            if count >= res:
                break
        else:
            raise AssertionError("unreachable: every machine is free after the last end")
        if holding.end > now:
            start, before, first = holding.end, count, stop  # ``before``: free before ``start``
            while first >= 0 and holdings[first].end == start:
                before -= holdings[first].res
                first -= 1
            short = res - before
        else:
            start, short = now, self.nb_machines + 1  # (no slice before it)
        spare, after = count - res, stop + 1  # jobs ending by then after the one that made enough
        while after < len(holdings) and holdings[after].end <= start:
            spare += holdings[after].res
            after += 1
        if planned is not None and planned.res == res and planned.start == start and planned.chosen() is not None:
            mask = planned.mask  # the machines free by then below the highest it chose are the same, or more
        else:
            mask = self._lowest_by(start, res)
        self._planned = _Planned(res, start, spare, short, mask, (1 << mask.bit_length()) - 1)
        return start, mask

    def _lowest_by(self, start: float, res: int) -> int:
        """The ``res`` lowest machines free by ``start`` (every job expected to end by then ended)."""
        holdings = self._by_end
        later = bisect_right(holdings, start, key=_expected_end)  # every job ended by then, those ending then too
        if later <= len(holdings) - later:
            available = self.free_mask
            for holding in holdings[:later]:
                available |= holding.mask
        else:  # fewer still running then: every machine but theirs
            available = 0
            for holding in holdings[later:]:
                available |= holding.mask
            available ^= self._all
        return lowest(available, res)
