"""The kills part: the safeguard (:mod:`batsim_classifier_scheduler.core.safeguard`) and when it kills a watched job past its trial.

``kill_on`` deadline kills it then (the paper). demand lets it run on, overtime, until the first waiting job could
start now with its processors. blocking kills it at its deadline only if, planned to run on to its request, it
would delay the first waiting job that goes before it (``kill_for``) by more than that job's slack
(``head_slack`` x its request when a kill would not let it start now anyway); otherwise it runs on, planned with its
request, as EASY would have backfilled it. patient is blocking whose job in the way runs on until that waiting job
could start now. A killed job is resubmitted as large, keeping its original's place in the queue order.
"""

from __future__ import annotations

from batsim_classifier_scheduler.core.alarms import Alarms
from batsim_classifier_scheduler.core.algorithm import Algorithm
from batsim_classifier_scheduler.core.decision.admission import Admission
from batsim_classifier_scheduler.core.decision.book import JobBook
from batsim_classifier_scheduler.core.decision.parts import KillRules, RuntimeKnowledge
from batsim_classifier_scheduler.core.messages import Decision
from batsim_classifier_scheduler.core.job import Job, JobClass
from batsim_classifier_scheduler.core.safeguard import Safeguard


class Kills:
    """The safeguard and its kill rules, for one simulation."""

    def __init__(self, rules: KillRules, book: JobBook, algorithm: Algorithm, knowledge: RuntimeKnowledge,
                 alarms: Alarms, profile_reuse: bool) -> None:
        self.rules = rules
        self.book = book
        self.algorithm = algorithm
        self.knowledge = knowledge
        self.safeguard = Safeguard(alarms, profile_reuse, on_demand=rules.kill_on != "deadline")
        #: The limits' admission (:mod:`.limits`), when the site states limits: it covers the jobs past their trial.
        self.admission: Admission | None = None

    @property
    def kills(self) -> int:
        return self.safeguard.kills

    @property
    def pending(self) -> bool:
        """Whether a kill may still happen."""
        return self.safeguard.pending

    def before(self, now: float, decisions: list[Decision]) -> bool:
        """Before the algorithm schedules: the deadlines that came, and (blocking, patient) which jobs past their
        trial are in the way. Whether the plan changed (a job was spared)."""
        safeguard = self.safeguard
        decisions.extend(safeguard.due(now, self.book.running))
        if self.admission is not None and safeguard.overtime:
            return self._limited_kills(now, decisions)
        if self.rules.kill_on in ("blocking", "patient") and safeguard.overtime:
            return self._kill_blocking(now, decisions)
        return False

    def _limited_kills(self, now: float, decisions: list[Decision]) -> bool:
        """Under the limits: the jobs past their trial that may still be killed are covered up to the time they have
        run, or released (they run on as large jobs, planned with their request, never killed); then the kills of
        ``kill_on`` blocking or patient, and the jobs spared then can no longer be killed: their trial passed. Whether
        the plan changed."""
        replan = False
        safeguard, book, admission = self.safeguard, self.book, self.admission
        for job_id in list(safeguard.overtime):
            job = book.jobs[job_id]
            if not admission.cover(job_id, job.res * (now - book.starts[job_id])):
                safeguard.spare(job_id)
                self.algorithm.expect_end(job_id, book.starts[job_id] + self.knowledge.estimate(job))
                replan = True
        overtime = list(safeguard.overtime)
        if self.rules.kill_on in ("blocking", "patient") and overtime:
            replan |= self._kill_blocking(now, decisions)
            for job_id in overtime:
                if job_id not in safeguard.overtime and job_id not in safeguard.killing:
                    admission.passed(job_id)
        return replan

    def started(self, job: Job, trial: float, now: float, decisions: list[Decision]) -> None:
        """A watched job started: the safeguard acts once it has run ``trial`` seconds."""
        decisions.extend(self.safeguard.watch(job.id, now + trial, now, job.res))

    def after(self, now: float, decisions: list[Decision]) -> None:
        """Once the algorithm has scheduled: (demand, patient) kill the jobs past their trial whose processors the
        first waiting job needs to start now, among those it goes before (requeued, they would wait behind it)."""
        if self.rules.kill_on not in ("demand", "patient") or not self.safeguard.overtime:
            return
        queue = self.algorithm.queue
        head = queue.head(now)
        if head is None:
            return
        rank, key = self._kill_rank(head), self._kill_key(head)
        jobs = self.book.jobs
        among = [job_id for job_id in self.safeguard.overtime
                 if queue.outranks(head, jobs[job_id], rank, self.knowledge.estimate(jobs[job_id]), now, key)]
        decisions.extend(self.safeguard.needed(head.res, self.book.free, among))

    def ended(self, job_id: str) -> bool:
        """A running job ended: whether the safeguard killed it."""
        return self.safeguard.ended(job_id)

    def resubmit(self, killed: Job, original: Job, now: float) -> tuple[Job, list[Decision]]:
        """The large job that replaces a killed one (``<id>#<attempt>``), and the decisions that register it."""
        return self.safeguard.resubmit(killed, original, self.book.attempt(killed.id) + 1, now)

    def _kill_rank(self, head: Job) -> int:
        """The queue a job past its trial is ranked in when deciding whether the first waiting job, ``head``, goes
        before it: the one it would wait in again (``kill_for`` requeued: Q); the uncertain jobs' (``policy``); or
        the head's own, unless the head is classified small (``order``)."""
        if self.rules.kill_for == "requeued":
            return JobClass.LARGE.rank
        if self.rules.kill_for == "policy":
            return JobClass.UNCERTAIN.rank
        return max(self.algorithm.queue.rank(head), JobClass.UNCERTAIN.rank)

    def _kill_key(self, head: Job) -> float | None:
        """The estimate the first waiting job is ordered by against a job past its trial: ``kill_for`` order compares
        their requests; None: the queue's."""
        return self.knowledge.estimate(head) if self.rules.kill_for == "order" else None

    def _kill_blocking(self, now: float, decisions: list[Decision]) -> bool:
        """Each job past its deadline that the first waiting job goes before and would delay, planned to run on to
        its request, by more than its slack is in its way: blocking kills it, patient leaves it overtime. The others
        run on, planned with their request. Whether one did (the plan changed)."""
        spared, victims = False, []
        queue, algorithm, safeguard = self.algorithm.queue, self.algorithm, self.safeguard
        head = queue.head(now)
        if head is not None:
            rank, key, head_slack = self._kill_rank(head), self._kill_key(head), self._head_slack(head)
        for job_id in list(safeguard.overtime):
            job = self.book.jobs[job_id]
            estimate = self.knowledge.estimate(job)
            end = self.book.starts[job_id] + estimate
            if (head is not None and queue.outranks(head, job, rank, estimate, now, key)
                    and algorithm.delays_head(job_id, end, now, head_slack)):
                if self.rules.kill_on == "blocking":
                    victims.append(job_id)  # patient: it runs on, overtime, until that job could start now
            else:
                safeguard.spare(job_id)
                algorithm.expect_end(job_id, end)
                spared = True
        decisions.extend(safeguard.kill(victims))
        return spared

    def _head_slack(self, head: Job) -> float:
        """How much longer a job past its trial may hold up the first waiting job when a kill would not let it start
        now anyway: ``head_slack`` x its request; none for a head classified small or overdue (ranked ahead of the
        uncertain jobs: nothing may delay it)."""
        if not self.rules.head_slack or self.algorithm.queue.rank(head) <= JobClass.SMALL.rank:
            return 0.0
        return self.rules.head_slack * self.knowledge.estimate(head)
