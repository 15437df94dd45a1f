"""The availability profile conservative backfilling plans on: batsched's time slices, with a reservation
for every waiting job.

The profile is a list of slices, each with the machines free in it. Slice 0 begins now; every other
slice begins where some job in the profile (running or reserved) starts or ends, and only there, as in
batsched's ``Schedule``, whose slices are split at each job's end and merged again when the last job
starting or ending at their boundary leaves. A running job expected to end now whose completion has not
been reported yet (it comes in a later message) keeps its machines in slice 0, which then lasts no time
(``[now, now)``); only a job anchored at slice 0 starts now.

First fit follows batsched's ``add_job_first_fit``: the slices are tried in order as anchors; a job
anchored at slice ``i`` spans slice ``i`` and every later slice that begins before ``begin_i +
duration``; it fits if each of them has enough machines free and their intersection does too, and takes
the lowest-numbered machines of that intersection (batsched's ``basic`` selector).
"""

from __future__ import annotations

from bisect import bisect_left
from dataclasses import dataclass
from functools import reduce
from operator import and_

from batsim_classifier_scheduler.core.machines import full_mask, lowest


@dataclass(slots=True)
class Placement:
    """Machines a job holds over ``[start, end)``: a running job, or a waiting job's reservation."""

    start: float
    end: float
    res: int
    mask: int
    running: bool


