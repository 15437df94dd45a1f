"""One job's P(small) from a fitted forest: the ways to walk it, measured against each other.

The classifier asks its forest about one job at a time (at the job's submission), so the cost that
matters is per call, not per batch. Fits our default forest (``learner.default_forest``) on a
seeded synthetic problem shaped like the classifier's (29 features, 20,000 rows, half small), then
times, on the same 3,000 feature vectors, in one process, interleaved over ``--repeat`` rounds:

- ``nested tuples``: :meth:`PackedForest.proba_one`, the classifier's walk (the baseline);
- ``flat lists``: the same arrays walked as five flat Python lists (the previous implementation);
- ``generated code``: each tree compiled to nested ``if``/``else`` Python source (fast per call,
  but it must be compiled again after every weekly refit: the compile time is shown);
- ``numpy, one row``: :meth:`PackedForest.proba` on a one-row matrix (vectorised over the trees);
- ``scikit-learn``: ``predict_proba`` on a one-row matrix.

Every variant must give the baseline's probabilities (checked: exactly, or to 1e-12 for the two
that add up the trees in another order). Needs nothing beside the
checkout.

    python benchmarks/bench_forest_walk.py [--repeat 5] [--trees 12]
"""

from __future__ import annotations

import argparse
import sys
import time
from array import array
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import Timing, machine_line, markdown_table, ratio  # noqa: E402

import numpy as np  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=5, help="rounds (default 5)")
    parser.add_argument("--trees", type=int, default=None, help="n_estimators (default: the classifier's)")
    args = parser.parse_args(argv)

    from batsim_classifier_scheduler.knowledge.forest import PackedForest
    from batsim_classifier_scheduler.knowledge.learner import default_forest

    rng = np.random.default_rng(0)
    X = problem(rng, 20_000)
    y = (X[:, 0] / 3600 + X[:, 10] + rng.normal(size=len(X))) < np.median(X[:, 0] / 3600 + X[:, 10])
    params = {} if args.trees is None else {"n_estimators": args.trees}
    forest = default_forest(random_state=0, **params).fit(X, y)
    packed = PackedForest.from_sklearn(forest)
    queries = [row.tolist() for row in problem(rng, 3_000)]
    compile_started = time.perf_counter()
    generated = generated_walk(packed)
    compile_seconds = time.perf_counter() - compile_started
    flat = flat_walk(packed)
    walks = {
        "nested tuples": packed.proba_one,
        "flat lists": flat,
        "generated code": lambda x: generated(array("f", x).tolist()),
        "numpy, one row": lambda x: float(packed.proba(np.asarray([x]))[0]),
        "scikit-learn": lambda x: float(forest.predict_proba(np.asarray([x], dtype=np.float32))[0, 1]),
    }
    expected = [packed.proba_one(x) for x in queries]
    for name, walk in walks.items():
        got = [walk(x) for x in queries[:300]]
        tolerance = 1e-12 if name in ("numpy, one row", "scikit-learn") else 0.0  # they sum in another order
        assert np.allclose(got, expected[:300], rtol=0, atol=tolerance), name

    times: dict[str, list[float]] = {name: [] for name in walks}
    for _ in range(args.repeat):
        for name, walk in walks.items():
            subset = queries if name not in ("numpy, one row", "scikit-learn") else queries[:300]
            started = time.perf_counter()
            for x in subset:
                walk(x)
            times[name].append((time.perf_counter() - started) / len(subset))

    base = Timing(times["nested tuples"]).best
    rows = [[name, f"{Timing(values).best * 1e6:.1f}", f"{Timing(values).median * 1e6:.1f}",
             ratio(Timing(values).best, base)] for name, values in times.items()]
    print(f"# One job's P(small): {packed.n_trees} trees, {len(packed.feature):,} nodes, depth {packed.depth} "
          f"({machine_line()}; best of {args.repeat})\n")
    print(markdown_table(["walk", "µs / job, best", "median", "vs nested tuples"], rows))
    print(f"\n'generated code' compiles in {compile_seconds * 1e3:.0f} ms, once per weekly refit.")
    return 0


def problem(rng: np.random.Generator, n: int) -> np.ndarray:
    """Feature vectors shaped like the classifier's: requests, sizes, times, history lags and counts."""
    static = np.column_stack([
        rng.choice([600, 1800, 3600, 14400, 64800], n) * rng.integers(1, 3, n), rng.integers(1, 128, n),
        rng.integers(1, 128, n), rng.integers(0, 24, n), rng.integers(0, 7, n), rng.integers(1, 29, n),
        rng.integers(1, 13, n), rng.integers(1, 53, n), rng.integers(1, 5, n)])
    history = np.concatenate([np.column_stack([rng.integers(-1, 2, (n, 3)), rng.random(n), rng.integers(0, 500, n)])
                              for _ in range(4)], axis=1)
    return np.concatenate([static, history], axis=1).astype(np.float64)


def flat_walk(packed):
    """The forest walked as flat lists, a leaf pointing to itself (the previous implementation)."""
    feature, threshold = packed.feature.tolist(), packed.threshold.tolist()
    left, right, p_small, roots = packed.left.tolist(), packed.right.tolist(), packed.p_small.tolist(), \
        packed.roots.tolist()

    def walk(x) -> float:
        x = array("f", x).tolist()
        total = 0.0
        for node in roots:
            while left[node] != node:
                node = left[node] if x[feature[node]] <= threshold[node] else right[node]
            total += p_small[node]
        return total / len(roots)

    return walk


def generated_walk(packed):
    """Each tree as generated Python source with nested ifs, compiled once."""
    feature, threshold = packed.feature.tolist(), packed.threshold.tolist()
    left, right, p_small = packed.left.tolist(), packed.right.tolist(), packed.p_small.tolist()

    def source(node: int, indent: str) -> str:
        if left[node] == node:
            return f"{indent}return {p_small[node]!r}\n"
        return (f"{indent}if x[{feature[node]}] <= {threshold[node]!r}:\n" + source(left[node], indent + " ")
                + f"{indent}else:\n" + source(right[node], indent + " "))

    roots = packed.roots.tolist()
    text = "".join(f"def tree{k}(x):\n" + source(root, " ") for k, root in enumerate(roots))
    text += "def forest(x):\n total = 0.0\n" + "".join(f" total += tree{k}(x)\n" for k in range(len(roots)))
    text += f" return total / {len(roots)}\n"
    namespace: dict = {}
    exec(compile(text, "<forest>", "exec"), namespace)
    return namespace["forest"]


if __name__ == "__main__":
    sys.exit(main())
