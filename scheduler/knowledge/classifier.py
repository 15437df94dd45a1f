"""The online small/large job classifier of Zrigui et al. (JPDC 2022), as a pure component.

The decision core calls :meth:`JobClassifier.classify` when a job is submitted (in
submission order) and :meth:`JobClassifier.completed` when a job finishes. No I/O, no
wall clock; the same calls with the same seed give the same answers.

Weeks and retraining
    Weeks are ``week`` seconds long, counted from ``start_time`` (the simulation start).
    The first call whose ``now`` falls in a new week retrains the model on the jobs that
    completed so far (all submitted in earlier weeks), keeping the ``max_training_jobs``
    most recently submitted. During the first week there is no model and every job is
    large. Jobs are labelled small iff runtime < divider; the divider is the median runtime
    of the training jobs (``"median"``, recomputed at each retrain), the median runtime of
    the jobs that completed during the previous week (``"last-week-median"``), or a fixed
    number of seconds. When no job has completed yet the divider is undefined (NaN) and
    every job is large. ``method="oracle"`` gives the true class (``job.runtime``, capped by
    the walltime, < divider) and ``method="none"`` calls every job large.

Features (:mod:`scheduler.knowledge.features`)
    The job's request and submission time, and the classes of the completed jobs of the
    same user with the same requested time, processor count or day of the week, or of the
    user as a whole. ``features="live"`` uses every job completed before the submission;
    ``features="paper"`` only those completed before the current week started (the
    snapshot taken at the weekly retrain). When the divider changes, the history's classes
    change: the training matrix is rebuilt from what each job could see at its submission
    (its anchors in the completion log), relabelled under the new divider.

Model and cost
    scikit-learn's ``RandomForestClassifier(random_state=seed)``. A job is classified small
    when the forest's probability of "small" exceeds ``threshold`` (0.5 is scikit-learn's
    ``predict``). For speed, the fitted forest is packed into flat numpy arrays
    (:class:`PackedForest`) and walked for one job at a time without scikit-learn's
    per-call overhead; it gives the probabilities of ``predict_proba``.

    Hyper-parameters (:data:`DEFAULTS`), chosen by an offline replay of KTH-SP2 and
    SDSC-SP2 in which every job completes at subtime + runtime (no queueing), timing
    ``classify`` + ``completed`` + the weekly retrains on this project's 2-core machine
    (scikit-learn 1.9):

    - ``n_estimators=24``: 16 to 32 trees change accuracy by less than 0.5 point;
      fitting time is linear in it.
    - ``max_depth=14, min_samples_leaf=4``: unbounded trees are no more accurate, and
      the one-job walk costs a step per level.
    - ``max_samples=5000`` bootstrap rows per tree: bounds a weekly fit at about 0.2 s
      whatever the window (half the window: 0.32 s per fit on SDSC-SP2, +0.3 point).
    - ``max_training_jobs=20000`` most recently submitted completed jobs: 5000 loses
      2 points of accuracy on SDSC-SP2; the window bounds memory and relabelling cost.
    - ``n_jobs=1``: ``n_jobs=2`` fits the same forest about 25% faster on two cores, but
      competes with parallel simulations in a sweep.
    - ``threshold=0.5`` (scikit-learn's ``predict``): lower thresholds trade false-small
      errors, the costly ones for a scheduler, for recall (KTH-SP2, live features:
      0.4 gives precision 0.82 / recall 0.84; 0.3 gives 0.75 / 0.88).

    Measured wall time with these defaults, ``features="live"`` (``"paper"`` is 5 to 10%
    cheaper; ``method="oracle"`` or ``"none"``: 1.0 s and 2.5 s):

    ========================================  ========  =====  ===============================
    trace                                     jobs      weeks  seconds (of which fitting)
    ========================================  ========  =====  ===============================
    KTH-SP2 (1996-2.1-cln)                    28,467    48     9.5 (7.7)
    SDSC-SP2 (1998-4.2-cln)                   54,034    105    24.7 (20.8)
    4 interleaved SDSC-SP2 copies, squeezed   216,136   141    43 to 49 (about 29)
    ========================================  ========  =====  ===============================

    Quality in the same replay (small = positive class, weeks after the first; the
    false-small rate is the share of all jobs that are large but predicted small):

    ==========  ========  =========  ======  ==========  ===========  =========
    trace       features  precision  recall  accuracy    false-small  false-large
    ==========  ========  =========  ======  ==========  ===========  =========
    KTH-SP2     live      0.878      0.791   0.859       4.9%         9.3%
    KTH-SP2     paper     0.870      0.736   0.834       4.9%         11.7%
    SDSC-SP2    live      0.878      0.826   0.854       5.8%         8.8%
    SDSC-SP2    paper     0.849      0.755   0.809       6.8%         12.4%
    ==========  ========  =========  ======  ==========  ===========  =========

    ``"live"`` is better on both traces and is the default. The paper reports precision
    0.79 / recall 0.90 / false-small 4.03% on KTH-SP2 and 0.89 / 0.91 / 5.85% on SDSC-SP2.

Persistence
    :meth:`JobClassifier.save` writes the configuration, the packed model, the job table,
    the completion log and the reports: a magic line, a JSON header (format version, SHA-256
    and size of the payload) and an ``.npz`` payload read without pickle.
    :meth:`JobClassifier.load` raises :class:`ClassifierError` on a version mismatch, a
    checksum mismatch or a corrupt file.
"""

