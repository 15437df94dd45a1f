"""Conservative backfilling, with batsched ``conservative_bf``'s exact decision rules.

Every waiting job holds a reservation in one :class:`~batsim_classifier_scheduler.core.reservations.ReservationProfile`,
placed by first fit; a job whose reservation falls in the present starts now. At each decision (one per
Batsim message):

- if a job ended in this message, the schedule is compressed: every queued job, in queue order, is
  taken out of the profile and placed again by first fit, while the jobs after it keep their old
  reservations; so a job moves earlier (or stays), never later;
- otherwise only the jobs that arrived in this message are placed, in their order of arrival, around
  the reservations already made.

When estimates change (``replan``, or a running job's expected end moved), or a reservation was left in
the past, the profile keeps only the running jobs and every queued job is placed again in queue order.
Reservations last the job's estimate; a job that starts is planned until its start plus the smaller of
its estimate and its ``bound``.
"""

from __future__ import annotations

from typing import Any, Callable

from batsim_classifier_scheduler.core.algorithm import Algorithm
from batsim_classifier_scheduler.core.messages import Execute
from batsim_classifier_scheduler.core.job import Job
from batsim_classifier_scheduler.core.policies import Policy
from batsim_classifier_scheduler.core.queue import JobQueue
from batsim_classifier_scheduler.core.reservations import ReservationProfile


class ConservativeBackfilling(Algorithm):
    """A reservation for every waiting job, compressed when a job ends."""

    name = "conservative_bf"

    def __init__(self, nb_machines: int, queue: JobQueue, estimate: Callable[[Job], float],
                 backfill_order: Policy | None = None,
                 bound: Callable[[Job], float | None] | None = None, options: Any = None) -> None:
        super().__init__(nb_machines, queue, estimate, backfill_order, bound, options)
        self.profile = ReservationProfile(nb_machines)
        self._stale = False  # estimates or expected ends changed: every reservation is placed again
        self._ends: dict[str, float] = {}  # running job -> its new expected end, applied at the next decision

    def schedule(self, now: float, arrived: list[Job], released: bool, replan: bool = False) -> list[Execute]:
        started: list[Execute] = []
        profile, queue = self.profile, self.queue
        if replan or self._stale or not profile.advance(now):
            self._rebuild(now)
            jobs = queue.ordered(now)
        elif released:
            jobs = queue.ordered(now)
        else:
            jobs = [job for job in arrived if job in queue and job.id not in profile]
        estimate, placed = queue.estimate, profile.jobs
        for job in jobs:  # (re)placed by first fit; started if its reservation begins now
            duration = estimate(job)
            if job.id in placed:
                index = profile.refit(job.id, duration)
            else:
                index = profile.place(job.id, job.res, duration)
            if not index:
                self._run(job, duration, now, started)
        return started

    def _run(self, job: Job, duration: float, now: float, started: list[Execute]) -> None:
        """Start ``job``, placed from now for ``duration``: until its bound if that is shorter."""
        bound = self.bound(job) if self.bound is not None else None
        if bound is not None and bound < duration:
            self.profile.shorten(job.id, now + bound)
        self.queue.remove(job)
        started.append(Execute(job.id, self.profile.jobs[job.id].mask))

    def _rebuild(self, now: float) -> None:
        running = self.profile.running()
        for job_id, end in self._ends.items():
            running[job_id].end = end
        self._ends.clear()
        self.profile.rebuild(now, running)
        self._stale = False

    # --- what the decision core tells ------------------------------------------------

    def reestimate(self, job: Job, estimate: float, now: float) -> None:
        super().reestimate(job, estimate, now)
        self._stale = True

    def expect_end(self, job_id: str, end: float) -> None:
        self._ends[job_id] = end
        self._stale = True

    def release(self, job_id: str) -> None:
        self.profile.remove(job_id)
        self._ends.pop(job_id, None)

    # --- what the decision core asks -------------------------------------------------

    def delays_head(self, job_id: str, end: float, now: float, waiting_slack: float = 0.0) -> bool:
        """Every waiting job holds a reservation here: a running job that outlives its plan may delay any of
        them, so it always counts as in the way."""
        return True

    def earliest_start(self, res: int, duration: float, now: float) -> float:
        """The start first fit gives a job of ``res`` machines and ``duration`` around every reservation."""
        index, _ = self.profile.first_fit(res, duration)
        return max(self.profile.start_of(index), now)
