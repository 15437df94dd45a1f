"""The promotion parts: jobs of Q that move ahead of it.

:class:`Promotion` (``promote_after``): a job of Q that has waited that many times its request since its
submission (a retry: since its original's) moves ahead of Q, with the uncertain jobs, in the policy's order; with
``scope`` head it takes the first job of Q with it (one for one, so that promoted jobs do not overtake a killed job
without end), with ahead every job of Q before it. :class:`OverduePromotion` (``promote_overdue``): a job whose total
wait reaches the longest first-attempt wait so far moves ahead of every queue, oldest first; with ``queue-user``
(classification-guaranteed) one job per user at a time; with ``queue-user-ahead`` a job due takes along the older
waiting jobs ahead of it (:mod:`batsim_classifier_scheduler.core.overdue`).
"""

from __future__ import annotations

import heapq
import math
from typing import Callable

from batsim_classifier_scheduler.core.alarms import Alarms
from batsim_classifier_scheduler.core.algorithm import Algorithm
from batsim_classifier_scheduler.core.decision.book import JobBook
from batsim_classifier_scheduler.core.decision.parts import PromotionRules
from batsim_classifier_scheduler.core.messages import Decision
from batsim_classifier_scheduler.core.job import Job, JobClass
from batsim_classifier_scheduler.core.overdue import OVERDUE_RANK, Overdue

#: What the algorithm plans a job with (the decision core's estimate).
Planned = Callable[[Job], float]


class Promotion:
    """``promote_after``: the jobs of Q due to move ahead of it, by when."""

    def __init__(self, rules: PromotionRules, book: JobBook, algorithm: Algorithm, planned: Planned) -> None:
        self.after, self.scope = rules.after, rules.scope
        self.book, self.algorithm, self.planned = book, algorithm, planned
        self._due: list[tuple[float, str]] = []  # (when it leaves Q, job id)

    def enqueued(self, job: Job, request: float) -> None:
        """A job of Q, asking ``request`` seconds, waits from its submission."""
        heapq.heappush(self._due, (job.subtime + self.after * request, job.id))

    def promote(self, now: float) -> bool:
        """Move the jobs due by ``now`` ahead of Q; whether any moved."""
        promoted = False
        due, queue = self._due, self.algorithm.queue
        while due and due[0][0] <= now:
            _, job_id = heapq.heappop(due)
            job = self.book.jobs[job_id]
            if self.book.waiting(job_id) and queue.rank(job) == JobClass.LARGE.rank:
                moved = [job]
                if self.scope != "job":  # the jobs of Q before it in its order: all, or the first
                    in_q = [other for other in queue.ordered(now) if queue.rank(other) == JobClass.LARGE.rank]
                    ahead = in_q[:in_q.index(job)]
                    moved += ahead if self.scope == "ahead" else ahead[:1]
                for other in moved:
                    self.algorithm.requeue(other, self.planned(other), JobClass.UNCERTAIN.rank, now)
                promoted = True
        return promoted


class OverduePromotion:
    """``promote_overdue``: the jobs of Q that become overdue, and those that did (for the tests of its bound)."""

    def __init__(self, scope: str, book: JobBook, algorithm: Algorithm, planned: Planned, alarms: Alarms) -> None:
        self.scope = scope
        #: Whether every job of Q is watched (queue, queue-user), not only the safeguard's retries; whether each user's
        #: moved jobs take one lane (queue-user), whose bound counts only the first attempts started unpromoted; whether
        #: a job due takes along the older waiting jobs ahead of it (queue-user-ahead).
        self.every_job, self.lanes = scope.startswith("queue"), scope.startswith("queue-user")
        self.take_along = scope == "queue-user-ahead"
        self.book, self.algorithm, self.planned, self.alarms = book, algorithm, planned, alarms
        self.overdue = Overdue()
        self.promoted: dict[str, float] = {}  # job id -> when it moved ahead of every queue
        self.due_since: dict[str, float] = {}  # job id -> when its wait reached the bound
        self.entered: dict[str, float] = {}  # job id -> when it entered Q last (watched from then)

    def enqueued(self, job: Job, now: float) -> None:
        """A job entered Q now: watched if it is in scope (every job, or the safeguard's retries)."""
        if self.every_job or job.id in self.book.origin:
            self.entered[job.id] = now
            self.overdue.watch(job.id, job.subtime)

    def started(self, job: Job, now: float) -> None:
        """A job started: on its first attempt, its wait counts towards the bound (queue-user: unless promoted)."""
        if job.id not in self.book.origin and not (self.lanes and job.id in self.promoted):
            self.overdue.started(now - job.subtime)

    def promote(self, now: float) -> bool:
        """Move the watched jobs whose total wait reached the bound ahead of every queue, oldest first (killed-one:
        one at a time; queue-user: one at a time per user, the next once the previous has ended); whether any
        moved."""
        planned_start = None
        if self.scope == "killed-planned":
            def planned_start(job_id: str) -> float:
                job = self.book.jobs[job_id]
                return self.algorithm.earliest_start(job.res, self.planned(job), now)
        waiting = self.book.waiting
        overdue = self.overdue.due(now, waiting, planned_start)
        if self.take_along:
            overdue = [job_id for job_id in overdue if job_id not in self.due_since]  # taken along before
            if overdue:
                overdue += self._older_ahead(overdue, now)
        for job_id in overdue:
            self.due_since[job_id] = now
        if self.scope == "killed-one":
            overdue = self.overdue.one_at_a_time(overdue, self._submission, waiting)
        elif self.lanes:
            overdue = self.overdue.one_at_a_time(overdue, self._submission, waiting, self._holds, self._user)
        for job_id in overdue:
            job = self.book.jobs[job_id]
            self.promoted[job_id] = now
            self.algorithm.requeue(job, self.planned(job), OVERDUE_RANK, now)
        return bool(overdue)

    def _older_ahead(self, due: list[str], now: float) -> list[str]:
        """queue-user-ahead: the waiting jobs not due yet, older than one of the ``due`` jobs and ahead of it in the
        queues' order (Q_small's, the uncertain ones, Q's that the policy orders first), oldest first."""
        queue, due_now = self.algorithm.queue, set(due)
        taken, youngest_behind = [], -math.inf  # the youngest due job after the one looked at, in the order
        for job in reversed(queue.ordered(now)):
            if job.id in due_now:
                youngest_behind = max(youngest_behind, job.subtime)
            elif (job.subtime < youngest_behind and job.id not in self.due_since
                  and queue.rank(job) != OVERDUE_RANK):
                taken.append(job)
        return [job.id for job in sorted(taken, key=lambda job: (job.subtime, job.id))]

    def _submission(self, job_id: str) -> float:
        return self.book.jobs[job_id].subtime

    def _holds(self, job_id: str) -> bool:
        """Whether a promoted job still holds its user's lane: until it ends."""
        return self.book.waiting(job_id) or self.book.running(job_id)

    def _user(self, job_id: str) -> object:
        """The user whose lane a job takes (its workload's ``user`` field; one lane for the jobs without)."""
        return self.book.jobs[job_id].extras.get("user")

    def after(self, now: float, decisions: list[Decision]) -> None:
        """Ask to be called when the next watched job becomes overdue."""
        due = self.overdue.next_due()
        if due is not None:
            decisions.extend(self.alarms.at(due, now))
