"""The classifier's reports, made from what it hands them: predictions, weekly quality and feature importances.

Functions of the job table (:class:`~batsim_classifier_scheduler.knowledge.classified_jobs.JobTable`) and the weekly records that
:class:`~batsim_classifier_scheduler.knowledge.classifier.JobClassifier` keeps; it calls them from its report methods."""

from __future__ import annotations

import numpy as np
import pandas as pd

from batsim_classifier_scheduler.knowledge.confusion import RATES, quality
from batsim_classifier_scheduler.knowledge.classified_jobs import JobTable


def current_rows(jobs: JobTable, run: int) -> np.ndarray:
    """Table rows of the jobs classified in run ``run``."""
    return np.flatnonzero((jobs.column("week") >= 0) & (jobs.column("run") == run))


def predictions(jobs: JobTable, rows: np.ndarray) -> pd.DataFrame:
    """One row per classified job, in submission order.

    Columns: ``job_id``, ``week``, ``predicted_small`` (small or uncertain: the jobs ahead of Q,
    watched by the safeguard; the quality scores count the small ones only), ``uncertain``, ``p_small`` (the model's
    probability; NaN without a model), ``divider`` (in force at classification),
    ``runtime`` and ``actual_small`` (runtime < divider; NA until the job completes or
    while the divider is undefined).
    """
    runtime = jobs.column("runtime")[rows]
    divider = jobs.column("divider")[rows]
    known = ~np.isnan(runtime) & ~np.isnan(divider)
    actual = pd.array(np.where(known, runtime < divider, False), dtype="boolean")
    actual[~known] = pd.NA
    return pd.DataFrame({
        "job_id": [jobs.ids[r] for r in rows],
        "week": jobs.column("week")[rows],
        "predicted_small": jobs.column("predicted")[rows].astype(bool),
        "uncertain": jobs.column("uncertain")[rows].astype(bool),
        "p_small": jobs.column("p_small")[rows],
        "divider": divider,
        "runtime": runtime,
        "actual_small": actual,
    })

def weekly_report(weeks: list[dict], predicted: pd.DataFrame) -> pd.DataFrame:
    """One row per week in which the classifier was used or retrained.

    Columns: ``week``, ``week_start``, ``divider``, ``training_size``,
    ``training_small`` (training jobs labelled small), ``refit`` (a new model was
    fitted), ``model`` (a model was in use), ``n_predicted``, ``n_predicted_small`` (classified small),
    ``n_uncertain`` (classified uncertain: probing), ``n_known`` (predicted jobs whose class is known), and,
    over the known ones, ``accuracy``, ``precision``, ``recall``, ``false_small_rate``, ``false_large_rate``
    (:func:`summary` says how uncertain jobs count).
    """
    weeks = pd.DataFrame(weeks).drop_duplicates("week", keep="last").set_index("week")
    counts = confusion_by_week(predicted)
    rates = pd.DataFrame([quality(*row) for row in counts[["tp", "fp", "fn", "tn"]].itertuples(index=False)],
                         index=counts.index, columns=list(RATES))
    stats = counts[["n_predicted", "n_predicted_small", "n_uncertain", "n_known"]].join(rates)
    report = weeks.join(stats, how="outer")
    for name in ("n_predicted", "n_predicted_small", "n_uncertain", "n_known", "training_size", "training_small"):
        report[name] = report[name].fillna(0).astype(np.int64)
    return report.reset_index()

def summary(predicted: pd.DataFrame) -> dict[str, float]:
    """:func:`quality` over every classified job whose class is known, and ``uncertain``: how many of them
    were uncertain, ``uncertain_rate``: their share.

    Predicted small means classified *small*: an uncertain job (probing: not small, yet not called large
    with confidence, run early on trial) counts as not small in every rate, and is counted apart."""
    counts = confusion_by_week(predicted)
    result = quality(*(int(counts[name].sum()) for name in ("tp", "fp", "fn", "tn")))
    uncertain = int(counts["known_uncertain"].sum())
    return {**result, "uncertain": uncertain,
            "uncertain_rate": uncertain / result["n"] if result["n"] else float("nan")}

def confusion_by_week(preds: pd.DataFrame) -> pd.DataFrame:
    """Per week of classification: jobs predicted, classified small, uncertain, of known class (and
    uncertain among them), and the confusion counts (classified small = positive) over the known ones."""
    uncertain = preds["uncertain"].to_numpy()
    predicted = preds["predicted_small"].to_numpy() & ~uncertain
    known = preds["actual_small"].notna().to_numpy()
    actual = preds["actual_small"].to_numpy(dtype=bool, na_value=False)
    columns = {"n_predicted": np.ones(len(preds), dtype=np.int64), "n_predicted_small": predicted,
               "n_uncertain": uncertain, "n_known": known, "known_uncertain": known & uncertain,
               "tp": known & predicted & actual, "fp": known & predicted & ~actual,
               "fn": known & ~predicted & actual, "tn": known & ~predicted & ~actual}
    return pd.DataFrame(columns).astype(np.int64).groupby(preds["week"].to_numpy()).sum().rename_axis("week")

def feature_importances(importances: list[tuple[int, list[float]]], names: list[str]) -> pd.DataFrame:
    """The forest's Gini importances for each week it was used (rows: week; columns: features)."""
    weeks = [w for w, _ in importances]
    values = np.array([v for _, v in importances], dtype=np.float64).reshape(-1, len(names))
    return pd.DataFrame(values, index=pd.Index(weeks, name="week"), columns=names)

def feature_table(jobs: JobTable, rows: np.ndarray, names: list[str]) -> pd.DataFrame:
    """The feature vector each classified job had at its classification (index: job id)."""
    return pd.DataFrame(jobs.matrix("features", rows).astype(np.float64), columns=names,
                        index=pd.Index([jobs.ids[r] for r in rows], name="job_id"))
