"""The decision core: Batsim-level events in, decisions out, one instance per simulation.

:meth:`DecisionCore.decide` is pure: no I/O, no clock. The core is given its :class:`~.parts.Parts`, built from a
config by the composition root, ``batsim_classifier_scheduler.compose.build_core`` (the one place that reads files).
It keeps the book of jobs (:mod:`.book`) and drives its scheduling algorithm; the parts beside the algorithm each own
their state and read only their own rules: the classes and trials (:mod:`.classes`), the safeguard's kills
(:mod:`.kills`), the promotions out of Q (:mod:`.promotion`), the runtime predictions (:mod:`.predictions`) and the
limits a site states (:mod:`.limits`). As in batsched's ``ISchedulingAlgorithm``, the events of a message are
recorded first, then one round of decisions is made. The front ends read what the core has to report through
:meth:`DecisionCore.outcome` only.
"""

from __future__ import annotations

import logging
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Iterable

from batsim_classifier_scheduler.core.alarms import Alarms
from batsim_classifier_scheduler.core.algorithm import Algorithm
from batsim_classifier_scheduler.core.decision.book import COMPLETED, KILLED, QUEUED, REJECTED, RUNNING, JobBook
from batsim_classifier_scheduler.core.decision.classes import CLASS_METADATA, Classes
from batsim_classifier_scheduler.core.decision.kills import Kills
from batsim_classifier_scheduler.core.decision.limits import Limits
from batsim_classifier_scheduler.core.decision.parts import Parts
from batsim_classifier_scheduler.core.decision.predictions import PredictionWatch
from batsim_classifier_scheduler.core.decision.promotion import OverduePromotion, Promotion
from batsim_classifier_scheduler.core.messages import (
    KILLED as COMPLETED_KILLED,
    AnswerWaitingTime,
    Decision,
    Event,
    JobCompleted,
    JobKilled,
    JobSubmitted,
    NoMoreStaticJobs,
    RegistrationFinished,
    Reject,
    RequestedCall,
    SetMetadata,
    SimulationBegins,
    SimulationEnds,
    Unhandled,
    WaitingTimeQuery,
)
from batsim_classifier_scheduler.core.job import Job, JobClass
from batsim_classifier_scheduler.core.queue import JobQueue
from batsim_classifier_scheduler.errors import ConfigError, SimulationError

if TYPE_CHECKING:
    import pandas as pd  # annotations only: serve for EASY does not import pandas

log = logging.getLogger(__name__)
#: Q's class and rank, read at every submission (an enum's member read through its class costs ten times a global's).
_LARGE = JobClass.LARGE
_LARGE_RANK = JobClass.LARGE.rank


@dataclass(frozen=True)
class Outcome:
    """What a decision core has to report on its simulation (:meth:`DecisionCore.outcome`)."""

    #: ``submitted`` (attempts), ``completed``, ``killed`` and ``rejected`` counts, and ``reject_reasons``.
    accounting: dict[str, Any]
    #: The classifier's quality over the jobs whose class is known, with ``nb_small`` and ``kills``.
    classifier: dict[str, Any] | None = None
    #: The runtime predictions' accuracy (MAE, R², RA, AI, deadline misses...).
    predictions: dict[str, Any] | None = None
    #: Tables of what the scheduler learnt, by the suffix of the file they go to (``PREFIX_<suffix>.csv``).
    reports: dict[str, pd.DataFrame] = field(default_factory=dict)
    #: The classifier as trained (``model.save(path)`` writes it for ``--model``), None without one.
    model: Any = None