from __future__ import annotations

import hashlib
import io
import json
import math
import numbers
from pathlib import Path

import numpy as np
import pandas as pd

from scheduler.core.job import Job
from scheduler.errors import ConfigError
from scheduler.knowledge.choices import CLASSIFIER_METHODS as METHODS, DIVIDERS, FEATURE_MODES
from scheduler.knowledge.features import (
    CATEGORIES,
    CategoryCodes,
    CompletionLog,
    FeatureEncoder,
    GrowingArray,
)

FORMAT_NAME = "scheduler.knowledge.JobClassifier"
FORMAT_VERSION = 1
MAGIC = b"BATSIM-CLASSIFIER-SCHEDULER JobClassifier\n"

#: Default hyper-parameters (the module docstring says why, and what they cost).
DEFAULTS = dict(n_estimators=24, max_depth=14, min_samples_leaf=4, max_features="sqrt",
                max_samples=5000, max_training_jobs=20000, n_jobs=1, threshold=0.5)


class ClassifierError(ConfigError):
    """A classifier is misused (time going backwards) or its saved file is unusable."""


def classification_metrics(predicted_small, actual_small) -> dict[str, float]:
    """Accuracy, precision, recall (small = positive), false-small and false-large rates.

    ``false_small_rate`` is the fraction of all jobs that are large but predicted small,
    ``false_large_rate`` that of small jobs predicted large: they add up to 1 - accuracy.
    Rates with an empty denominator are NaN.
    """
    p = np.asarray(predicted_small, dtype=bool)
    a = np.asarray(actual_small, dtype=bool)
    n = len(p)
    tp = int((p & a).sum())
    fp = int((p & ~a).sum())
    fn = int((~p & a).sum())
    tn = n - tp - fp - fn
    nan = float("nan")
    return {
        "n": n, "tp": tp, "fp": fp, "fn": fn, "tn": tn,
        "accuracy": (tp + tn) / n if n else nan,
        "precision": tp / (tp + fp) if tp + fp else nan,
        "recall": tp / (tp + fn) if tp + fn else nan,
        "false_small_rate": fp / n if n else nan,
        "false_large_rate": fn / n if n else nan,
    }


