"""batsched's ``easy_bf_fast``: a cheaper EASY whose priority job keeps the expected start it was given.

The priority job is the head of the queue; its expected start is the first expected end of a running job
by which enough machines are free, computed when it becomes the priority job and not moved when jobs end
early. At each decision (one per Batsim message):

1. If a job ended in this message (or estimates changed, which also recomputes the expected start):
   the priority job starts if enough machines are free, then the next queued jobs while they fit; the
   first that does not becomes the priority job. Then every other queued job starts if it fits now and
   ends (by its estimate) no later than the priority job's expected start.
2. The jobs that arrived in this message are tried in their order of arrival: one that fits now starts
   if there is no priority job or if it ends by the priority job's expected start; one that does not
   fit becomes the priority job if there is none. An arrival that the queue order puts ahead of the
   priority job (a higher tier, another order) takes its place: it starts if it fits, else it becomes
   the priority job.

Unlike EASY, a job never backfills on the machines the priority job leaves unused, and the expected
start is not a reservation of machines. Machines are chosen lowest-numbered first.
"""

from __future__ import annotations

from typing import Any, Callable

from batsim_classifier_scheduler.core.algorithm import Algorithm
from batsim_classifier_scheduler.core.messages import Execute
from batsim_classifier_scheduler.core.job import Job
from batsim_classifier_scheduler.core.policies import Policy
from batsim_classifier_scheduler.core.queue import JobQueue


class EasyBackfillingFast(Algorithm):
    """EASY with a priority job whose expected start is kept until it starts."""

    name = "easy_bf_fast"
    backfills = True

    def __init__(self, nb_machines: int, queue: JobQueue, estimate: Callable[[Job], float],
                 backfill_order: Policy | None = None,
                 bound: Callable[[Job], float | None] | None = None, options: Any = None) -> None:
        super().__init__(nb_machines, queue, estimate, backfill_order, bound, options)
        self.priority: Job | None = None
        self.priority_start = 0.0  # the priority job's expected start

    def schedule(self, now: float, arrived: list[Job], released: bool, replan: bool = False) -> list[Execute]:
        started: list[Execute] = []
        arrivals = {job.id for job in arrived}
        old = [job for job in self.queue.ordered(now) if job.id not in arrivals] if released or replan else []
        if self.priority is not None and (replan or (old and old[0] is not self.priority)):
            self._elect(old, now, started)  # estimates changed, or the head changed (starvation)
        elif released and self.priority is not None and self.priority.res <= self.profile.nb_free:
            self._start_now(self.priority, now, started)
            self._elect(old[1:], now, started)
        if (released or replan) and self.priority is not None and self.profile.nb_free > 0:
            self._backfill(old, now, started)
        for job in arrived:
            if job in self.queue:
                self._arrive(job, now, started)
        return started

    # --- steps ---------------------------------------------------------------------

    def _elect(self, jobs: list[Job], now: float, started: list[Execute]) -> None:
        """Start ``jobs`` (queued, in queue order) while they fit; the first that does not becomes the
        priority job."""
        self.priority = None
        for job in jobs:
            if job.res > self.profile.nb_free:
                self._prioritise(job, now)
                return
            self._start_now(job, now, started)

    def _backfill(self, old: list[Job], now: float, started: list[Execute]) -> None:
        """Start the other queued jobs that fit now and end by the priority job's expected start."""
        profile, estimate, priority = self.profile, self.queue.estimate, self.priority
        candidates = [job for job in old if job in self.queue and job is not priority]
        if self.backfill_order is not None:
            key = self.backfill_order.key
            candidates.sort(key=lambda job: key(job, estimate(job), now))
        for job in candidates:
            if job.res <= profile.nb_free and now + estimate(job) <= self.priority_start:
                self._start_now(job, now, started)
                if profile.nb_free == 0:
                    return

    def _arrive(self, job: Job, now: float, started: list[Execute]) -> None:
        fits = job.res <= self.profile.nb_free
        if self.priority is not None and self.queue.head(now) is job:  # ahead of the priority job
            if fits:
                self._start_now(job, now, started)
                self._prioritise(self.priority, now)
            else:
                self._prioritise(job, now)
        elif fits and (self.priority is None or now + self.queue.estimate(job) <= self.priority_start):
            self._start_now(job, now, started)
        elif not fits and self.priority is None:
            self._prioritise(job, now)

    # --- helpers -------------------------------------------------------------------

    def _prioritise(self, job: Job, now: float) -> None:
        self.priority = job
        self.priority_start = self.profile.first_fit(job.res, 0.0, now).start

    def _start_now(self, job: Job, now: float, started: list[Execute]) -> None:
        profile = self.profile
        mask = profile.fits_now(job.res, 0.0, now)
        self._start(job, mask, self.queue.estimate(job), now, started)