class DecisionCore:
    """One scheduler instance for one simulation.

    Front ends call :meth:`decide` once per Batsim message with that message's events, and send back the decisions
    it returns, in order. ``parts`` are what a config asks for, built by ``batsim_classifier_scheduler.compose.build_core``.
    """

    def __init__(self, parts: Parts) -> None:
        self.parts = parts
        self.knowledge = parts.knowledge
        self.book = JobBook()
        self.alarms = Alarms()
        self.algorithm: Algorithm | None = None  # made at SIMULATION_BEGINS, with the parts beside it
        self.classes: Classes | None = None
        self.kills: Kills | None = None
        self.limits: Limits | None = None
        self.promotion: Promotion | None = None
        self.overdue: OverduePromotion | None = None
        self.prediction_watch: PredictionWatch | None = None
        self.dynamic_jobs = False
        self.registration_finished = False
        self.no_more_static_jobs = False
        self.ended = False
        # whether any part beside the algorithm acts at a decision (set at SIMULATION_BEGINS); without, decide
        # skips them
        self._extras = False

    @property
    def jobs(self) -> dict[str, Job]:
        return self.book.jobs

    @property
    def states(self) -> dict[str, str]:
        return self.book.states

    @property
    def predictions(self) -> Any:
        """The runtime predictions (``batsim_classifier_scheduler.knowledge.predictors.Predictions``), or None."""
        return self.parts.predictions

    # --- the one entry point -------------------------------------------------------

    def decide(self, now: float, events: Iterable[Event]) -> list[Decision]:
        decisions: list[Decision] = []
        arrived: list[Job] = []
        released = False
        for event in events:
            if isinstance(event, JobSubmitted):
                job = self._submit(event.job, now, decisions)
                if job is not None:
                    arrived.append(job)
            elif isinstance(event, JobCompleted):
                released = True
                resubmitted = self._complete(event, now, decisions)
                if resubmitted is not None:
                    arrived.append(resubmitted)
            elif isinstance(event, JobKilled):
                pass  # JOB_COMPLETED(COMPLETED_KILLED) came first and released the machines
            elif isinstance(event, SimulationBegins):
                self._begin(event)
            elif isinstance(event, NoMoreStaticJobs):
                self.no_more_static_jobs = True
            elif isinstance(event, SimulationEnds):
                self.ended = True
            elif isinstance(event, RequestedCall):
                pass  # deadlines (safeguard, predictions) are checked at every decision
            elif isinstance(event, WaitingTimeQuery):
                decisions.append(AnswerWaitingTime(event.job.id, self.estimate_waiting_time(event.job, now)))
            elif isinstance(event, Unhandled):
                log.info("ignoring %s event at %g: %s", event.type, event.time, event.data)
            else:
                raise SimulationError(f"unsupported event {type(event).__name__}")
        if self.algorithm is None or self.ended:
            return decisions
        replan = self._before_scheduling(now, decisions) if self._extras else False
        states = self.book.states
        for execute in self.algorithm.schedule(now, arrived, released, replan):
            states[execute.job_id] = RUNNING
            decisions.append(execute)
            if self._extras:
                self._started(self.book.jobs[execute.job_id], now, decisions)
        if self._extras:
            self._after_scheduling(now, decisions)
        return decisions

    # --- the parts beside the algorithm ----------------------------------------------

    def _before_scheduling(self, now: float, decisions: list[Decision]) -> bool:
        """What the parts beside the algorithm do before it schedules; whether the algorithm must replan."""
        self.alarms.passed(now)
        replan = self.promotion.promote(now) if self.promotion is not None else False
        if self.limits is not None:
            replan |= self.limits.readmit(now, decisions)
        if self.overdue is not None:
            replan |= self.overdue.promote(now)
        if self.kills is not None:
            replan |= self.kills.before(now, decisions)
        if self.prediction_watch is not None:
            replan |= self.prediction_watch.before(now, decisions)
        return replan

    def _started(self, job: Job, now: float, decisions: list[Decision]) -> None:
        """What the parts beside the algorithm do when a job starts (after its EXECUTE_JOB)."""
        book = self.book
        book.starts[job.id] = now
        book.free -= job.res
        if self.overdue is not None:
            self.overdue.started(job, now)
        if self.classes is not None:
            self.classes.started(job.id)
            trial = self.classes.trial.get(job.id)
            if self.kills is not None and trial is not None:
                self.kills.started(job, trial, now, decisions)
        if self.prediction_watch is not None:
            self.prediction_watch.started(job, now, decisions)

    def _after_scheduling(self, now: float, decisions: list[Decision]) -> None:
        """What the parts beside the algorithm do once it has scheduled (kills that make room, the next overdue
        job's alarm, the end of registrations)."""
        if self.kills is not None:
            self.kills.after(now, decisions)
        if self.overdue is not None:
            self.overdue.after(now, decisions)
        if self.dynamic_jobs and not self.registration_finished and self._registration_over():
            self.registration_finished = True
            decisions.append(RegistrationFinished())

    def _registration_over(self) -> bool:
        """No job can be registered any more: no watched job may still be killed."""
        if self.kills is None:
            return True
        if self.limits is not None and self.limits.deferred_waiting():
            return False  # a job refused a trial may still get one, and be killed
        return self.no_more_static_jobs and not self.classes.waiting and not self.kills.pending

    # --- event handlers ------------------------------------------------------------

    def _begin(self, event: SimulationBegins) -> None:
        if self.algorithm is not None:
            raise SimulationError("SIMULATION_BEGINS received twice")
        if event.nb_resources <= 0:
            raise SimulationError(f"SIMULATION_BEGINS: nb_resources must be positive, got {event.nb_resources}")
        parts, book = self.parts, self.book
        book.nb_machines = book.free = event.nb_resources
        self.dynamic_jobs = bool(event.config.get("dynamic-jobs-enabled", False))
        if parts.safeguard and not self.dynamic_jobs:
            raise ConfigError("the kill safeguard resubmits killed jobs: run Batsim with --enable-dynamic-jobs")
        if parts.classifier is not None:
            self.classes = Classes(parts.classifier(event.time), parts.trials, parts.labels.get("classifier", {}))
        rules = parts.queue
        queue = JobQueue(parts.policy, rules.starvation_threshold, rules.starvation_scope,
                         self.knowledge.estimate if rules.order_by == "estimate" else None)
        self.algorithm = parts.algorithm(book.nb_machines, queue, self._estimate, parts.backfill_order,
                                         self._bound if parts.trials.divider_estimates != "none" else None)
        if parts.safeguard:
            self.kills = Kills(parts.kills, book, self.algorithm, self.knowledge, self.alarms,
                               bool(event.config.get("profile-reuse-enabled", False)))
        if parts.promotion.after:
            self.promotion = Promotion(parts.promotion, book, self.algorithm, self._estimate)
        if parts.promotion.overdue != "none":
            self.overdue = OverduePromotion(parts.promotion.overdue, book, self.algorithm, self._estimate, self.alarms)
        if parts.limits.active and self.kills is not None:
            self.limits = Limits(parts.limits, book, self.algorithm, self.classes, self._estimate, self._entered_q)
            self.kills.admission = self.limits.admission
        if parts.predictions is not None:
            self.prediction_watch = PredictionWatch(parts.predictions, book, self.algorithm, self._estimate, self.alarms,
                                                     parts.labels.get("predictions", {}))
        self._extras = (self.classes is not None or self.kills is not None or self.prediction_watch is not None
                        or self.promotion is not None or self.dynamic_jobs or self.overdue is not None)

    def _submit(self, job: Job, now: float, decisions: list[Decision]) -> Job | None:
        if self.algorithm is None:
            raise SimulationError(f"job {job.id!r} submitted before SIMULATION_BEGINS")
        book = self.book
        if job.id in book.origin:
            return None  # Batsim's echo of a job we registered (--acknowledge-dynamic-jobs)
        if job.id in book.jobs:
            raise SimulationError(f"job {job.id!r} submitted twice")
        book.jobs[job.id] = job
        reason = self._rejection_reason(job)
        if reason:
            book.states[job.id] = REJECTED
            book.reject_reasons[job.id] = reason
            decisions.append(Reject(job.id, reason))
            return None
        if self.limits is not None:
            self.limits.submitted()
        job_class = _LARGE
        if self.classes is not None:
            job_class = self.classes.classify(job, now)
            if job_class is not _LARGE:
                trial = self.classes.trial_length(job_class, now)
                if self.limits is not None:
                    job_class = self.limits.admitted(job, job_class, trial, now, decisions)
                if job_class is not _LARGE:
                    self.classes.watch(job.id, trial)
            decisions.append(SetMetadata(job.id, CLASS_METADATA[job_class]))
        book.states[job.id] = QUEUED
        if self.prediction_watch is not None:
            self.prediction_watch.submitted(job, now)
        self._enqueue(job, job_class.rank, now)
        return job

    def _rejection_reason(self, job: Job) -> str | None:
        if job.res <= 0:
            return f"requests {job.res} processors"
        if job.res > self.book.nb_machines:
            return f"requests {job.res} processors, the platform has {self.book.nb_machines}"
        estimate = self.knowledge.estimate(job)
        if estimate is None or estimate <= 0:
            return f"no runtime estimate ({self.knowledge.name} estimates need a positive walltime)"
        return None

    def _complete(self, event: JobCompleted, now: float, decisions: list[Decision]) -> Job | None:
        """Release the job's machines; learn its runtime; resubmit it if the safeguard killed it."""
        job_id, book = event.job_id, self.book
        state = book.states.get(job_id)
        if state is None:
            raise SimulationError(f"JOB_COMPLETED for unknown job {job_id!r}")
        if state != RUNNING:
            raise SimulationError(f"JOB_COMPLETED for job {job_id!r}, which is {state}, not running")
        self.algorithm.release(job_id)
        job = book.jobs[job_id]
        if self._extras:  # only they read free and starts
            book.free += job.res
        if self.prediction_watch is not None:
            self.prediction_watch.ended(job, now, decisions)
        original = book.origin.get(job_id, job_id)
        killed_by_us = self.kills is not None and self.kills.ended(job_id)
        if self.limits is not None:
            self.limits.ended(job_id, event.state == COMPLETED_KILLED, killed_by_us, now)
        if event.state != COMPLETED_KILLED:
            book.states[job_id] = COMPLETED
            if self.classes is not None:
                self.classes.completed(book.jobs[original], now - book.starts[job_id], now)
            return None
        book.states[job_id] = KILLED
        if not killed_by_us:
            return None  # killed by someone else: nothing to resubmit
        retry, registration = self.kills.resubmit(job, book.jobs[original], now)
        decisions.extend(registration)
        book.origin[retry.id] = original
        book.jobs[retry.id] = retry
        book.states[retry.id] = QUEUED
        if self.prediction_watch is not None:
            self.prediction_watch.submitted(retry, now)
        self._enqueue(retry, _LARGE_RANK, now)
        return retry

    def _enqueue(self, job: Job, rank: int, now: float) -> None:
        """``job`` waits in queue ``rank``; in Q, the promotions watch it."""
        self.algorithm.enqueue(job, self._estimate(job), rank, now)
        if rank == _LARGE_RANK and (self.promotion is not None or self.overdue is not None):
            self._entered_q(job, now)

    def _entered_q(self, job: Job, now: float) -> None:
        """``job`` entered Q now (submitted or resubmitted large, or a trial withdrawn): the promotions watch it."""
        if self.promotion is not None:
            self.promotion.enqueued(job, self.knowledge.estimate(job))
        if self.overdue is not None:
            self.overdue.enqueued(job, now)

    def _estimate(self, job: Job) -> float:
        """The runtime the algorithm plans a job with: the knowledge's estimate, bounded by its trial for a job the
        safeguard watches when ``divider_estimates`` is ``all``."""
        estimate = self.knowledge.estimate(job)
        if estimate is None:
            raise SimulationError(f"job {job.id!r}: no runtime estimate")
        return self.classes.planned(job.id, estimate) if self.classes is not None else estimate

    def _bound(self, job: Job) -> float | None:
        """A running job's runtime bound: its trial for a job the safeguard watches (it acts then)."""
        return self.classes.trial.get(job.id)

    def close(self) -> None:
        """The simulation is over and its outcome taken: the core lets go of its algorithm and the parts beside it,
        which hold it in return (its bound methods), so that reference counting frees them and the jobs they keep
        without the cyclic collector (which would walk them all)."""
        self.algorithm = self.classes = self.kills = self.limits = None
        self.promotion = self.overdue = self.prediction_watch = None

    # --- queries and accounting ----------------------------------------------------

    def estimate_waiting_time(self, job: Job, now: float) -> float:
        """How long ``job`` would wait if submitted now: the algorithm's earliest start for it given the running
        jobs and the reservations it holds (EASY's one, conservative backfilling's all); other queued jobs are not
        counted otherwise, so this is a lower bound. -1 when the job can never run or has no estimate."""
        if self.algorithm is None or self._rejection_reason(job):
            return -1.0
        return self.algorithm.earliest_start(job.res, self._estimate(job), now) - now

    def outcome(self) -> Outcome:
        """Accounting, the classifier's and the predictions' summaries, and the tables of what was learnt."""
        book = self.book
        states = Counter(book.states.values())
        accounting = {"submitted": len(book.states), "completed": states[COMPLETED], "killed": states[KILLED],
                      "rejected": states[REJECTED], "reject_reasons": dict(sorted(book.reject_reasons.items()))}
        classifier = predictions = model = None
        reports: dict[str, pd.DataFrame] = {}
        if self.classes is not None:
            classifier = self.classes.summary(self.kills.kills if self.kills is not None else 0,
                                              self.limits.summary() if self.limits is not None else {})
            model = self.classes.classifier
            reports["classifier_weeks"] = model.weekly_report()
            reports["feature_importances"] = model.feature_importances().reset_index()
        if self.prediction_watch is not None:
            predictions, reports["predictions"] = self.prediction_watch.summary()
        return Outcome(accounting, classifier, predictions, reports, model)
