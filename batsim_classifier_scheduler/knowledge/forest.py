"""A fitted forest of decision trees as flat arrays, walked for one job at a time.

scikit-learn's ``predict_proba`` costs tens of microseconds of validation and dispatch per call, more
than the walk itself; the classifier asks for one job at a time. :class:`PackedForest` keeps the
fitted trees as nested tuples for the one-job walk, the cheapest plain-Python form measured
(``benchmarks/README.md``), and as flat numpy arrays (for saving, and for many rows at once), made only
when asked for.
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
        class whose probability :meth:`proba_one` gives.

        The nested trees are built from scikit-learn's arrays directly; the flat arrays only when
        first read (:meth:`__getattr__`): the classifier walks the nested trees alone."""
        column = list(forest.classes_).index(positive)
        trees = [estimator.tree_ for estimator in forest.estimators_]
        packed = cls.__new__(cls)
        packed._trees = [_nested_tree(tree, column) for tree in trees]
        packed.depth = max(int(tree.max_depth) for tree in trees)
        packed._sklearn = (trees, column)
        return packed

    def __getattr__(self, name: str):
        """The flat arrays of a forest packed from scikit-learn, made when one of them is first read."""
        if name not in self.ARRAYS or "_sklearn" not in self.__dict__:
            raise AttributeError(name)
        self.__dict__.update(_flat_arrays(*self.__dict__.pop("_sklearn")))
        return self.__dict__[name]

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


def _leaf_values(tree, column: int) -> np.ndarray:
    """Each node's fraction of the ``column`` class among its training jobs (the leaves' are the votes)."""
    value = tree.value[:, 0, :]
    return value[:, column] / value.sum(axis=1)


def _nested_tree(tree, column: int):
    """One scikit-learn tree as nested ``(feature, threshold, left, right)`` tuples with float leaves."""
    nodes = _leaf_values(tree, column).tolist()
    inner = np.flatnonzero(tree.children_left >= 0)[::-1]  # children come after their parent
    for node, feature, threshold, left, right in zip(inner.tolist(), tree.feature[inner].tolist(),
                                                     tree.threshold[inner].tolist(),
                                                     tree.children_left[inner].tolist(),
                                                     tree.children_right[inner].tolist()):
        nodes[node] = (feature, threshold, nodes[left], nodes[right])
    return nodes[0]


def _flat_arrays(trees: list, column: int) -> dict[str, np.ndarray]:
    """The scikit-learn trees as :class:`PackedForest`'s flat arrays, all trees' nodes concatenated."""
    parts: dict[str, list] = {name: [] for name in PackedForest.ARRAYS}
    offset = 0
    for tree in trees:
        n = tree.node_count
        leaf = tree.children_left < 0
        own = np.arange(n) + offset
        parts["feature"].append(np.where(leaf, 0, tree.feature))
        parts["threshold"].append(np.where(leaf, 0.0, tree.threshold))
        parts["left"].append(np.where(leaf, own, tree.children_left + offset))
        parts["right"].append(np.where(leaf, own, tree.children_right + offset))
        parts["p_small"].append(_leaf_values(tree, column))
        parts["roots"].append(np.array([offset]))
        offset += n
    return {"feature": np.concatenate(parts["feature"]).astype(np.int64),
            "threshold": np.concatenate(parts["threshold"]).astype(np.float64),
            "left": np.concatenate(parts["left"]).astype(np.int64),
            "right": np.concatenate(parts["right"]).astype(np.int64),
            "p_small": np.concatenate(parts["p_small"]).astype(np.float64),
            "roots": np.concatenate(parts["roots"]).astype(np.int64)}