class ReservationProfile:
    """Machine availability over time on ``nb_machines`` homogeneous machines, by slices."""

    def __init__(self, nb_machines: int, now: float = 0.0) -> None:
        self.nb_machines = nb_machines
        self._reset(now)

    def _reset(self, now: float) -> None:
        self.begins: list[float] = [now]  # slice begins, slice 0 first
        self.free: list[int] = [full_mask(self.nb_machines)]  # the machines free in each slice
        self.counts: list[int] = [self.nb_machines]  # how many
        self.refs: dict[float, int] = {}  # slice begin (but slice 0's) -> jobs starting or ending there
        self.jobs: dict[str, Placement] = {}

    def __contains__(self, job_id: str) -> bool:
        return job_id in self.jobs

    def advance(self, now: float) -> bool:
        """Slice 0 begins at ``now``. False (and nothing changed) if a later slice began before ``now``: a
        running job outlived its expected end, or a reservation passed, and the profile must be rebuilt."""
        begins = self.begins
        if len(begins) > 1 and begins[1] < now:
            return False
        begins[0] = now
        return True

    def running(self) -> dict[str, Placement]:
        """The running jobs' placements, by job id."""
        return {job_id: placement for job_id, placement in self.jobs.items() if placement.running}

    # --- first fit -------------------------------------------------------------------

    def first_fit(self, res: int, duration: float) -> tuple[int, int]:
        """``(slice, machines)``: the first anchor at which ``res`` machines stay free for ``duration``, and
        the lowest-numbered of them; slice 0 means the job starts now. ``res`` must not exceed the machine."""
        end = len(self.begins)
        index, available = self._fit_before(res, duration, end, end, 0)
        return index, lowest(available, res)

    def place(self, job_id: str, res: int, duration: float) -> int:
        """Place a job by first fit for ``duration``: the slice it is anchored at (0: it runs from now)."""
        index, mask = self.first_fit(res, duration)
        self.add(job_id, index, self.begins[index] + duration, res, mask)
        return index

    def refit(self, job_id: str, duration: float) -> int:
        """Place a reserved job again as batsched's compression does (take it out, place it by first fit):
        the slice it is anchored at now.

        The job can only move earlier (its own place is free once it is out), so the anchors before its
        reservation are tried as if its machines were free over its span, and it is taken out only if one
        fits; at its own slice it keeps its machines if they are still the lowest free there."""
        placement = self.jobs[job_id]
        res, mask = placement.res, placement.mask
        begins, free = self.begins, self.free
        lo = bisect_left(begins, placement.start, 1)  # its span: slices lo..hi-1
        hi = bisect_left(begins, placement.end, lo + 1)
        found = self._fit_before(res, duration, lo, hi, mask)
        if found is None and self.refs[placement.start] > 1:  # its slice stays: it fits there again
            available = reduce(and_, free[lo:hi]) | mask
            if available & ((1 << mask.bit_length()) - 1) != mask:  # lower machines came free: take them
                placement.mask = moved = lowest(available, res)
                for j in range(lo, hi):
                    free[j] = (free[j] | mask) & ~moved
            return lo
        self.remove(job_id)
        if found is None:  # not reached: the slice before one that only it starts has its machines free
            return self.place(job_id, res, duration)
        index, available = found
        self.add(job_id, index, begins[index] + duration, res, lowest(available, res))
        return index

    def _fit_before(self, res: int, duration: float, lo: int, hi: int, mask: int) -> tuple[int, int] | None:
        """The first anchor before slice ``lo`` where ``res`` machines stay free for ``duration``, with the
        machines free over its window, or None; ``mask`` is taken as free in slices ``lo..hi-1`` too (no
        window from before ``lo`` reaches past them)."""
        begins, free, counts = self.begins, self.free, self.counts
        i = 0
        while True:
            for i in range(i, lo):  # the next slice with the machines
                if counts[i] >= res:
                    break
            else:
                return None
            window_end = bisect_left(begins, begins[i] + duration, i + 1, hi)
            short = counts[i + 1:window_end if window_end < lo else lo]  # from lo on, its machines are free
            if short and min(short) < res:
                # every anchor up to the last slice short of machines spans that slice
                last = len(short) - 1
                while short[last] >= res:
                    last -= 1
                i += last + 2
                continue
            if window_end <= lo:
                available = reduce(and_, free[i + 1:window_end], free[i])
            else:
                available = reduce(and_, free[i + 1:lo], free[i]) & (reduce(and_, free[lo:window_end]) | mask)
            if available.bit_count() >= res:
                return i, available
            i += 1

    def start_of(self, index: int) -> float:
        return self.begins[index]

    # --- changes ---------------------------------------------------------------------

    def add(self, job_id: str, index: int, end: float, res: int, mask: int) -> Placement:
        """Place ``job_id`` on ``mask`` from slice ``index`` (as :meth:`first_fit` found it) until ``end``;
        at slice 0 it runs."""
        begins, free, counts, refs = self.begins, self.free, self.counts, self.refs
        start = begins[index]
        split = bisect_left(begins, end, index + 1)
        if split < len(begins) and begins[split] == end:
            refs[end] += 1
        else:
            begins.insert(split, end)
            free.insert(split, free[split - 1])
            counts.insert(split, counts[split - 1])
            refs[end] = 1
        taken = ~mask
        for j in range(index, split):
            free[j] &= taken
            counts[j] -= res
        if index:
            refs[start] += 1
        placement = self.jobs[job_id] = Placement(start, end, res, mask, index == 0)
        return placement

    def shorten(self, job_id: str, end: float) -> None:
        """A job that runs from now ends earlier, at ``end``, on the same machines."""
        placement = self.remove(job_id)
        self.add(job_id, 0, end, placement.res, placement.mask)

    def remove(self, job_id: str) -> Placement:
        """Take ``job_id`` out of the profile; slices left with the same jobs as their predecessor merge."""
        placement = self.jobs.pop(job_id)
        begins, free, counts = self.begins, self.free, self.counts
        first = 0 if placement.running else bisect_left(begins, placement.start, 1)
        last = bisect_left(begins, placement.end, first + 1)
        mask, res = placement.mask, placement.res
        for j in range(first, last):
            free[j] |= mask
            counts[j] += res
        self._unref(last)
        if not placement.running:
            self._unref(first)
        return placement

    def _unref(self, index: int) -> None:
        refs, begin = self.refs, self.begins[index]
        if refs[begin] > 1:
            refs[begin] -= 1
            return
        del refs[begin], self.begins[index], self.free[index], self.counts[index]

    def rebuild(self, now: float, running: dict[str, Placement]) -> None:
        """Start again from ``now`` with only ``running`` jobs (their placements; an end already passed is
        taken as ``now``)."""
        self._reset(now)
        for job_id, placement in running.items():
            self.add(job_id, 0, max(placement.end, now), placement.res, placement.mask)
