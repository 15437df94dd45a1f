"""Runtime knowledge: the one interface policies and backfilling read, and where it comes from.

``--estimates NAME`` names what the scheduler plans with when no predictor learns: what a predictor knows of a
job alone (``Predictor.known``: the requested time p̃, or the runtime capped at p̃), read once and never
corrected. Its names are registered here with the one registry of names (``batsim_classifier_scheduler.registry``); a plug-in
is a class whose instances have a ``name`` and ``known(job)``. With ``--predictor``, the predictor learns from
the jobs that end and a correction rule moves the predictions that run out
(:class:`batsim_classifier_scheduler.knowledge.predictors.Predictions`).
"""

from __future__ import annotations

from typing import Any, Callable

from batsim_classifier_scheduler.core.job import Job
from batsim_classifier_scheduler.errors import ConfigError
from batsim_classifier_scheduler.registry import Made, Rules, call, define, describe, register
from batsim_classifier_scheduler.knowledge.predictors import ClairvoyantPredictor, RequestedPredictor


class Estimates:
    """A predictor's estimate of each job from the job alone (``Predictor.known``), never corrected."""

    def __init__(self, predictor: Any) -> None:
        self.predictor = predictor
        self.name = predictor.name
        # ``estimate(job)`` is the predictor's own method: the core asks it twice per submitted job
        self.estimate: Callable[[Job], float | None] = predictor.known


def _check(spec: str, target: Any) -> None:
    if not callable(target):
        raise ConfigError(f"estimates {spec!r}: not a class whose instances tell known(job); got {describe(target)}")


def _make(made: Made) -> Estimates:
    return Estimates(call("estimates", made.name, made.target))


define("estimates", Rules(check=_check, make=_make))
# requested: p̃; clairvoyant: the actual runtime capped at p̃ (the predictors that need nothing but the job)
register("estimates", RequestedPredictor.name, RequestedPredictor)
register("estimates", ClairvoyantPredictor.name, ClairvoyantPredictor)
