"""The availability profile conservative backfilling plans on: batsched's time slices, with a reservation
for every waiting job.

The profile is a list of slices, each with the machines free in it. Slice 0 begins now; every other
slice begins where some job in the profile (running or reserved) starts or ends, and only there, as in
batsched's ``Schedule``, whose slices are split at each job's end and merged again when the last job
starting or ending at their boundary leaves. A running job whose expected end has passed without its
completion being reported holds its machines until ``now``: slice 0 is then empty (``[now, now)``), and
only slice 0's jobs start now.

First fit follows batsched's ``add_job_first_fit``: the slices are tried in order as anchors; a job
anchored at slice ``i`` spans slice ``i`` and every later slice that begins before ``begin_i +
duration``; it fits if each of them has enough machines free and their intersection does too, and takes
the lowest-numbered machines of that intersection (batsched's ``basic`` selector).
"""

from __future__ import annotations

from bisect import bisect_left
from dataclasses import dataclass
from functools import reduce
from math import inf
from operator import and_

from scheduler.core.machines import full_mask, lowest


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

    @property
    def now(self) -> float:
        return self.begins[0]

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

    def refit(self, job_id: str, duration: float) -> tuple[int, int] | None:
        """Where first fit puts a reserved job once taken out of the profile, as batsched's compression does
        (remove, then add again): None if at its reservation (the profile is unchanged), else ``(slice,
        machines)``, and the job is out of the profile.

        The job can only move earlier (its own place is free once it is out), so the anchors before its
        reservation are tried as if its machines were free over its span, and the profile changes only
        when it moves."""
        placement = self.jobs[job_id]
        res, mask = placement.res, placement.mask
        lo = bisect_left(self.begins, placement.start, 1)  # its span: slices lo..hi-1
        hi = bisect_left(self.begins, placement.end, lo + 1)
        found = self._fit_before(res, duration, lo, hi, mask)
        if found is None and self.refs[placement.start] > 1:  # its slice stays: it fits there again
            available = reduce(and_, self.free[lo:hi]) | mask
            if available & ((1 << mask.bit_length()) - 1) == mask:  # its machines are still the lowest free
                return None
            found = lo, available
        self.remove(job_id)
        if found is None:  # not reached: the slice before one that only it starts has its machines free
            return self.first_fit(res, duration)
        return found[0], lowest(found[1], res)

    def _fit_before(self, res: int, duration: float, lo: int, hi: int, mask: int) -> tuple[int, int] | None:
        """The first anchor before slice ``lo`` where ``res`` machines stay free for ``duration``, with the
        machines free over its span, or None; ``mask`` is taken as free in slices ``lo..hi-1`` too (no
        window from before ``lo`` reaches past them).

        The slices short of machines split the others into runs; an anchor fits only if its window ends
        before the next short slice, so each run is tried from its first slice while windows end in time,
        and only their machines are intersected."""
        begins, free = self.begins, self.free
        short = bytes(map(res.__gt__, self.counts[:lo]))  # 1: fewer than res machines free
        first = short.find(0)
        while first >= 0:
            barrier = short.find(1, first)
            limit = begins[barrier] if barrier >= 0 else inf
            for i in range(first, barrier if barrier >= 0 else lo):
                end = begins[i] + duration
                if end > limit:
                    break
                window_end = bisect_left(begins, end, i + 1, hi)
                if window_end <= lo:
                    available = reduce(and_, free[i + 1:window_end], free[i])
                else:
                    available = reduce(and_, free[i + 1:lo], free[i]) & (reduce(and_, free[lo:window_end]) | mask)
                if available.bit_count() >= res:
                    return i, available
            if barrier < 0:
                return None
            first = short.find(0, barrier)
        return None

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
