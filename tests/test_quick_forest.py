"""quick_forest.fit_forest: scikit-learn's trees, node for node, or None for the forests it does not fit."""

from __future__ import annotations

import numpy as np
import pytest

from scheduler.knowledge.forest import PackedForest
from scheduler.knowledge.learner import default_forest, fresh_clone
from scheduler.knowledge.quick_forest import fit_forest

TREE_ARRAYS = ("feature", "threshold", "children_left", "children_right", "value", "n_node_samples",
               "weighted_n_node_samples", "impurity")


def problem(rows: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Float32 features shaped like the classifier's (some integral, with ties), labels of both classes."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(rows, 29)).astype(np.float32)
    X[:, :12] = np.round(X[:, :12] * 3)
    labels = X[:, 0] + X[:, 3] * X[:, 5] + rng.normal(size=rows) > 0
    return X, labels


@pytest.mark.parametrize("params, rows, seed", [
    ({}, 3000, 0),  # our forest, bootstrap of 2,500 rows
    ({}, 1200, 1),  # fewer rows than max_samples: fresh_clone bootstraps every row
    ({"max_depth": None, "max_features": "log2", "criterion": "entropy"}, 800, 2),
    ({"max_features": None, "min_samples_leaf": 1, "n_estimators": 3, "max_samples": None}, 500, 3),
])
def test_the_trees_are_scikit_learns(params, rows, seed):
    X, labels = problem(rows, seed)
    estimator = default_forest(**params)
    reference = fresh_clone(estimator, seed, rows).fit(X, labels)
    forest = fit_forest(fresh_clone(estimator, seed, rows), X, labels)
    assert forest is not None and len(forest.trees) == len(reference.estimators_)
    for ours, theirs in zip(forest.trees, (tree.tree_ for tree in reference.estimators_)):
        assert ours.node_count == theirs.node_count and ours.max_depth == theirs.max_depth
        for name in TREE_ARRAYS:
            assert np.array_equal(getattr(ours, name), getattr(theirs, name)), name
    assert np.array_equal(forest.feature_importances_, reference.feature_importances_)
    packed = PackedForest.from_trees(forest.trees, forest.classes.index(True))
    assert np.array_equal(packed.proba(X), PackedForest.from_sklearn(reference).proba(X))


@pytest.mark.parametrize("params", [{"class_weight": "balanced"}, {"max_leaf_nodes": 50}, {"bootstrap": False,
                                    "max_samples": None}, {"max_samples": 0.5}, {"min_samples_leaf": 0.01},
                                    {"ccp_alpha": 0.01}])
def test_forests_it_does_not_reproduce_are_left_to_scikit_learn(params):
    X, labels = problem(400, 0)
    assert fit_forest(fresh_clone(default_forest(**params), 0, 400), X, labels) is None


def test_other_estimators_and_data_are_left_to_scikit_learn():
    from sklearn.ensemble import ExtraTreesClassifier

    X, labels = problem(400, 0)
    assert fit_forest(fresh_clone(ExtraTreesClassifier(n_estimators=3), 0, 400), X, labels) is None
    missing = X.copy()
    missing[3, 4] = np.nan
    assert fit_forest(fresh_clone(default_forest(), 0, 400), missing, labels) is None
    assert fit_forest(fresh_clone(default_forest(), 0, 400), X.astype(np.float64), labels) is None
    assert fit_forest(fresh_clone(default_forest(), 0, 400), X, np.ones(400, dtype=bool)) is None
