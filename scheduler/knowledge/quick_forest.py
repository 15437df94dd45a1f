"""Our Random Forest fitted without scikit-learn's checks around each tree: the same trees, in less time.

``RandomForestClassifier.fit`` validates its input, then for each tree clones an estimator and sets its seed,
draws the tree's bootstrap, and ``DecisionTreeClassifier._fit`` checks the labels again (``type_of_target``,
``np.unique`` over every row), the weights and its parameters before it calls the compiled tree builder. For our
forest (12 trees on up to 20,000 rows) that Python work is about a fifth of a fit, and the classifier refits
every week. :func:`fit_forest` makes the calls that reach the compiled pieces (criterion, splitter, tree,
depth-first builder) with the same arguments and the same random draws, so the trees are scikit-learn's, node for
node (``tests/test_quick_forest.py``). It takes only a plain ``RandomForestClassifier`` whose parameters it knows
(:func:`_settings`) and returns None for anything else, which scikit-learn then fits as before.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass
from typing import Any

import numpy as np

#: The largest seed scikit-learn draws for a tree (``np.iinfo(np.int32).max``).
_MAX_SEED = np.iinfo(np.int32).max


@dataclass
class FittedForest:
    """What the classifier reads of a fitted forest: its trees (``sklearn.tree._tree.Tree``) and the class each
    column of their values stands for."""

    trees: list
    classes: list

    @property
    def feature_importances_(self) -> np.ndarray:
        """The forest's Gini importances, as ``RandomForestClassifier.feature_importances_``: the mean of the
        trees' normalised importances (trees of one node left out), normalised."""
        each = [tree.compute_feature_importances() for tree in self.trees if tree.node_count > 1]
        if not each:
            return np.zeros(self.trees[0].n_features, dtype=np.float64)
        mean = np.mean(each, axis=0, dtype=np.float64)
        return mean / np.sum(mean)


def fit_forest(estimator: Any, X: np.ndarray, labels: np.ndarray) -> FittedForest | None:
    """``estimator`` (an unfitted, seeded :func:`~scheduler.knowledge.learner.fresh_clone`) fitted on float32 rows
    ``X`` and boolean ``labels`` of both classes, as ``estimator.fit(X, labels)`` would fit it; None when it is not
    a forest this module fits (then fit it with scikit-learn)."""
    settings = _settings(estimator, X, labels)
    if settings is None:
        return None
    try:
        return FittedForest(_trees(estimator, settings, X, labels), [False, True])
    except (ImportError, TypeError, AttributeError):  # scikit-learn's private pieces changed: let it fit
        return None


def _trees(estimator: Any, settings: dict[str, int], X: np.ndarray, labels: np.ndarray) -> list:
    """The forest's trees, built as ``RandomForestClassifier.fit`` builds them."""
    from sklearn.tree._classes import CRITERIA_CLF
    from sklearn.tree._splitter import BestSplitter
    from sklearn.tree._tree import DepthFirstTreeBuilder, Tree

    n_rows, n_features = X.shape
    y = np.ascontiguousarray(labels.reshape(-1, 1), dtype=np.float64)  # False, True -> 0.0, 1.0: np.unique's codes
    n_classes = np.array([2], dtype=np.intp)
    forest_state = np.random.RandomState(estimator.random_state)
    seeds = [forest_state.randint(_MAX_SEED) for _ in range(estimator.n_estimators)]  # as _make_estimator draws them
    trees = []
    for seed in seeds:
        rows = np.random.RandomState(seed).randint(0, n_rows, settings["n_bootstrap"]).astype(np.int32)
        weights = np.bincount(rows, minlength=n_rows).astype(np.float64)
        splitter = BestSplitter(CRITERIA_CLF[estimator.criterion](1, n_classes), settings["max_features"],
                                settings["min_samples_leaf"], 0.0, np.random.RandomState(seed), None)
        tree = Tree(n_features, n_classes, 1)
        DepthFirstTreeBuilder(splitter, settings["min_samples_split"], settings["min_samples_leaf"], 0.0,
                              settings["max_depth"], float(estimator.min_impurity_decrease)).build(tree, X, y, weights,
                                                                                                  None)
        trees.append(tree)
    return trees


def _settings(estimator: Any, X: np.ndarray, labels: np.ndarray) -> dict[str, int] | None:
    """The numbers the tree builder takes, as ``DecisionTreeClassifier._fit`` derives them from the forest's
    parameters; None unless the estimator is a plain ``RandomForestClassifier`` with parameters and data this
    module reproduces (bootstrap, no class weights, no leaf limit, no pruning, integer sizes, no NaN...)."""
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.tree._classes import CRITERIA_CLF

    p = estimator.get_params(deep=False)
    plain = (type(estimator) is RandomForestClassifier and p["bootstrap"] and not p["oob_score"]
             and not p["warm_start"] and p["class_weight"] is None and p["max_leaf_nodes"] is None
             and p.get("monotonic_cst") is None and p["ccp_alpha"] == 0.0 and p["min_weight_fraction_leaf"] == 0.0
             and p["criterion"] in CRITERIA_CLF and isinstance(p["random_state"], numbers.Integral)
             and all(_integer(p[name]) for name in ("min_samples_leaf", "min_samples_split", "n_estimators"))
             and (p["max_depth"] is None or _integer(p["max_depth"]))
             and (p["max_samples"] is None or _integer(p["max_samples"]) and p["max_samples"] <= len(X))
             and (p["max_features"] in ("sqrt", "log2", None) or _integer(p["max_features"])))
    if not plain or X.dtype != np.float32 or X.ndim != 2 or labels.dtype != np.bool_ or np.isnan(X).any():
        return None
    if labels.all() or not labels.any():
        return None
    n_features = X.shape[1]
    max_features = {"sqrt": lambda: max(1, int(np.sqrt(n_features))), "log2": lambda: max(1, int(np.log2(n_features))),
                    None: lambda: n_features}.get(p["max_features"], lambda: p["max_features"])()
    return {
        "n_bootstrap": len(X) if p["max_samples"] is None else p["max_samples"],
        "max_features": max_features,
        "min_samples_leaf": p["min_samples_leaf"],
        "min_samples_split": max(p["min_samples_split"], 2 * p["min_samples_leaf"]),
        "max_depth": np.iinfo(np.int32).max if p["max_depth"] is None else p["max_depth"],
    }


def _integer(value: Any) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)
