"""Prediction accuracy metrics.

Over the terminated jobs, with P the prediction a job got at submission and R its actual
runtime:

- ``mae``: mean |P − R| (seconds);
- ``r2``: coefficient of determination 1 − Σ(R − P)² / Σ(R − mean R)²;
- ``under``: share of under-predictions (P < R), i.e. of jobs that will miss their deadline.

Talby et al.'s per-prediction measures, for a prediction P of runtime R:

- accuracy a(P, R) = min(P, R) / max(P, R), in (0, 1], 1 for a perfect prediction (Tsafrir et
  al.'s definition, which Talby et al. reuse);
- inaccuracy |P − R| / R (relative error).

A job's prediction changes over its life (predictor updates, corrections after deadline
misses). ``ra`` (relative accuracy) and ``ai`` (average inaccuracy) are *time-weighted*: each
prediction of a job counts for the time it was in effect, between its own time and the next
prediction's (the last one until the job terminated), over the job's life from submission to
termination; the per-job values are then averaged over jobs. A job whose life has zero length
counts its last prediction.
"""

from __future__ import annotations

import math
from typing import Iterable, Mapping, Sequence


def _first(history: Sequence[tuple[float, float]]) -> float:
    return history[0][1]


def mae(predicted: Sequence[float], actual: Sequence[float]) -> float:
    return sum(abs(p - r) for p, r in zip(predicted, actual)) / len(actual) if actual else math.nan


def r2(predicted: Sequence[float], actual: Sequence[float]) -> float:
    if not actual:
        return math.nan
    mean = sum(actual) / len(actual)
    total = sum((r - mean) ** 2 for r in actual)
    residual = sum((r - p) ** 2 for p, r in zip(predicted, actual))
    return 1 - residual / total if total > 0 else math.nan


def under_share(predicted: Sequence[float], actual: Sequence[float]) -> float:
    return sum(p < r for p, r in zip(predicted, actual)) / len(actual) if actual else math.nan


def accuracy(prediction: float, runtime: float) -> float:
    """Tsafrir's accuracy min(P, R) / max(P, R) (1 when both are 0)."""
    high = max(prediction, runtime)
    return min(prediction, runtime) / high if high > 0 else 1.0


def inaccuracy(prediction: float, runtime: float) -> float:
    """Relative error |P − R| / R (R at least 1 s)."""
    return abs(prediction - runtime) / max(runtime, 1.0)


def time_weighted(history: Sequence[tuple[float, float]], runtime: float, end: float, measure) -> float:
    """``measure(P, R)`` averaged over a job's successive predictions, each weighted by the time
    it was in effect until ``end`` (the job's termination)."""
    total = weighted = 0.0
    for i, (time, prediction) in enumerate(history):
        until = history[i + 1][0] if i + 1 < len(history) else end
        span = max(min(until, end) - time, 0.0)
        total += span
        weighted += span * measure(prediction, runtime)
    if total <= 0:
        return measure(history[-1][1], runtime)
    return weighted / total


def summarize_accuracy(history: Mapping[str, Sequence[tuple[float, float]]], runtimes: Mapping[str, float],
                       ends: Mapping[str, float], jobs: Iterable[str] | None = None) -> dict[str, float]:
    """MAE, R², share of under-predictions (initial predictions) and the time-weighted RA and AI
    over the terminated jobs (``jobs``: restrict to these ids)."""
    ids = [j for j in (jobs if jobs is not None else runtimes) if j in runtimes and j in history]
    predicted = [_first(history[j]) for j in ids]
    actual = [runtimes[j] for j in ids]
    n = len(ids)
    return {
        "nb_jobs": n,
        "mae": mae(predicted, actual),
        "r2": r2(predicted, actual),
        "under": under_share(predicted, actual),
        "ra": sum(time_weighted(history[j], runtimes[j], ends[j], accuracy) for j in ids) / n if n else math.nan,
        "ai": sum(time_weighted(history[j], runtimes[j], ends[j], inaccuracy) for j in ids) / n if n else math.nan,
    }


def prediction_accuracy(predictions) -> dict[str, float]:
    """The accuracy metrics of a :class:`scheduler.knowledge.predictors.Predictions`."""
    return summarize_accuracy(predictions.history, predictions.runtimes, predictions.ends)
