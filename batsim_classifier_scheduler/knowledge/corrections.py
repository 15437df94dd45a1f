"""Correction rules: a running job outlived its prediction; what do we predict now?

``correct(original, current, elapsed, requested)`` returns the new prediction; the caller
(:class:`batsim_classifier_scheduler.knowledge.predictors.Predictions`) caps it at p̃ (``requested``). Each rule
returns a value greater than ``elapsed`` whenever p̃ allows it.

- ``requested``: p̃. This is Tsafrir et al.'s prediction correction, hence EASY++'s: a prediction
  that expires below the user's estimate becomes the estimate (only a job that outlives its
  estimate gets increments, and Batsim kills a job at p̃).
- ``incremental`` (Gaussier et al.'s reading of Tsafrir's increments, as in their ``predictsim``):
  the original prediction plus the first of 1 min, 5 min, 15 min, 30 min, 1 h, 2 h, 5 h, 10 h,
  20 h, 50 h, 100 h that takes it beyond the elapsed time; p̃ beyond that. A job predicted far
  below its runtime misses many deadlines, each one leaving EASY's reservation too early.
- ``doubling``: the current prediction doubled until it exceeds the elapsed time.
"""

from __future__ import annotations

from typing import Any

from batsim_classifier_scheduler.errors import ConfigError
from batsim_classifier_scheduler.registry import Rules, call, define, describe, make, register

INCREMENTS = tuple(m * 60 for m in (1, 5, 15, 30)) + tuple(h * 3600 for h in (1, 2, 5, 10, 20, 50, 100))


def _cap(value: float, requested: float) -> float:
    return min(value, requested) if requested > 0 else value


class RequestedCorrection:
    name = "requested"

    def correct(self, original: float, current: float, elapsed: float, requested: float) -> float:
        if requested > 0:
            return requested
        return DoublingCorrection().correct(original, current, elapsed, requested)


class IncrementalCorrection:
    name = "incremental"

    def __init__(self, increments: tuple[float, ...] = INCREMENTS) -> None:
        self.increments = tuple(sorted(increments))

    def correct(self, original: float, current: float, elapsed: float, requested: float) -> float:
        for increment in self.increments:
            if original + increment > elapsed:
                return _cap(original + increment, requested)
        if requested > 0:
            return requested
        return DoublingCorrection().correct(original, current, elapsed, requested)


class DoublingCorrection:
    name = "doubling"

    def correct(self, original: float, current: float, elapsed: float, requested: float) -> float:
        value = max(current, 1.0)
        while value <= elapsed:
            value *= 2
        return _cap(value, requested)


def _check(spec: str, target: Any) -> None:
    if not callable(target):
        raise ConfigError(f"correction {spec!r}: not a correction rule (a class with correct(original, current, "
                          f"elapsed, requested) and a name); got {describe(target)}")


define("correction", Rules(check=_check, make=lambda made: call("correction", made.name, made.target)))
for _rule in (RequestedCorrection, IncrementalCorrection, DoublingCorrection):
    register("correction", _rule.name, _rule)


def get_correction(name: str) -> Any:
    """The correction rule called ``name``."""
    return make("correction", name)
