"""The decision core: Batsim-level events in, decisions out, one instance per simulation.

:meth:`DecisionCore.decide` is pure: no I/O, no clock. The core is given its parts, built from its
config by the composition root, :func:`scheduler.compose.build_core` (the one place that reads files):
the queue policy, the scheduling algorithm, the runtime knowledge and predictions, and the classifier.
The front ends read what it has to report through :meth:`DecisionCore.outcome` only. What the core does
beside its algorithm (siblings, promotions, the safeguard's kills, predictions) is :mod:`scheduler.decision_extras`.
"""

from __future__ import annotations

import heapq
import logging
import math
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Iterable

from scheduler.config import SchedulerConfig
from scheduler.core.admission import Admission
from scheduler.core.alarms import Alarms
from scheduler.core.algorithm import Algorithm
from scheduler.core.events import (
    KILLED as COMPLETED_KILLED,
    AnswerWaitingTime,
    Decision,
    Event,
    JobCompleted,
    JobKilled,
    JobSubmitted,
    NoMoreStaticJobs,
    Reject,
    RequestedCall,
    SetMetadata,
    SimulationBegins,
    SimulationEnds,
    Unhandled,
    WaitingTimeQuery,
)
from scheduler.core.job import Job
from scheduler.core.kill_budget import KillBudget
from scheduler.core.overdue import Overdue
from scheduler.core.queue import JobQueue
from scheduler.core.safeguard import Safeguard
from scheduler.core.trial_history import TrialHistory
from scheduler.decision_extras import (
    CLASS_METADATA,
    COMPLETED,
    KILLED,
    QUEUED,
    REJECTED,
    RUNNING,
    DecisionExtras,
    sibling_key,
)
from scheduler.errors import ConfigError, SimulationError
from scheduler.knowledge.choices import JobClass
from scheduler.parts import Classifier, Parts
from scheduler.variants import HISTORY_GATES, PAUSE_GATES

if TYPE_CHECKING:
    import pandas as pd  # annotations only: serve for EASY does not import pandas

log = logging.getLogger(__name__)


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


