"""The scikit-learn estimator the classifier trains, and the fitted model it asks per job.

The classifier is given an unfitted scikit-learn classifier (default: :func:`default_forest`). At
each retrain it fits a fresh clone whose ``random_state`` is the classifier's seed
(:func:`fresh_clone`). A fitted forest of decision trees is packed for the fast one-job walk
(:class:`~batsim_classifier_scheduler.knowledge.forest.PackedForest`); any other estimator answers through its own
``predict_proba`` (:class:`EstimatorModel`). Only forests can be saved: a saved file names the
estimator's class and parameters (:func:`describe`) and holds the packed trees, never a pickle.
"""

from __future__ import annotations

import json
import numbers
from typing import Any, Protocol

import numpy as np

from batsim_classifier_scheduler.errors import ConfigError
from batsim_classifier_scheduler.knowledge.forest import PackedForest

#: Our Random Forest's parameters (``benchmarks/README.md``, "The forest's hyper-parameters", says why and
#: what they cost).
FOREST_DEFAULTS: dict[str, Any] = dict(n_estimators=12, max_depth=14, min_samples_leaf=4, max_features="sqrt",
                                       max_samples=2500, n_jobs=1)
#: The estimators packed for the one-job walk, and the only ones a saved classifier may name.
FORESTS = ("RandomForestClassifier", "ExtraTreesClassifier")


class Model(Protocol):
    """A fitted model as the classifier uses it."""

    def proba_one(self, x) -> float:
        """P(small) for one feature vector."""


def default_forest(**params: Any):
    """Our Random Forest (:data:`FOREST_DEFAULTS`), with ``params`` on top."""
    from sklearn.ensemble import RandomForestClassifier

    return RandomForestClassifier(**{**FOREST_DEFAULTS, **params})


def validate_estimator(estimator) -> None:
    """Raise :class:`ConfigError` unless ``estimator`` is a scikit-learn classifier with valid parameters
    and ``predict_proba``; the message names the bad parameter.

    scikit-learn checks the parameters when it fits, so a seeded clone is fitted on a few rows of
    :data:`_TRIAL_ROWS` (the estimator itself is left unfitted)."""
    import warnings

    from sklearn.base import is_classifier

    try:
        usable = is_classifier(estimator) and hasattr(estimator, "predict_proba")
    except AttributeError:  # not a scikit-learn estimator at all
        usable = False
    if not usable:
        raise ConfigError(f"classifier estimator must be a scikit-learn classifier with predict_proba, "
                          f"got {estimator!r}")
    x, y = _trial_rows()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # convergence and the like, on so few rows
            fresh_clone(estimator, 0, len(y)).fit(x, y)
    except (ValueError, TypeError, RuntimeError) as exc:
        raise ConfigError(f"classifier estimator: {exc}") from None


#: How many rows (half of them small) and features the fit of :func:`validate_estimator` has.
_TRIAL_ROWS = (20, 4)


def _trial_rows() -> tuple[np.ndarray, np.ndarray]:
    """Deterministic features in float32, as the classifier gives them, and labels of both classes."""
    rows, columns = _TRIAL_ROWS
    x = (np.arange(rows * columns, dtype=np.float32).reshape(rows, columns) * 7.0) % 11.0
    return x, np.arange(rows) % 2 == 0


def fresh_clone(estimator, seed: int, n_rows: int):
    """An unfitted clone of ``estimator`` seeded with ``seed``, ready to fit on ``n_rows`` rows."""
    from sklearn.base import clone

    model = clone(estimator)
    params = model.get_params(deep=False)
    if "random_state" in params:
        model.set_params(random_state=seed)
    samples = params.get("max_samples")
    if isinstance(samples, numbers.Integral) and not isinstance(samples, bool) and samples > n_rows:
        model.set_params(max_samples=None)  # scikit-learn refuses more bootstrap samples than rows
    return model


def is_forest(estimator) -> bool:
    """Whether ``estimator`` is exactly one of the :data:`FORESTS` (a subclass may predict otherwise)."""
    from sklearn import ensemble

    return any(type(estimator) is getattr(ensemble, name) for name in FORESTS)


def fitted_model(estimator, positive=True) -> Model:
    """What the classifier asks per job: the packed forest, or the estimator itself."""
    return PackedForest.from_sklearn(estimator, positive) if is_forest(estimator) else EstimatorModel(estimator, positive)


class EstimatorModel:
    """Any fitted scikit-learn classifier, asked through ``predict_proba`` (features in float32)."""

    def __init__(self, estimator, positive=True) -> None:
        self.estimator = estimator
        self.column = list(estimator.classes_).index(positive)

    def proba_one(self, x) -> float:
        return float(self.estimator.predict_proba(np.asarray([x], dtype=np.float32))[0, self.column])


def describe(estimator) -> dict[str, Any]:
    """The estimator's class and parameters, JSON-safe, for a saved file; :class:`ConfigError` if it
    cannot be saved (only the :data:`FORESTS` can)."""
    name = type(estimator).__name__
    if not is_forest(estimator):
        raise ConfigError(f"cannot save a classifier trained with {name}: only {' and '.join(FORESTS)} "
                          "are saved (as packed trees, without pickle)")
    params = estimator.get_params(deep=False)
    try:
        json.dumps(params, allow_nan=False)
    except (TypeError, ValueError):
        raise ConfigError(f"cannot save a classifier whose {name} has parameters that are not plain JSON values: "
                          f"{params}") from None
    return {"class": name, "params": params}


def from_description(description: dict[str, Any]):
    """The unfitted estimator :func:`describe` described."""
    from sklearn import ensemble

    name = description["class"]
    if name not in FORESTS:
        raise ConfigError(f"unknown estimator {name!r} (a saved classifier names one of {', '.join(FORESTS)})")
    return getattr(ensemble, name)(**description["params"])
