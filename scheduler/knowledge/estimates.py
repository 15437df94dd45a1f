"""Runtime knowledge: the one interface policies and backfilling read, and where it comes from.

``--estimates NAME`` and ``--predictor NAME`` both name a predictor of one registry
(:data:`scheduler.knowledge.predictors.PREDICTORS`); :func:`runtime_knowledge` makes either. With
``--estimates``, what the predictor knows of a job alone (``Predictor.known``: the requested time p̃, or
the runtime capped at p̃) is read once and never corrected; with ``--predictor``, the predictor learns
from the jobs that end and a correction rule moves the predictions that run out
(:class:`scheduler.knowledge.predictors.Predictions`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Protocol

from scheduler.core.job import Job
from scheduler.errors import ConfigError
from scheduler.knowledge.predictors import Predictor, get_predictor, make_predictions

if TYPE_CHECKING:
    from scheduler.knowledge.predictors import Predictions


class RuntimeKnowledge(Protocol):
    """The one interface through which policies and backfilling learn about runtimes."""

    name: str

    def estimate(self, job: Job) -> float | None:
        """The runtime the scheduler plans with, in seconds; None when it cannot tell."""


#: The predictors ``--estimates`` accepts: those that need nothing but the job (requested: p̃; clairvoyant: the
#: actual runtime capped at p̃).
ESTIMATES = ("requested", "clairvoyant")


class Estimates:
    """A predictor's estimate of each job from the job alone (``Predictor.known``), never corrected."""

    def __init__(self, predictor: Predictor) -> None:
        self.predictor = predictor
        self.name = predictor.name
        # ``estimate(job)`` is the predictor's own method: the core asks it twice per submitted job
        self.estimate: Callable[[Job], float | None] = predictor.known


def get_estimates(name: str) -> RuntimeKnowledge:
    """The estimates called ``name`` (one of :data:`ESTIMATES`)."""
    if name.lower() not in ESTIMATES:
        raise ConfigError(f"unknown estimates {name!r}; known: {', '.join(ESTIMATES)}")
    return Estimates(get_predictor(name.lower()))


def runtime_knowledge(estimates: str, predictor: str, correction: str,
                      options: dict | None = None) -> tuple[RuntimeKnowledge, Predictions | None]:
    """What the scheduler plans with, and the predictions to keep up to date (None without a predictor): the
    ``predictor`` with its ``correction`` rule, unless it is ``requested`` (then: the ``estimates``)."""
    if predictor == "requested":
        return get_estimates(estimates), None
    predictions = make_predictions(predictor, correction, options)
    return predictions, predictions