class DecisionCore(DecisionExtras):
    """One scheduler instance for one simulation.

    Front ends call :meth:`decide` once per Batsim message with that message's events,
    and send back the decisions it returns, in order. ``parts`` are what ``config`` asks for,
    built by :func:`scheduler.compose.build_core`.
    """

    def __init__(self, config: SchedulerConfig, parts: Parts) -> None:
        self.config = config
        self.parts = parts
        self.knowledge = parts.knowledge
        self.predictions = parts.predictions  # runtime predictions with a correction rule, or None
        self._prediction_ends: list[tuple[float, str]] = []  # (predicted end, running job id)
        self.alarms = Alarms()
        self._replan = False  # predictions changed since the last decision
        self.classifier: Classifier | None = None  # started at SIMULATION_BEGINS
        self.safeguard: Safeguard | None = None
        self.algorithm: Algorithm | None = None
        self.jobs: dict[str, Job] = {}
        self.states: dict[str, str] = {}
        self.reject_reasons: dict[str, str] = {}
        # jobs classified small or uncertain (ahead of Q, watched by the safeguard) -> the divider then in force
        self.small: dict[str, float] = {}
        self.small_waiting: set[str] = set()  # those not started yet
        self._siblings: dict[tuple, set[str]] = {}  # (user, processors, p̃) -> the waiting watched jobs
        self._running_siblings: dict[tuple, dict[str, float]] = {}  # (user, processors, p̃) -> running job -> start
        self.origin: dict[str, str] = {}  # resubmitted attempt id -> original job id
        self.starts: dict[str, float] = {}  # job id -> its start (kept only for the parts beside the algorithm)
        self.nb_machines = 0
        self._free = 0  # processors no running job holds (kept only for the parts beside the algorithm)
        self._promotions: list[tuple[float, str]] = []  # (when it leaves Q, job id): promote_after
        self.overdue: Overdue | None = None  # promote_overdue: the longest first-attempt wait, the jobs it bounds
        self.promoted: dict[str, float] = {}  # promote_overdue: job id -> when it moved ahead of every queue
        self.due_since: dict[str, float] = {}  # promote_overdue: job id -> when its wait reached the bound
        self.trial_history: TrialHistory | None = None  # trial_gate user-history, request-history or user-pause
        self.kill_budget: KillBudget | None = None  # kill_budget, waste_budget: the kills the safeguard may afford
        self.admission: Admission | None = None  # kill_limit, waste_limit: the trials the limits cover (issue 48)
        # the history gates: uncertain job -> how long it may run and count as a trial that paid, until it ends: its
        # trial if given none (would one have paid?), without bound if tried (its trial paid unless the safeguard
        # killed it: a job spared past its trial cost nothing)
        self._judged: dict[str, float] = {}
        self.dynamic_jobs = False
        self.registration_finished = False
        self.no_more_static_jobs = False
        self.ended = False
        # whether any part beside the algorithm acts at a decision (set at SIMULATION_BEGINS): a classifier, the
        # safeguard, predictions, promotions, running siblings or dynamic jobs; without, decide skips them
        self._extras = False

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
        states = self.states
        for execute in self.algorithm.schedule(now, arrived, released, replan):
            states[execute.job_id] = RUNNING
            decisions.append(execute)
            if self._extras:
                self._started(self.jobs[execute.job_id], now, decisions)
        if self._extras:
            self._after_scheduling(now, decisions)
        return decisions

    # --- event handlers ------------------------------------------------------------

    def _begin(self, event: SimulationBegins) -> None:
        if self.algorithm is not None:
            raise SimulationError("SIMULATION_BEGINS received twice")
        if event.nb_resources <= 0:
            raise SimulationError(f"SIMULATION_BEGINS: nb_resources must be positive, got {event.nb_resources}")
        self.nb_machines = self._free = event.nb_resources
        self.dynamic_jobs = bool(event.config.get("dynamic-jobs-enabled", False))
        if self.config.safeguard == "kill":
            if not self.dynamic_jobs:
                raise ConfigError("the kill safeguard resubmits killed jobs: run Batsim with --enable-dynamic-jobs")
            self.safeguard = Safeguard(self.alarms, bool(event.config.get("profile-reuse-enabled", False)),
                                       on_demand=self.config.kill_on != "deadline")
        if self.parts.classifier is not None:
            self.classifier = self.parts.classifier(event.time)
        queue = JobQueue(self.parts.policy, self.config.starvation_threshold, self.config.starvation_scope,
                         self.knowledge.estimate if self.config.order_by == "estimate" else None)
        self.algorithm = self.parts.algorithm(self.nb_machines, queue, self._estimate, self.parts.backfill_order,
                                              self._bound if self.config.divider_estimates != "none" else None)
        config = self.config
        if config.promote_overdue != "none" or config.spare_within != "none":
            self.overdue = Overdue(waiting_first=config.overdue_bound == "longest-any", factor=config.overdue_after)
        if config.trial_gate in HISTORY_GATES:
            self.trial_history = TrialHistory(config.trial_history)
        if config.kill_budget is not None or config.waste_budget is not None:
            self.kill_budget = KillBudget(config.kill_budget, config.waste_budget, config.budget_window)
        if config.kill_limit is not None or config.waste_limit is not None:
            self.admission = Admission(config.kill_limit, config.waste_limit)
        self._extras = (self.classifier is not None or self.safeguard is not None or self.predictions is not None
                        or bool(config.promote_after) or config.running_siblings == "large" or self.dynamic_jobs
                        or self.overdue is not None)

    def _submit(self, job: Job, now: float, decisions: list[Decision]) -> Job | None:
        if self.algorithm is None:
            raise SimulationError(f"job {job.id!r} submitted before SIMULATION_BEGINS")
        if job.id in self.origin:
            return None  # Batsim's echo of a job we registered (--acknowledge-dynamic-jobs)
        if job.id in self.jobs:
            raise SimulationError(f"job {job.id!r} submitted twice")
        self.jobs[job.id] = job
        reason = self._rejection_reason(job)
        if reason:
            self.states[job.id] = REJECTED
            self.reject_reasons[job.id] = reason
            decisions.append(Reject(job.id, reason))
            return None
        if self.kill_budget is not None:
            self.kill_budget.submitted(now)
        if self.admission is not None:  # HOOK (issue 48, admission): a first attempt counts
            self.admission.submit()
        job_class = JobClass.LARGE
        if self.classifier is not None:
            job_class = self.classifier.classify(job, now)
            if job_class is JobClass.UNCERTAIN and job.res > (self.config.probe_max_width or 1.0) * self.nb_machines:
                job_class = JobClass.LARGE  # too wide to try: its trial would be in every other job's way
            if job_class is JobClass.UNCERTAIN and not self._trial_pays(job, now):
                job_class = JobClass.LARGE
                if self.trial_history is not None:  # would a trial have paid? (a pause: it ends the pause)
                    self._judged[job.id] = (math.inf if self.config.trial_gate in PAUSE_GATES
                                            else self._trial_length(job, JobClass.UNCERTAIN, now))
            elif job_class is JobClass.UNCERTAIN and self.trial_history is not None:
                self._judged[job.id] = math.inf
            if job_class is not JobClass.LARGE and self._sibling_ran_long(job, now):
                job_class = JobClass.LARGE
            if job_class is not JobClass.LARGE and self.admission is not None:  # HOOK (issue 48): a trial, if granted
                job_class = self._admitted(job, job_class, now, decisions)
            if job_class is not JobClass.LARGE:
                self.small[job.id] = self._trial_length(job, job_class, now)
                self.small_waiting.add(job.id)
                if self.config.siblings == "demote" and "user" in job.extras:
                    self._siblings.setdefault(sibling_key(job), set()).add(job.id)
            decisions.append(SetMetadata(job.id, CLASS_METADATA[job_class]))
        self.states[job.id] = QUEUED
        if self.predictions is not None:
            self.predictions.submit(job, now)
        rank = job_class.rank
        if job_class is JobClass.UNCERTAIN and self.config.uncertain_queue == "with-large":
            rank = JobClass.LARGE.rank
        self._enqueue(job, rank, now)
        if self.overdue is not None and self.overdue.waiting_first:  # HOOK (issue 48, overdue_bound longest-any)
            self.overdue.submitted(job.id, job.subtime)
        return job

    def _trial_length(self, job: Job, job_class: JobClass, now: float) -> float:
        """How long the safeguard lets ``job``, classified small or uncertain at ``now``, run: the divider then in
        force; for an uncertain job, ``probe_length`` x it, at most ``probe_limit``, shortened for a wide job
        (``probe_width``)."""
        limit = self.classifier.divider_at(now)
        if job_class is JobClass.UNCERTAIN:
            limit = min(limit * self.config.probe_length, self.config.probe_limit or math.inf)
            if self.config.probe_width is not None:  # a wide job's failed trial wastes more processors
                limit *= min(1.0, math.sqrt(self.config.probe_width * self.nb_machines / job.res))
        return limit

    def _rejection_reason(self, job: Job) -> str | None:
        if job.res <= 0:
            return f"requests {job.res} processors"
        if job.res > self.nb_machines:
            return f"requests {job.res} processors, the platform has {self.nb_machines}"
        estimate = self.knowledge.estimate(job)
        if estimate is None or estimate <= 0:
            return f"no runtime estimate ({self.knowledge.name} estimates need a positive walltime)"
        return None

    def _complete(self, event: JobCompleted, now: float, decisions: list[Decision]) -> Job | None:
        """Release the job's machines; learn its runtime; resubmit it if the safeguard killed it."""
        job_id = event.job_id
        state = self.states.get(job_id)
        if state is None:
            raise SimulationError(f"JOB_COMPLETED for unknown job {job_id!r}")
        if state != RUNNING:
            raise SimulationError(f"JOB_COMPLETED for job {job_id!r}, which is {state}, not running")
        self.algorithm.release(job_id)
        if self._extras:  # only they read _free and starts
            self._free += self.jobs[job_id].res
        if self._running_siblings:
            self._running_siblings.get(sibling_key(self.jobs[job_id]), {}).pop(job_id, None)
        if self.predictions is not None:
            self._apply_prediction_changes(self.predictions.end(self.jobs[job_id], now), now, decisions)
        if self._judged and job_id in self._judged:  # a first attempt: did its trial pay, or would it have?
            paid = event.state != COMPLETED_KILLED and now - self.starts[job_id] <= self._judged.pop(job_id)
            self.trial_history.record(self._history_key(self.jobs[job_id]), paid)
        original = self.origin.get(job_id, job_id)
        killed_by_us = self.safeguard is not None and self.safeguard.ended(job_id)
        if self.admission is not None:  # HOOK (issue 48): the attempt's trial resolves, its work is useful or wasted
            self._admission_ended(job_id, event.state == COMPLETED_KILLED, killed_by_us, now)
        if event.state != COMPLETED_KILLED:
            self.states[job_id] = COMPLETED
            if self.kill_budget is not None:
                self.kill_budget.completed(now, self.jobs[job_id].res * (now - self.starts[job_id]))
            if self.classifier is not None:
                self.classifier.completed(self.jobs[original], now - self.starts[job_id], now)
            return None
        self.states[job_id] = KILLED
        if not killed_by_us:
            return None  # killed by someone else: nothing to resubmit
        if self.config.siblings == "demote":
            self._demote_siblings(self.jobs[original], now, decisions)
        attempt = self.attempt(job_id) + 1
        job, registration = self.safeguard.resubmit(self.jobs[job_id], self.jobs[original], attempt, now,
                                                     keep_place=self.config.retry_queue != "fresh")
        decisions.extend(registration)
        self.origin[job.id] = original
        self.jobs[job.id] = job
        self.states[job.id] = QUEUED
        if self.predictions is not None:
            self.predictions.submit(job, now)
        self._enqueue(job, self._retry_rank, now)
        return job

    def _enqueue(self, job: Job, rank: int, now: float) -> None:
        """``job`` waits in queue ``rank``; in Q, until it has waited ``promote_after`` x its request, if set."""
        self.algorithm.enqueue(job, self._estimate(job), rank, now)
        if self.config.promote_after and rank == JobClass.LARGE.rank:
            heapq.heappush(self._promotions, (job.subtime + self.config.promote_after * self.knowledge.estimate(job),
                                              job.id))
        scope = self.config.promote_overdue
        if rank == JobClass.LARGE.rank and (scope == "queue" or scope.startswith("killed") and job.id in self.origin):
            self.overdue.watch(job.id, job.subtime)

    def attempt(self, job_id: str) -> int:
        """0 for an original job, k for its resubmission ``<id>#k``."""
        return int(job_id.rpartition("#")[2]) if job_id in self.origin else 0

    def _estimate(self, job: Job) -> float:
        """The runtime the algorithm plans a job with: the knowledge's estimate, bounded by the divider for
        a job the safeguard watches when ``divider_estimates`` is ``all``."""
        estimate = self.knowledge.estimate(job)
        if estimate is None:
            raise SimulationError(f"job {job.id!r}: no runtime estimate")
        if self.config.divider_estimates == "all" and job.id in self.small:
            return min(estimate, self.small[job.id])
        return estimate

    def _bound(self, job: Job) -> float | None:
        """A running job's runtime bound: the divider for a job the safeguard watches (it kills it then)."""
        return self.small.get(job.id)

    # --- queries and accounting ----------------------------------------------------

    def estimate_waiting_time(self, job: Job, now: float) -> float:
        """How long ``job`` would wait if submitted now: the algorithm's earliest start for it given
        the running jobs and the reservations it holds (EASY's one, conservative backfilling's all);
        other queued jobs are not counted otherwise, so this is a lower bound. -1 when the job can
        never run or has no estimate."""
        if self.algorithm is None or self._rejection_reason(job):
            return -1.0
        return self.algorithm.earliest_start(job.res, self._estimate(job), now) - now

    def outcome(self) -> Outcome:
        """Accounting, the classifier's and the predictions' summaries, and the tables of what was learnt."""
        states = Counter(self.states.values())
        accounting = {"submitted": len(self.states), "completed": states[COMPLETED], "killed": states[KILLED],
                      "rejected": states[REJECTED], "reject_reasons": dict(sorted(self.reject_reasons.items()))}
        classifier = predictions = None
        reports: dict[str, pd.DataFrame] = {}
        if self.classifier is not None:
            config = self.config
            classifier = {"method": config.classifier, "features": config.features, "divider": config.divider,
                          "nb_small": len(self.small), "kills": self.safeguard.kills if self.safeguard else 0,
                          **({"kills_refused": self.kill_budget.refused} if self.kill_budget else {}),
                          **({"trials_refused": self.admission.refused, "trials_released": self.admission.released}
                             if self.admission else {}),
                          **self.classifier.summary()}
            reports["classifier_weeks"] = self.classifier.weekly_report()
            reports["feature_importances"] = self.classifier.feature_importances().reset_index()
        if self.predictions is not None:
            from scheduler.knowledge.accuracy import accuracy_summary

            table = self.predictions.accuracy_table()
            predictions = {"predictor": self.config.predictor, "correction": self.config.correction,
                           **accuracy_summary(table)}
            reports["predictions"] = table
        return Outcome(accounting, classifier, predictions, reports, self.classifier)
