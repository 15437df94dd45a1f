"""The limits part: which watched jobs get a trial, so that the run keeps the limits a site states
(:mod:`.admission`: at most K of its jobs killed, W of its useful work wasted, at every moment, on any workload).

A job the classifier calls small or uncertain gets its trial only if :class:`~.admission.Admission` grants it; else
it is large (Q, never killed). When trials are scarce, ``order`` spends them: ``arrival`` (first come), ``p-small``
(a job refused one takes the place of the trial not started yet whose forest's P(small) is lowest, if lower than its
own: that one is withdrawn, large) or ``value`` (the same, by P(small) per processor-second a failed trial would
waste). With ``readmit`` waiting, a job refused a trial gets one later, best first, while it still waits in Q and the
limits allow it. The kills part covers the jobs past their trial (:meth:`.kills.Kills.before`).
"""

from __future__ import annotations

import math
from typing import Callable

from batsim_classifier_scheduler.core.algorithm import Algorithm
from batsim_classifier_scheduler.core.decision.admission import Admission
from batsim_classifier_scheduler.core.decision.book import QUEUED, JobBook
from batsim_classifier_scheduler.core.decision.classes import CLASS_METADATA, Classes
from batsim_classifier_scheduler.core.decision.parts import LimitRules
from batsim_classifier_scheduler.core.messages import Decision, SetMetadata
from batsim_classifier_scheduler.core.job import Job, JobClass


class Limits:
    """The admission of trials within the limits, for one simulation."""

    def __init__(self, rules: LimitRules, book: JobBook, algorithm: Algorithm, classes: Classes,
                 planned: Callable[[Job], float], entered_q: Callable[[Job, float], None]) -> None:
        self.rules = rules
        self.admission = Admission(rules.kills, rules.waste)
        self.book, self.algorithm, self.classes = book, algorithm, classes
        #: Tells the promotions that a job entered Q (they watch its wait from then).
        self.planned, self.entered_q = planned, entered_q

    def submitted(self) -> None:
        """A first attempt was submitted (accepted): the limits grow with it."""
        self.admission.submit()

    def admitted(self, job: Job, job_class: JobClass, length: float, now: float,
                 decisions: list[Decision]) -> JobClass:
        """The class of the watched ``job`` (small or uncertain) submitted now: its own if the admission grants it a
        trial of ``length`` (fixed now), else large."""
        admission = self.admission
        key = self._key(job, length)
        if admission.grant(job.id, job.res, length):
            if key is not None:
                admission.track(job.id, key)
            return job_class
        if key is not None:
            withdrawn = admission.displace(job.id, job.res, length, key, self.classes.waiting.__contains__)
            if withdrawn is not None:
                self._withdraw(withdrawn, now, decisions)
                admission.track(job.id, key)
                return job_class
        if self.rules.readmit == "waiting":
            admission.defer(job.id, key if key is not None else -job.subtime, job_class)
        return JobClass.LARGE

    def _key(self, job: Job, length: float) -> float | None:
        """What ``order`` ranks a trial by (higher: kept first); None for ``arrival`` or without probabilities."""
        if self.rules.order == "arrival":
            return None
        p_small = self.classes.p_small(job.id)
        if p_small is None:
            return None
        if self.rules.order == "value":  # its chance to pass per processor-second it risks
            return p_small / (job.res * length) if length > 0 else math.inf
        return p_small

    def _withdraw(self, job_id: str, now: float, decisions: list[Decision]) -> None:
        """The waiting watched ``job_id`` gives its trial up for a likelier one: it waits in Q as a large job."""
        job = self.book.jobs[job_id]
        self.classes.unwatch(job_id)
        self.algorithm.requeue(job, self.planned(job), JobClass.LARGE.rank, now)
        self.entered_q(job, now)
        decisions.append(SetMetadata(job_id, CLASS_METADATA[JobClass.LARGE]))

    def _waiting_large(self, job_id: str) -> bool:
        return (self.book.states[job_id] == QUEUED
                and self.algorithm.queue.rank(self.book.jobs[job_id]) == JobClass.LARGE.rank)

    def deferred_waiting(self) -> bool:
        """readmit waiting: whether a job refused a trial still waits in Q (it may get one, and be killed)."""
        return self.rules.readmit == "waiting" and self.admission.next_deferred(self._waiting_large) is not None

    def readmit(self, now: float, decisions: list[Decision]) -> bool:
        """readmit waiting: the jobs refused a trial that still wait in Q, best first, get one while the limits allow
        it (of the length they would have now); whether any did."""
        if self.rules.readmit != "waiting":
            return False
        readmitted = False
        while (deferred := self.admission.next_deferred(self._waiting_large)) is not None:
            job_id, job_class = deferred
            job = self.book.jobs[job_id]
            length = self.classes.trial_length(job_class, now)
            if not self.admission.readmit(job_id, job.res, length):
                break
            key = self._key(job, length)
            if key is not None:
                self.admission.track(job_id, key)
            self.classes.watch(job_id, length)
            self.algorithm.requeue(job, self.planned(job), job_class.rank, now)
            decisions.append(SetMetadata(job_id, CLASS_METADATA[job_class]))
            readmitted = True
        return readmitted

    def ended(self, job_id: str, killed: bool, killed_by_us: bool, now: float) -> None:
        """The attempt ``job_id`` ended: its work is useful (completed), wasted (killed by the safeguard) or neither
        (killed by someone else); its trial, if open, resolves."""
        work = self.book.jobs[job_id].res * (now - self.book.starts[job_id])
        if not killed or killed_by_us:
            self.admission.ended(job_id, work, killed)
        else:
            self.admission.passed(job_id)

    def summary(self) -> dict[str, int]:
        return {"trials_refused": self.admission.refused, "trials_released": self.admission.released}
