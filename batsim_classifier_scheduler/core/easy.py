"""EASY backfilling, with batsched ``easy_bf``'s exact decision rules.

At each decision (one per Batsim message):

1. The queue is sorted. If the priority job (the head) changed, the old reservation is
   dropped; the new head starts if it fits now, and so on, until a head does not fit:
   it gets a reservation at the earliest time enough machines are free.
2. If a job ended in this message (machines were released), or estimates changed, every
   queued job is tried in the backfill order: the priority job first (its reservation is
   recomputed), then the others, each starting now if it fits now without touching the
   reservation's machines during its estimate.
3. Otherwise only the jobs that arrived in this message are tried, in their order of
   arrival, as batsched does, even when an arrival became the priority job and moved the
   reservation: the other queued jobs wait for the next job end.

All times are the scheduler's estimates (see ``batsim_classifier_scheduler.knowledge``); the machines are
chosen lowest-numbered first, as batsched's ``basic`` resource selector does.
"""

from __future__ import annotations

from typing import Any, Callable

from batsim_classifier_scheduler.core.algorithm import Algorithm
from batsim_classifier_scheduler.core.messages import Execute
from batsim_classifier_scheduler.core.job import Job
from batsim_classifier_scheduler.core.policies import Policy
from batsim_classifier_scheduler.core.queue import JobQueue


class EasyBackfilling(Algorithm):
    """EASY on one availability profile and one queue."""

    name = "easy"
    backfills = True

    def __init__(self, nb_machines: int, queue: JobQueue, estimate: Callable[[Job], float],
                 backfill_order: Policy | None = None,
                 bound: Callable[[Job], float | None] | None = None, options: Any = None) -> None:
        super().__init__(nb_machines, queue, estimate, backfill_order, bound, options)
        self.priority: Job | None = None  # the job holding the reservation

    def schedule(self, now: float, arrived: list[Job], released: bool, replan: bool = False) -> list[Execute]:
        """Start what can start now; with ``replan`` (estimates changed), the reservation is recomputed."""
        started: list[Execute] = []
        previous = self.priority
        head = self.queue.head(now)
        if head is not previous:
            self._start_heads(now, started)
        if released or replan:
            self._full_pass(now, started)
        else:
            self._try_arrived(now, arrived, started)
        return started

    # --- steps ---------------------------------------------------------------------

    def _start_heads(self, now: float, started: list[Execute]) -> Job | None:
        """Drop the reservation; start queue heads while they fit now; reserve for the first that does not."""
        queue, profile = self.queue, self.profile
        profile.cancel_reservation()
        head = queue.head(now)
        while head is not None:
            duration = queue.estimates[head.id]  # what self.estimate gives, kept by the queue (see _full_pass)
            mask = profile.fits_now(head.res, duration, now)
            if mask is None:
                profile.reserve(head.id, head.res, duration, now)  # its first fit later
                self.priority = head
                return head
            self._start(head, mask, duration, now, started)
            head = queue.head(now)
        self.priority = None
        return None

    def _full_pass(self, now: float, started: list[Execute]) -> None:
        """Recompute the reservation, then try every other queued job in backfill order."""
        profile = self.profile
        if profile.nb_free == 0:
            return
        self._start_heads(now, started)
        if profile.nb_free == 0:
            return
        # the estimates the decision core queued the jobs with (kept up to date: reestimate), the same as
        # self.estimate's, read without its calls
        queue = self.queue
        priority, estimates, reservation = self.priority, queue.estimates, profile.reservation
        pick = None
        if reservation is not None and self.backfill_order is None and queue.indexed:
            # a long queue: only the jobs that may start (JobQueue.backfill_candidates: those narrow enough for the
            # free machines outside the reservation, or short enough to end by its start, with a margin above the
            # rounding of ``now + estimate``), picked out again after each start, which narrows them; on a long
            # queue most jobs are neither
            pick = queue.backfill_candidates(now, reservation.start - now
                                             + (abs(reservation.start) + abs(now)) * 1e-12)
        if pick is None:  # every queued job, in one walk (a short queue: the common case)
            # a copy (starting a job removes it from the queue); the pass skips the jobs wider than the free
            # machines, which only shrink during the pass (a loop over them all costs less than filtering them out)
            ordered = queue.ordered(now)
            if self.backfill_order is not None:  # its keys only for the jobs that fit
                key, free = self.backfill_order.key, profile.nb_free
                ordered = [job for job in ordered if job.res <= free]
                ordered.sort(key=lambda job: key(job, estimates[job.id], now))
            # a job that would overlap the reservation and needs more machines than it leaves free is refused, as
            # fits_now would refuse it, without its mask arithmetic (the free machines outside the reservation are
            # counted once per start)
            outside = profile.free_outside_reservation()
            for job in ordered:
                if job.res <= profile.nb_free and job is not priority:
                    duration = estimates[job.id]
                    if reservation is not None and job.res > outside and now + duration > reservation.start:
                        continue
                    mask = profile.fits_now(job.res, duration, now)
                    if mask is not None:
                        self._start(job, mask, duration, now, started)
                        if profile.nb_free == 0:
                            return
                        outside = profile.free_outside_reservation()
            return
        # ``pick(free, outside, after)``: in backfill order, as (position, job) pairs after the position ``after``
        # of the last job started (from the first when None)
        after = None
        while True:
            outside = profile.free_outside_reservation()
            for position, job in pick(profile.nb_free, outside, after):
                if job.res <= profile.nb_free and job is not priority:
                    duration = estimates[job.id]
                    if job.res > outside and now + duration > reservation.start:
                        continue
                    mask = profile.fits_now(job.res, duration, now)
                    if mask is not None:
                        self._start(job, mask, duration, now, started)
                        after = position
                        break
            else:
                return  # no other job fits
            if profile.nb_free == 0:
                return

    def _try_arrived(self, now: float, arrived: list[Job], started: list[Execute]) -> None:
        queue, profile = self.queue, self.profile
        available = profile.nb_free
        for job in arrived:
            if available <= 0:
                break
            if job is self.priority or job.res > available or job not in queue:
                continue
            duration = queue.estimates[job.id]
            mask = profile.fits_now(job.res, duration, now)
            if mask is not None:
                self._start(job, mask, duration, now, started)
                available -= job.res
