"""What a decision core is made of: the :class:`Parts` the composition root (``scheduler.compose``) builds
from a config, and the :class:`Classifier` interface the core asks a job classifier through."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Protocol

from scheduler.core.algorithm import Algorithm
from scheduler.core.job import Job
from scheduler.core.policies import Policy
from scheduler.knowledge.choices import JobClass
from scheduler.knowledge.estimates import RuntimeKnowledge

if TYPE_CHECKING:
    import pandas as pd  # annotations only: serve for EASY does not import pandas


class Classifier(Protocol):
    """What the decision core asks of a job classifier (``scheduler.knowledge.classifier.JobClassifier``):
    three calls while deciding, and its reports for :meth:`~scheduler.decision.DecisionCore.outcome`."""

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
class Parts:
    """What a :class:`~scheduler.decision.DecisionCore` is made of."""

    policy: Policy
    backfill_order: Policy | None
    #: Makes the algorithm at the simulation's start: ``algorithm(nb_machines, queue, estimate, backfill_order,
    #: bound)`` (an :class:`Algorithm` class, or one given its plug-in options).
    algorithm: Callable[..., Algorithm]
    knowledge: RuntimeKnowledge
    #: Runtime predictions with a correction rule (``scheduler.knowledge.predictors.Predictions``), or None.
    predictions: Any = None
    #: Starts the classifier at the simulation's start time; None without a classifier.
    classifier: Callable[[float], Classifier] | None = None
