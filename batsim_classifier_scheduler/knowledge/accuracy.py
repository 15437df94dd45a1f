"""Prediction accuracy metrics.

Over the terminated jobs, with P the prediction a job got at submission and R its actual
runtime:

- ``mae``: mean |P − R| (seconds);
- ``r2``: coefficient of determination 1 − Σ(R − P)² / Σ(R − mean R)²;
- ``under``: share of under-predictions (P < R), i.e. of jobs that will miss their deadline.

(MAE and R² are ``sklearn.metrics``' ``mean_absolute_error`` and ``r2_score``.)

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
from collections import Counter
from typing import Sequence

import pandas as pd
from sklearn.metrics import mean_absolute_error, r2_score

#: The columns of a per-job accuracy table (``PREFIX_predictions.csv``).
JOB_COLUMNS = ["job_id", "runtime", "requested", "first_prediction", "last_prediction", "nb_predictions",
               "deadline_misses", "ra", "ai"]


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


def prediction_accuracy(predictions) -> dict[str, float]:
    """The accuracy metrics of a :class:`batsim_classifier_scheduler.knowledge.predictors.Predictions`."""
    return accuracy_summary(job_accuracy(predictions))


def job_accuracy(predictions) -> pd.DataFrame:
    """One row per terminated job of a :class:`batsim_classifier_scheduler.knowledge.predictors.Predictions`
    (:data:`JOB_COLUMNS`): its runtime and requested time, its first and last predictions, how many
    predictions and deadline misses it had, and its time-weighted ``ra`` and ``ai``."""
    misses = Counter(job_id for _, job_id, _, _ in predictions.misses)
    rows = []
    for job_id, runtime in predictions.runtimes.items():
        history = predictions.history[job_id]
        end = predictions.ends[job_id]
        rows.append((job_id, runtime, predictions.requested.get(job_id, math.nan), history[0][1], history[-1][1],
                     len(history), misses[job_id], time_weighted(history, runtime, end, accuracy),
                     time_weighted(history, runtime, end, inaccuracy)))
    return pd.DataFrame(rows, columns=JOB_COLUMNS)


def accuracy_summary(table: pd.DataFrame) -> dict[str, float]:
    """MAE, R² and share of under-predictions of the first predictions, the mean ``ra`` and ``ai``
    and the number of deadline misses, over a per-job table (:func:`job_accuracy`, or a
    ``PREFIX_predictions.csv`` read back). R² is NaN when the runtimes are all equal."""
    predicted = table["first_prediction"].to_numpy(dtype=float)
    actual = table["runtime"].to_numpy(dtype=float)
    n = len(table)
    varied = n > 1 and actual.min() < actual.max()
    return {
        "nb_jobs": n,
        "mae": float(mean_absolute_error(actual, predicted)) if n else math.nan,
        "r2": float(r2_score(actual, predicted)) if varied else math.nan,
        "under": float((predicted < actual).mean()) if n else math.nan,
        "ra": float(table["ra"].mean()) if n else math.nan,
        "ai": float(table["ai"].mean()) if n else math.nan,
        "deadline_misses": int(table["deadline_misses"].sum()),
    }