class PackedForest:
    """A fitted forest as flat arrays, walked without scikit-learn's per-call overhead.

    All trees' nodes are concatenated; a leaf points to itself, so walking ``depth`` steps
    from the roots lands every tree on its leaf. ``p_small[node]`` is the leaf's fraction
    of small training jobs; the forest's probability is their mean over the trees, as in
    ``RandomForestClassifier.predict_proba``. Features are compared in float32, as
    scikit-learn does.
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
        # Plain lists for the one-job walk (faster than numpy scalars).
        self._lists = (self.feature.tolist(), self.threshold.tolist(), self.left.tolist(),
                       self.right.tolist(), self.p_small.tolist(), self.roots.tolist())

    @classmethod
    def from_sklearn(cls, forest, positive=True) -> "PackedForest":
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

    def proba_one(self, x) -> float:
        """P(small) for one feature vector (a sequence of floats)."""
        x = np.asarray(x, dtype=np.float32).astype(np.float64).tolist()
        feature, threshold, left, right, p_small, roots = self._lists
        total = 0.0
        for node in roots:
            while left[node] != node:
                node = left[node] if x[feature[node]] <= threshold[node] else right[node]
            total += p_small[node]
        return total / len(roots)

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


def _check_choice(name, value, choices):
    if value not in choices:
        raise ConfigError(f"classifier {name} must be one of {', '.join(map(repr, choices))}, got {value!r}")


def _is_number(value) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


class JobClassifier:
    """Online small/large job classifier (see the module docstring).

    Parameters
    ----------
    method : ``"rf"`` (random forest), ``"oracle"`` (true class) or ``"none"`` (all large).
    divider : ``"median"``, ``"last-week-median"`` or a positive number of seconds.
    features : ``"live"`` (history up to the submission) or ``"paper"`` (weekly snapshot).
    seed : the forest's ``random_state``.
    week : the retraining period, in seconds.
    start_time : the simulation start; weeks are counted from it.
    n_estimators, max_depth, min_samples_leaf, max_features, max_samples, n_jobs :
        passed to ``RandomForestClassifier``.
    max_training_jobs : train on at most this many of the most recently submitted
        completed jobs (None: all of them).
    timezone : the trace's time zone for the temporal features: an IANA name (the SWF
        ``TimeZoneString`` header), an offset in seconds east of UTC, or None (UTC).
    threshold : a job is small when P(small) > threshold.
    categories : the history categories (a subset of ``features.CATEGORIES``).
    """

    def __init__(self, *, method: str = "rf", divider: str | float = "median", features: str = "live",
                 seed: int = 0, week: float = 604800.0, start_time: float = 0.0,
                 n_estimators: int = DEFAULTS["n_estimators"],
                 max_training_jobs: int | None = DEFAULTS["max_training_jobs"],
                 timezone: str | float | None = None,
                 max_depth: int | None = DEFAULTS["max_depth"],
                 min_samples_leaf: int = DEFAULTS["min_samples_leaf"],
                 max_features: str | float | int | None = DEFAULTS["max_features"],
                 max_samples: float | int | None = DEFAULTS["max_samples"],
                 n_jobs: int | None = DEFAULTS["n_jobs"],
                 threshold: float = DEFAULTS["threshold"],
                 categories: tuple[str, ...] | list[str] = CATEGORIES) -> None:
        _check_choice("method", method, METHODS)
        _check_choice("features", features, FEATURE_MODES)
        if _is_number(divider):
            if not (math.isfinite(divider) and divider > 0):
                raise ConfigError(f"classifier divider must be positive seconds, got {divider!r}")
            divider = float(divider)
        else:
            _check_choice("divider", divider, DIVIDERS)
        if not (_is_number(week) and math.isfinite(week) and week > 0):
            raise ConfigError(f"classifier week must be positive seconds, got {week!r}")
        if not (_is_number(start_time) and math.isfinite(start_time)):
            raise ConfigError(f"classifier start_time must be a finite number, got {start_time!r}")
        if not (isinstance(seed, numbers.Integral) and not isinstance(seed, bool) and seed >= 0):
            raise ConfigError(f"classifier seed must be a non-negative integer, got {seed!r}")
        if not (isinstance(n_estimators, numbers.Integral) and n_estimators > 0):
            raise ConfigError(f"classifier n_estimators must be a positive integer, got {n_estimators!r}")
        if max_training_jobs is not None and not (isinstance(max_training_jobs, numbers.Integral)
                                                  and max_training_jobs > 0):
            raise ConfigError(f"classifier max_training_jobs must be a positive integer or None, "
                              f"got {max_training_jobs!r}")
        if not (_is_number(threshold) and 0 <= threshold < 1):
            raise ConfigError(f"classifier threshold must be in [0, 1), got {threshold!r}")
        self.method = method
        self.divider = divider
        self.features = features
        self.seed = int(seed)
        self.week = float(week)
        self.start_time = float(start_time)
        self.n_estimators = int(n_estimators)
        self.max_training_jobs = None if max_training_jobs is None else int(max_training_jobs)
        self.timezone = float(timezone) if _is_number(timezone) else timezone
        self.max_depth = max_depth
        self.min_samples_leaf = min_samples_leaf
        self.max_features = max_features
        self.max_samples = max_samples
        self.n_jobs = n_jobs
        self.threshold = float(threshold)
        self.categories = tuple(categories)
        if method == "rf":
            self._make_forest(0)  # validates the forest parameters now rather than at week 1
        self._encoder = FeatureEncoder(timezone, self.categories)
        self.feature_names = list(self._encoder.names)
        self._init_state()

    # --- configuration ----------------------------------------------------------------

    def get_config(self) -> dict:
        """The constructor arguments (JSON-safe)."""
        return {
            "method": self.method, "divider": self.divider, "features": self.features, "seed": self.seed,
            "week": self.week, "start_time": self.start_time, "n_estimators": self.n_estimators,
            "max_training_jobs": self.max_training_jobs, "timezone": self.timezone,
            "max_depth": self.max_depth, "min_samples_leaf": self.min_samples_leaf,
            "max_features": self.max_features, "max_samples": self.max_samples, "n_jobs": self.n_jobs,
            "threshold": self.threshold, "categories": list(self.categories),
        }

    def _make_forest(self, random_state: int):
        from sklearn.ensemble import RandomForestClassifier
        forest = RandomForestClassifier(
            n_estimators=self.n_estimators, max_depth=self.max_depth, min_samples_leaf=self.min_samples_leaf,
            max_features=self.max_features, max_samples=self.max_samples, n_jobs=self.n_jobs,
            random_state=random_state)
        try:
            forest._validate_params()
        except (ValueError, TypeError) as exc:
            raise ConfigError(f"invalid random forest parameter: {exc}") from None
        return forest

    # --- state ------------------------------------------------------------------------

    def _init_state(self) -> None:
        k, f = len(self.categories), len(self.feature_names)
        self._ids: list[str] = []
        self._rows: dict[str, int] = {}
        self._codes = [CategoryCodes() for _ in range(k)]
        self._log = CompletionLog(k)
        self._snapshot: list[np.ndarray] = [np.empty(0, np.int64) for _ in range(k)]
        t = self._table = {
            "X": GrowingArray((f,), np.float32, np.nan),      # features as seen at classification
            "codes": GrowingArray((k,), np.int64, -1),
            "anchors": GrowingArray((k,), np.int64, -1),
            "week": GrowingArray((), np.int64, -1),            # -1: never classified
            "subtime": GrowingArray((), np.float64, np.nan),
            "predicted": GrowingArray((), np.int8, -1),
            "p_small": GrowingArray((), np.float64, np.nan),
            "divider": GrowingArray((), np.float64, np.nan),
            "entry": GrowingArray((), np.int64, -1),           # completion log entry
            "runtime": GrowingArray((), np.float64, np.nan),
            "complete_time": GrowingArray((), np.float64, np.nan),
            "run": GrowingArray((), np.int64, 0),              # simulation run (see restart)
        }
        self._n = 0
        self._run = 0
        self._t = t
        self._now = -math.inf
        self._current_week = 0
        self._current_divider = self.divider if isinstance(self.divider, float) else math.nan
        self._log.relabel(self._current_divider)
        self._model: PackedForest | None = None
        self._fit_key: tuple | None = None
        self._importances: list[tuple[int, list[float]]] = []
        self._importances_current: list[float] | None = None
        self._weeks: list[dict] = [self._week_record(0, 0, 0, False)]

    def _week_record(self, week: int, training_size: int, training_small: int, refit: bool) -> dict:
        return {"week": week, "week_start": self.start_time + week * self.week,
                "divider": self._current_divider, "training_size": training_size,
                "training_small": training_small, "refit": refit,
                "model": self._model is not None}

    def _add_row(self, job: Job) -> int:
        static, keys = self._encoder.encode(job)
        codes = [cat.code(key) for cat, key in zip(self._codes, keys)]
        row = self._n
        for name in self._t:
            self._t[name].append(self._t[name].fill)
        self._t["X"].data[row, : len(static)] = static
        self._t["codes"].data[row] = codes
        self._t["subtime"].data[row] = job.subtime
        self._t["run"].data[row] = self._run
        self._ids.append(job.id)
        self._rows[job.id] = row
        self._n += 1
        return row

    # --- time -------------------------------------------------------------------------

    def week_of(self, now: float) -> int:
        """The index of the week ``now`` falls in (0 = the first week)."""
        return max(0, math.floor((now - self.start_time) / self.week))

    def _advance(self, now: float) -> None:
        if not _is_number(now) or not math.isfinite(now):
            raise ClassifierError(f"classifier: time must be a finite number, got {now!r}")
        if now < self._now:
            raise ClassifierError(f"classifier: time went backwards ({now} after {self._now})")
        self._now = float(now)
        week = self.week_of(now)
        if week > self._current_week:
            self._retrain(week)

    def _retrain(self, week: int) -> None:
        """Start ``week``: new divider, relabelled history, snapshot, refitted model."""
        self._current_week = week
        t, log = self._t, self._log
        rows = log.row.view
        train = np.sort(rows[t["week"].data[rows] >= 0])  # classified and completed, by submission
        if self.max_training_jobs is not None and len(train) > self.max_training_jobs:
            train = train[-self.max_training_jobs:]
        runtimes = t["runtime"].data[train]
        divider = self._current_divider
        if self.divider == "median":
            if len(train):
                divider = float(np.median(runtimes))
        elif self.divider == "last-week-median":
            start = self.start_time + week * self.week
            done = t["complete_time"].data[rows]
            recent = (done >= start - self.week) & (done < start) & (t["run"].data[rows] == self._run)
            if recent.any():
                divider = float(np.median(t["runtime"].data[rows[recent]]))
        if not (divider == self._current_divider or (math.isnan(divider) and math.isnan(self._current_divider))):
            self._current_divider = divider
            log.relabel(divider)
        self._snapshot = log.snapshot()
        labels = runtimes < divider
        refit = False
        if self.method == "rf" and len(train) and not math.isnan(divider):
            key = (len(log), divider)
            if key != self._fit_key:
                self._fit(train, labels)
                self._fit_key = key
                refit = True
        if self._model is not None and self._importances_current is not None:
            self._importances.append((week, self._importances_current))
        self._weeks.append(self._week_record(week, len(train), int(labels.sum()), refit))

    def training_matrix(self, rows: np.ndarray | None = None) -> np.ndarray:
        """The feature matrix of table rows (default: all classified jobs) under the current divider.

        The static features are the stored ones; the history features are rebuilt from each
        job's anchors (what it could see at its submission) with the current classes.
        """
        if rows is None:
            rows = np.flatnonzero(self._t["week"].view >= 0)
        n_static = self._encoder.n_static
        X = np.empty((len(rows), len(self.feature_names)), dtype=np.float32)
        X[:, :n_static] = self._t["X"].data[rows, :n_static]
        X[:, n_static:] = self._log.features(self._t["anchors"].data[rows])
        return X

    def _fit(self, train: np.ndarray, labels: np.ndarray) -> None:
        if labels.all() or not labels.any():
            self._model = PackedForest.constant(1.0 if labels.all() else 0.0)
            self._importances_current = [0.0] * len(self.feature_names)
            return
        forest = self._make_forest(self.seed)
        if isinstance(self.max_samples, numbers.Integral) and self.max_samples > len(train):
            forest.set_params(max_samples=None)  # scikit-learn refuses more samples than rows
        forest.fit(self.training_matrix(train), labels)
        self._model = PackedForest.from_sklearn(forest, positive=True)
        self._importances_current = forest.feature_importances_.tolist()

    # --- the online interface ---------------------------------------------------------

    def classify(self, job: Job, now: float) -> bool:
        """Predict whether ``job`` is small (True) or large; call once, at its submission."""
        self._advance(now)
        row = self._rows.get(job.id)
        t = self._t
        if row is not None and t["week"].data[row] >= 0:
            return bool(t["predicted"].data[row])
        if row is None:
            row = self._add_row(job)
        elif t["entry"].data[row] >= 0:
            raise ClassifierError(f"classifier: job {job.id} is classified after its completion")
        codes = t["codes"].data[row].tolist()
        if self.features == "paper":
            anchors = [int(snap[code]) if code < len(snap) else -1 for snap, code in zip(self._snapshot, codes)]
        else:
            anchors = self._log.last_entries(codes)
        history = self._log.features_one(anchors)
        n_static = self._encoder.n_static
        t["X"].data[row, n_static:] = history
        t["anchors"].data[row] = anchors
        divider = self._current_divider
        p = math.nan
        if self.method == "rf":
            if self._model is not None:
                p = self._model.proba_one(t["X"].data[row])
            small = p > self.threshold
        elif self.method == "oracle":
            runtime = job.runtime
            if runtime is not None and job.walltime > 0:
                runtime = min(runtime, job.walltime)
            small = runtime is not None and runtime < divider
            p = float(small)
        else:
            small = False
        t["week"].data[row] = self._current_week
        t["predicted"].data[row] = small
        t["p_small"].data[row] = p
        t["divider"].data[row] = divider
        return bool(small)

    def completed(self, job: Job, runtime: float, now: float) -> None:
        """Tell the classifier that ``job`` finished after running ``runtime`` seconds."""
        self._advance(now)
        if not (_is_number(runtime) and math.isfinite(runtime) and runtime >= 0):
            raise ClassifierError(f"classifier: job {job.id} completed with an invalid runtime {runtime!r}")
        row = self._rows.get(job.id)
        if row is None:
            row = self._add_row(job)  # completed without being classified: history only
        t = self._t
        if t["entry"].data[row] >= 0:
            return
        entry = self._log.append(row, float(runtime), t["codes"].data[row].tolist())
        t["entry"].data[row] = entry
        t["runtime"].data[row] = runtime
        t["complete_time"].data[row] = now

    def divider_at(self, now: float) -> float:
        """The divider in force at ``now`` (NaN while no job has completed); may retrain."""
        self._advance(now)
        return self._current_divider

    @property
    def current_week(self) -> int:
        return self._current_week

    def restart(self, start_time: float = 0.0) -> "JobClassifier":
        """Begin a new simulation at ``start_time`` with what was learnt (e.g. after :meth:`load`).

        The model, the divider and the history of completed jobs (and so the users' lags
        and small fractions, and the training data of the next retrains) are kept. The
        clock restarts: weeks count from ``start_time``, and the model in use is used from
        the first week. Job ids, predictions and weekly reports start afresh; the reports
        show the new run only. Returns ``self``.
        """
        if not (_is_number(start_time) and math.isfinite(start_time)):
            raise ConfigError(f"classifier start_time must be a finite number, got {start_time!r}")
        self.start_time = float(start_time)
        self._run += 1
        self._rows = {}
        self._now = -math.inf
        self._current_week = 0
        self._snapshot = self._log.snapshot()
        self._weeks = [self._week_record(0, 0, 0, False)]
        self._importances = ([(0, self._importances_current)]
                             if self._model is not None and self._importances_current is not None else [])
        return self

    # --- reports ----------------------------------------------------------------------

    def _current_rows(self) -> np.ndarray:
        """Table rows of the jobs classified in the current run."""
        return np.flatnonzero((self._t["week"].view >= 0) & (self._t["run"].view == self._run))

    def predictions(self) -> pd.DataFrame:
        """One row per classified job, in submission order.

        Columns: ``job_id``, ``week``, ``predicted_small``, ``p_small`` (the forest's
        probability; NaN without a model), ``divider`` (in force at classification),
        ``runtime`` and ``actual_small`` (runtime < divider; NA until the job completes or
        while the divider is undefined).
        """
        t = self._t
        rows = self._current_rows()
        runtime = t["runtime"].data[rows]
        divider = t["divider"].data[rows]
        known = ~np.isnan(runtime) & ~np.isnan(divider)
        actual = pd.array(np.where(known, runtime < divider, False), dtype="boolean")
        actual[~known] = pd.NA
        return pd.DataFrame({
            "job_id": [self._ids[r] for r in rows],
            "week": t["week"].data[rows],
            "predicted_small": t["predicted"].data[rows].astype(bool),
            "p_small": t["p_small"].data[rows],
            "divider": divider,
            "runtime": runtime,
            "actual_small": actual,
        })

    def weekly_report(self) -> pd.DataFrame:
        """One row per week in which the classifier was used or retrained.

        Columns: ``week``, ``week_start``, ``divider``, ``training_size``,
        ``training_small`` (training jobs labelled small), ``refit`` (a new forest was
        fitted), ``model`` (a model was in use), ``n_predicted``, ``n_predicted_small``,
        ``n_known`` (predicted jobs whose class is known), and, over the known ones,
        ``accuracy``, ``precision``, ``recall``, ``false_small_rate``, ``false_large_rate``.
        """
        weeks = pd.DataFrame(self._weeks).drop_duplicates("week", keep="last").set_index("week")
        preds = self.predictions()
        rows = []
        for week, group in preds.groupby("week", sort=True):
            known = group["actual_small"].notna().to_numpy()
            metrics = classification_metrics(group["predicted_small"].to_numpy()[known],
                                             group["actual_small"].to_numpy(dtype=bool, na_value=False)[known])
            rows.append({"week": week, "n_predicted": len(group),
                         "n_predicted_small": int(group["predicted_small"].sum()), "n_known": int(known.sum()),
                         **{m: metrics[m] for m in ("accuracy", "precision", "recall",
                                                     "false_small_rate", "false_large_rate")}})
        columns = ["week", "n_predicted", "n_predicted_small", "n_known", "accuracy", "precision", "recall",
                   "false_small_rate", "false_large_rate"]
        stats = pd.DataFrame(rows, columns=columns).set_index("week")
        report = weeks.join(stats, how="outer")
        for name in ("n_predicted", "n_predicted_small", "n_known"):
            report[name] = report[name].fillna(0).astype(np.int64)
        report["training_size"] = report["training_size"].fillna(0).astype(np.int64)
        report["training_small"] = report["training_small"].fillna(0).astype(np.int64)
        return report.reset_index()

    def summary(self) -> dict[str, float]:
        """:func:`classification_metrics` over every classified job whose class is known."""
        preds = self.predictions()
        known = preds["actual_small"].notna().to_numpy()
        return classification_metrics(preds["predicted_small"].to_numpy()[known],
                                      preds["actual_small"].to_numpy(dtype=bool, na_value=False)[known])

    def feature_importances(self) -> pd.DataFrame:
        """The forest's Gini importances for each week it was used (rows: week; columns: features)."""
        weeks = [w for w, _ in self._importances]
        values = np.array([v for _, v in self._importances], dtype=np.float64).reshape(-1, len(self.feature_names))
        return pd.DataFrame(values, index=pd.Index(weeks, name="week"), columns=self.feature_names)

    def feature_table(self) -> pd.DataFrame:
        """The feature vector each classified job had at its classification (index: job id)."""
        rows = self._current_rows()
        return pd.DataFrame(self._t["X"].data[rows].astype(np.float64), columns=self.feature_names,
                            index=pd.Index([self._ids[r] for r in rows], name="job_id"))

    # --- persistence ------------------------------------------------------------------

    def _state_arrays(self) -> dict[str, np.ndarray]:
        arrays = {f"table_{name}": col.view for name, col in self._t.items()}
        log = self._log
        for name in ("runtime", "row", "codes", "prev", "rank", "csum", "small"):
            arrays[f"log_{name}"] = getattr(log, name).view
        for c in range(len(self.categories)):
            arrays[f"log_last_{c}"] = log.last[c].view
            arrays[f"snapshot_{c}"] = self._snapshot[c]
            arrays[f"codes_users_{c}"], arrays[f"codes_traits_{c}"] = self._codes[c].to_arrays()
        arrays["ids"] = np.array(self._ids, dtype=str)
        if self._model is not None:
            for name, value in self._model.to_arrays().items():
                arrays[f"model_{name}"] = value
        arrays["importances"] = np.array([v for _, v in self._importances], dtype=np.float64).reshape(
            -1, len(self.feature_names))
        state = {
            "config": self.get_config(), "feature_names": self.feature_names, "n": self._n, "now": self._now,
            "current_week": self._current_week, "current_divider": self._current_divider, "run": self._run,
            "log_divider": log.divider, "fit_key": list(self._fit_key) if self._fit_key else None,
            "model_depth": self._model.depth if self._model is not None else None,
            "importances_weeks": [w for w, _ in self._importances],
            "importances_current": self._importances_current,
            "weeks": self._weeks, "users": self._encoder.user_values,
        }
        arrays["state_json"] = np.frombuffer(json.dumps(state).encode(), dtype=np.uint8)
        return arrays

    def save(self, path: str | Path) -> Path:
        """Write the classifier (config, model, feature state, reports) to ``path``."""
        path = Path(path)
        buffer = io.BytesIO()
        np.savez_compressed(buffer, **self._state_arrays())
        payload = buffer.getvalue()
        header = {"format": FORMAT_NAME, "format_version": FORMAT_VERSION,
                  "sha256": hashlib.sha256(payload).hexdigest(), "payload_bytes": len(payload)}
        with open(path, "wb") as out:
            out.write(MAGIC)
            out.write(json.dumps(header).encode() + b"\n")
            out.write(payload)
        return path

    @classmethod
    def load(cls, path: str | Path, *, start_time: float | None = None) -> "JobClassifier":
        """Read a classifier written by :meth:`save`.

        It continues exactly where it stopped; with ``start_time``, it starts a new
        simulation there instead (:meth:`restart`), keeping what it learnt.
        """
        path = Path(path)
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise ClassifierError(f"{path}: cannot read the classifier file ({exc.strerror})") from None
        if not data.startswith(MAGIC):
            raise ClassifierError(f"{path}: not a saved JobClassifier (bad magic line)")
        end = data.find(b"\n", len(MAGIC))
        try:
            header = json.loads(data[len(MAGIC):end])
            version = header["format_version"]
            digest, size = header["sha256"], header["payload_bytes"]
        except (ValueError, KeyError, TypeError):
            raise ClassifierError(f"{path}: corrupt classifier file (unreadable header)") from None
        if header.get("format") != FORMAT_NAME or version != FORMAT_VERSION:
            raise ClassifierError(f"{path}: classifier format {header.get('format')!r} version {version!r}; "
                                  f"this version reads {FORMAT_NAME!r} version {FORMAT_VERSION}")
        payload = data[end + 1:]
        if len(payload) != size or hashlib.sha256(payload).hexdigest() != digest:
            raise ClassifierError(f"{path}: corrupt classifier file (checksum mismatch)")
        try:
            with np.load(io.BytesIO(payload), allow_pickle=False) as npz:
                arrays = {name: npz[name] for name in npz.files}
            state = json.loads(arrays.pop("state_json").tobytes().decode())
            loaded = cls._from_state(state, arrays)
        except ClassifierError:
            raise
        except Exception as exc:  # a payload that passed the checksum but does not fit
            raise ClassifierError(f"{path}: corrupt classifier file ({type(exc).__name__}: {exc})") from None
        return loaded if start_time is None else loaded.restart(start_time)

    @classmethod
    def _from_state(cls, state: dict, arrays: dict[str, np.ndarray]) -> "JobClassifier":
        config = dict(state["config"])
        config["categories"] = tuple(config["categories"])
        self = cls(**config)
        if state["feature_names"] != self.feature_names:
            raise ClassifierError("saved feature names differ from this version's")
        for name, col in self._t.items():
            self._t[name] = GrowingArray.of(arrays[f"table_{name}"], fill=col.fill)
        self._n = int(state["n"])
        self._run = int(state["run"])
        self._ids = [str(i) for i in arrays["ids"].tolist()]
        run = self._t["run"].view
        self._rows = {job_id: i for i, job_id in enumerate(self._ids) if run[i] == self._run}
        log = self._log
        for name in ("runtime", "row", "codes", "prev", "rank", "csum", "small"):
            old = getattr(log, name)
            setattr(log, name, GrowingArray.of(arrays[f"log_{name}"], fill=old.fill))
        for c in range(len(self.categories)):
            log.last[c] = GrowingArray.of(arrays[f"log_last_{c}"], fill=-1)
            self._snapshot[c] = arrays[f"snapshot_{c}"]
            self._codes[c] = CategoryCodes.from_arrays(arrays[f"codes_users_{c}"], arrays[f"codes_traits_{c}"])
        log.divider = float(state["log_divider"])
        self._encoder.user_values = list(state["users"])
        self._encoder.users = {value: i for i, value in enumerate(self._encoder.user_values)}
        self._now = float(state["now"])
        self._current_week = int(state["current_week"])
        self._current_divider = float(state["current_divider"])
        self._fit_key = tuple(state["fit_key"]) if state["fit_key"] is not None else None
        if "model_roots" in arrays:
            self._model = PackedForest(*(arrays[f"model_{name}"] for name in PackedForest.ARRAYS),
                                       depth=state["model_depth"])
        self._importances = list(zip(state["importances_weeks"], arrays["importances"].tolist()))
        self._importances_current = state["importances_current"]
        self._weeks = state["weeks"]
        return self
