"""The quality of small/large predictions: the confusion counts and the rates made of them (small = positive)."""

from __future__ import annotations

import numpy as np

#: The rates of :func:`quality`.
RATES = ("accuracy", "precision", "recall", "false_small_rate", "false_large_rate")


def classification_metrics(predicted_small, actual_small) -> dict[str, float]:
    """:func:`quality` of predictions: the confusion matrix by ``sklearn.metrics.confusion_matrix``."""
    from sklearn.metrics import confusion_matrix

    predicted = np.asarray(predicted_small, dtype=bool)
    actual = np.asarray(actual_small, dtype=bool)
    if len(predicted) == 0:  # scikit-learn refuses empty inputs
        return quality(0, 0, 0, 0)
    (tn, fp), (fn, tp) = confusion_matrix(actual, predicted, labels=[False, True]).tolist()
    return quality(tp, fp, fn, tn)


def quality(tp: int, fp: int, fn: int, tn: int) -> dict[str, float]:
    """The counts, accuracy, precision, recall (small = positive), false-small and false-large rates.

    ``false_small_rate`` is the fraction of all jobs that are large but predicted small,
    ``false_large_rate`` that of small jobs predicted large: they add up to 1 - accuracy.
    Rates with an empty denominator are NaN (scikit-learn's ``zero_division=np.nan``).

    The classifier's own reports count per week with pandas and call this directly: importing
    scikit-learn costs about 1.4 s of CPU, a third of a whole EASY run of SDSC-SP2, which the
    ``oracle`` method (that trains nothing) must not pay.
    """
    n = tp + fp + fn + tn
    nan = float("nan")
    return {
        "n": n, "tp": tp, "fp": fp, "fn": fn, "tn": tn,
        "accuracy": (tp + tn) / n if n else nan,
        "precision": tp / (tp + fp) if tp + fp else nan,
        "recall": tp / (tp + fn) if tp + fn else nan,
        "false_small_rate": fp / n if n else nan,
        "false_large_rate": fn / n if n else nan,
    }
