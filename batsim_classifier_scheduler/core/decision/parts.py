"""What a decision core is made of: the :class:`Parts` the composition root (``batsim_classifier_scheduler.compose``) builds from a
config, the interfaces the core asks its runtime knowledge and its classifier through, and each part's rules (its
own section of the options)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Protocol

from batsim_classifier_scheduler.core.algorithm import Algorithm
from batsim_classifier_scheduler.core.job import Job, JobClass
from batsim_classifier_scheduler.core.policies import Policy

if TYPE_CHECKING:
    import pandas as pd  # annotations only: serve for EASY does not import pandas


class RuntimeKnowledge(Protocol):
    """The one interface through which policies and backfilling learn about runtimes."""

    name: str

    def estimate(self, job: Job) -> float | None:
        """The runtime the scheduler plans with, in seconds; None when it cannot tell."""


class Classifier(Protocol):
    """What the decision core asks of a job classifier (``batsim_classifier_scheduler.knowledge.classifier.JobClassifier``):
    three calls while deciding, and its reports for the core's outcome."""

    def classify(self, job: Job, now: float) -> JobClass:
        """The class of ``job``, submitted now: small, uncertain or large."""

    def divider_at(self, now: float) -> float:
        """The small/large boundary in force now, in seconds."""

    def completed(self, job: Job, runtime: float, now: float) -> None:
        """``job`` ended after running ``runtime`` seconds."""

    def summary(self) -> dict[str, float]:
        """Its quality over the jobs whose class is known."""

    def weekly_report(self) -> pd.DataFrame:
        """Its divider, training and quality, week by week."""

    def feature_importances(self) -> pd.DataFrame:
        """The importance of each feature, week by week (index: week)."""


@dataclass(frozen=True)
class QueueRules:
    """How the waiting queue orders and ages its jobs."""

    #: Seconds of waiting after which a job moves to the head of its queue (``scope`` queue) or of all (``all``).
    starvation_threshold: float | None = None
    starvation_scope: str = "queue"
    #: What the policy orders a waiting watched job by: ``planned`` (the estimate it is planned with) or
    #: ``estimate`` (its own).
    order_by: str = "planned"


@dataclass(frozen=True)
class TrialRules:
    """How long the safeguard lets a watched job run, and what the algorithm plans it with."""

    #: An uncertain job's trial, as a fraction of the divider, and at most ``probe_limit`` seconds.
    probe_length: float = 1.0
    probe_limit: float | None = None
    #: Which watched jobs are planned with their trial: ``none``, ``running`` ones, or ``all``.
    divider_estimates: str = "none"


@dataclass(frozen=True)
class KillRules:
    """When the safeguard kills a watched job past its trial (:mod:`batsim_classifier_scheduler.core.decision.kills`)."""

    kill_on: str = "deadline"
    kill_for: str = "requeued"
    head_slack: float = 0.0


@dataclass(frozen=True)
class PromotionRules:
    """Which waiting jobs of Q move ahead (:mod:`batsim_classifier_scheduler.core.decision.promotion`)."""

    #: A job of Q moves ahead once it has waited ``after`` x its request (0: never), with ``scope``'s jobs.
    after: float = 0.0
    scope: str = "job"
    #: Which jobs of Q move ahead of every queue once their wait reaches the longest first-attempt wait.
    overdue: str = "none"


@dataclass(frozen=True)
class LimitRules:
    """The limits a site states, kept by admission (:mod:`batsim_classifier_scheduler.core.decision.admission`): at most ``kills`` of
    the jobs killed and ``waste`` of the useful work wasted, at every moment (None: no such limit)."""

    kills: float | None = None
    waste: float | None = None
    #: Whom the trials the limits allow go to: ``arrival`` (first come), ``p-small`` (the likelier small) or
    #: ``value`` (the likelier small per processor-second a failed trial would waste).
    order: str = "arrival"
    #: Whether a job refused a trial may get one later, while it still waits (``waiting``) or not (``none``).
    readmit: str = "none"

    @property
    def active(self) -> bool:
        return self.kills is not None or self.waste is not None


@dataclass(frozen=True)
class Parts:
    """What a :class:`~batsim_classifier_scheduler.core.decision.DecisionCore` is made of."""

    policy: Policy
    backfill_order: Policy | None
    #: Makes the algorithm at the simulation's start: ``algorithm(nb_machines, queue, estimate, backfill_order,
    #: bound)`` (an :class:`Algorithm` class, or one given its plug-in options).
    algorithm: Callable[..., Algorithm]
    knowledge: RuntimeKnowledge
    #: Runtime predictions with a correction rule (``batsim_classifier_scheduler.knowledge.predictors.Predictions``), or None.
    predictions: Any = None
    #: Starts the classifier at the simulation's start time; None without a classifier.
    classifier: Callable[[float], Classifier] | None = None
    #: Whether the safeguard kills watched jobs (it needs a classifier).
    safeguard: bool = False
    queue: QueueRules = field(default_factory=QueueRules)
    trials: TrialRules = field(default_factory=TrialRules)
    kills: KillRules = field(default_factory=KillRules)
    promotion: PromotionRules = field(default_factory=PromotionRules)
    limits: LimitRules = field(default_factory=LimitRules)
    #: What the outcome says of the classifier and the predictions besides their own reports (their names).
    labels: dict[str, dict[str, Any]] = field(default_factory=dict)
