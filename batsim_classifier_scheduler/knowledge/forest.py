"""A fitted forest of decision trees as flat arrays, walked for one job at a time.

scikit-learn's ``predict_proba`` costs tens of microseconds of validation and dispatch per call, more
than the walk itself; the classifier asks for one job at a time. :class:`PackedForest` keeps the
fitted trees as flat numpy arrays (for saving, and for many rows at once) and as nested tuples for
the one-job walk, the cheapest plain-Python form measured (``benchmarks/README.md``).
"""

from __future__ import annotations

from array import array

import numpy as np


class PackedForest:
    """A fitted forest as flat arrays: all trees' nodes concatenated.

    A leaf points to itself, so walking ``depth`` steps from the roots lands every tree on its
    leaf. ``p_small[node]`` is the leaf's fraction of small training jobs; the forest's probability
    is their mean over the trees, as in ``RandomForestClassifier.predict_proba``. Features are
    compared in float32, as scikit-learn does.
    """

    ARRAYS = ("feature", "threshold", "left", "right", "p_small", "roots")

    def __init__(self, feature, threshold, left, right, p_small, roots, depth: int) -> None:
        self.feature = np.asarray(feature, dtype=np.int64)
        self.threshold = np.asarray(threshold, dtype=np.float64)
        self.left = np.asarray(left, dtype=np.int64)
        self.right = np.asarray(right, dtype=np.int64)
        self.p_small = np.asarray(p_small, dtype=np.float64)
        self.roots = np.asarray(roots, dtype=np.int64)
        self.depth = int(depth)
        self._trees = self._nested()

    @classmethod
    def from_sklearn(cls, forest, positive=True) -> "PackedForest":
        """Pack a fitted ``RandomForestClassifier`` or ``ExtraTreesClassifier``; ``positive`` is the
        class whose probability :meth:`proba_one` gives."""
        column = list(forest.classes_).index(positive)
        parts = {name: [] for name in cls.ARRAYS}
        offset, depth = 0, 0
        for estimator in forest.estimators_:
            tree = estimator.tree_
            n = tree.node_count
            leaf = tree.children_left < 0
            own = np.arange(n) + offset
            value = tree.value[:, 0, :]
            parts["feature"].append(np.where(leaf, 0, tree.feature))
            parts["threshold"].append(np.where(leaf, 0.0, tree.threshold))
            parts["left"].append(np.where(leaf, own, tree.children_left + offset))
            parts["right"].append(np.where(leaf, own, tree.children_right + offset))
            parts["p_small"].append(value[:, column] / value.sum(axis=1))
            parts["roots"].append(np.array([offset]))
            offset += n
            depth = max(depth, int(tree.max_depth))
        return cls(*(np.concatenate(parts[name]) for name in cls.ARRAYS), depth=depth)

    @classmethod
    def constant(cls, p_small: float) -> "PackedForest":
        """A one-leaf model (the training jobs were all of one class)."""
        return cls([0], [0.0], [0], [0], [float(p_small)], [0], depth=0)

    @property
    def n_trees(self) -> int:
        return len(self.roots)

    def _nested(self) -> list:
        """Each tree as nested ``(feature, threshold, left, right)`` tuples with float leaves."""
        feature, threshold = self.feature.tolist(), self.threshold.tolist()
        left, right, p_small = self.left.tolist(), self.right.tolist(), self.p_small.tolist()
        nodes: list = [None] * len(feature)
        for node in range(len(feature) - 1, -1, -1):  # children come after their parent
            if left[node] == node:
                nodes[node] = p_small[node]
            else:
                nodes[node] = (feature[node], threshold[node], nodes[left[node]], nodes[right[node]])
        return [nodes[root] for root in self.roots.tolist()]

    def proba_one(self, x) -> float:
        """P(small) for one feature vector (a sequence of numbers)."""
        x = array("f", x).tolist()  # float32 values, as scikit-learn compares them
        total = 0.0
        for node in self._trees:
            while node.__class__ is tuple:
                feature, threshold, left, right = node
                node = left if x[feature] <= threshold else right
            total += node
        return total / len(self._trees)

    def proba(self, X: np.ndarray) -> np.ndarray:
        """P(small) for the rows of ``X`` (vectorised over rows and trees)."""
        X = np.asarray(X, dtype=np.float32).astype(np.float64)
        rows = np.arange(len(X))[:, None]
        nodes = np.broadcast_to(self.roots, (len(X), self.n_trees)).copy()
        for _ in range(self.depth):
            go_left = X[rows, self.feature[nodes]] <= self.threshold[nodes]
            nodes = np.where(go_left, self.left[nodes], self.right[nodes])
        return self.p_small[nodes].sum(axis=1) / self.n_trees

    def to_arrays(self) -> dict[str, np.ndarray]:
        return {name: getattr(self, name) for name in self.ARRAYS}
