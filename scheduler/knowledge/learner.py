"""The scikit-learn estimator the classifier trains, and the fitted model it asks per job.

The classifier is given an unfitted scikit-learn classifier (default: :func:`default_forest`). At
each retrain it fits a fresh clone whose ``random_state`` is the classifier's seed
(:func:`fresh_clone`). A fitted forest of decision trees is packed for the fast one-job walk
(:class:`~scheduler.knowledge.forest.PackedForest`); any other estimator answers through its own
``predict_proba`` (:class:`EstimatorModel`). Only forests can be saved: a saved file names the
estimator's class and parameters (:func:`describe`) and holds the packed trees, never a pickle.
"""

from __future__ import annotations

import json
import numbers
from typing import Any, Protocol

import numpy as np

from scheduler.errors import ConfigError
from scheduler.knowledge.forest import PackedForest

#: Our Random Forest's parameters (``scheduler.knowledge.classifier`` says why, and what they cost).
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
    and ``predict_proba``; the message names the bad parameter."""
    from sklearn.base import clone, is_classifier

    try:
        usable = is_classifier(estimator) and hasattr(estimator, "predict_proba")
    except AttributeError:  # not a scikit-learn estimator at all
        usable = False
    if not usable:
        raise ConfigError(f"classifier estimator must be a scikit-learn classifier with predict_proba, "
                          f"got {estimator!r}")
    try:
        model = clone(estimator)
        validate = getattr(model, "_validate_params", None)  # scikit-learn's own check, run by fit
        if validate is not None:
            validate()
    except (ValueError, TypeError, RuntimeError) as exc:
        raise ConfigError(f"classifier estimator: {exc}") from None


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
