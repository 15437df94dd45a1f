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
    of every job completed so far (``"median"``, recomputed at each retrain: the paper trains
    on all previous weeks, and its dividers are the traces' medians), the median runtime of
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
    A scikit-learn classifier, given as ``estimator`` (default: our ``RandomForestClassifier``,
    :func:`~scheduler.knowledge.learner.default_forest`), cloned at each retrain with
    ``random_state=seed``. A job is classified small when the model's probability of "small"
    exceeds ``threshold`` (0.5 is scikit-learn's ``predict``). For speed, a fitted forest is
    packed (:class:`~scheduler.knowledge.forest.PackedForest`) and walked for one job at a
    time without scikit-learn's per-call overhead; it gives the probabilities of
    ``predict_proba``. Other estimators answer through their own ``predict_proba``.
    ``method="oracle"`` and ``"none"`` compute no features and keep no history: only what the
    divider and the reports need. The per-job calls are plain Python; numpy and scikit-learn
    run at the weekly retrain.

    Hyper-parameters (:data:`~scheduler.knowledge.learner.FOREST_DEFAULTS`), chosen by an
    offline replay of KTH-SP2 and SDSC-SP2 in which every job completes at subtime + runtime
    (no queueing), timing ``classify`` + ``completed`` + the weekly retrains on this project's
    2-core machine (scikit-learn 1.9):

    - ``n_estimators=12`` with ``max_samples=2500``: 2.6 to 2.9 times cheaper to fit than 24
      trees on 5000 rows, for an AUC of 0.916 / 0.920 (KTH-SP2 / SDSC-SP2, live features)
      against 0.920 / 0.923, and precision and recall at 0.5 within 0.7 point; fitting time
      is linear in the number of trees.
    - ``max_depth=14, min_samples_leaf=4``: unbounded trees are no more accurate, and
      the one-job walk costs a step per level.
    - ``max_samples=2500`` bootstrap rows per tree: bounds a weekly fit at about 0.1 s
      whatever the window.
    - ``max_training_jobs=20000`` most recently submitted completed jobs: 5000 loses
      2 points of accuracy on SDSC-SP2; the window bounds memory and the fitting cost.
    - ``n_jobs=1``: ``n_jobs=2`` fits the same forests, but no faster with 12 small trees
      (SDSC-SP2 replay: 16.4 to 17.0 s of wall time against 12.2 to 12.8 s), and would
      compete with parallel simulations in a sweep.
    - ``threshold=0.5`` (scikit-learn's ``predict``): lower thresholds trade false-small
      errors, the costly ones for a scheduler, for recall (KTH-SP2, live features, 24 trees:
      0.4 gives precision 0.82 / recall 0.84; 0.3 gives 0.75 / 0.88).

    A model is refitted at every retrain unless neither the completed jobs nor the divider
    changed since the last fit (the same data and seed give the same forest). In the replay
    that never happens: every week brings completions (47 refits in 47 weeks on KTH-SP2, 104
    in 104 on SDSC-SP2); the median divider repeats in 2 and 4 of those weeks, but on more
    data, so the forest still has to be refitted.

    CPU time of the replay (``time.process_time``) with these defaults, ``features="live"``
    (``"paper"`` is within 6%; ``method="oracle"``: 0.15 s, 0.5 s and 1.4 s), and with the
    previous defaults (24 trees, 5000 rows) on the same machine the same day. The refits
    include assembling the training matrix and packing the forest:

    =============================================  =======  =====  ===========  =====================
    trace                                          jobs     weeks  seconds      24 trees, 5000 rows
                                                                   (refits)     (refits)
    =============================================  =======  =====  ===========  =====================
    KTH-SP2 (1996-2.1-cln)                         28,467   48     6.6 (4.9)    14.1 (12.2)
    SDSC-SP2 (1998-4.2-cln)                        54,034   105    14.2 (11.2)  34.6 (31.1)
    ``generate(250000, weeks=250, seed=1)``        250,000  250    46.8 (31.9)  90.2 (74.5)
    =============================================  =======  =====  ===========  =====================

    Quality in the same replay (small = positive class, weeks after the first; the
    false-small rate is the share of all jobs that are large but predicted small; AUC of
    ``p_small``):

    ==========  ========  =========  ======  ========  ===========  ===========  =====
    trace       features  precision  recall  accuracy  false-small  false-large  AUC
    ==========  ========  =========  ======  ========  ===========  ===========  =====
    KTH-SP2     live      0.871      0.790   0.855     5.2%         9.3%         0.916
    KTH-SP2     paper     0.857      0.744   0.831     5.5%         11.4%        0.891
    SDSC-SP2    live      0.879      0.822   0.853     5.7%         9.0%         0.920
    SDSC-SP2    paper     0.831      0.752   0.797     7.7%         12.5%        0.865
    ==========  ========  =========  ======  ========  ===========  ===========  =====

    ``"live"`` is better on both traces and is the default. The paper reports precision
    0.79 / recall 0.90 / false-small 4.03% on KTH-SP2 and 0.89 / 0.91 / 5.85% on SDSC-SP2.

Persistence
    :meth:`JobClassifier.save` writes the configuration (the estimator as its class and
    parameters), the packed model, the job table, the completion log and the reports, in the
    format of :mod:`scheduler.knowledge.classifier_file` (no pickle: only forests can be saved).
    :meth:`JobClassifier.load` raises :class:`ClassifierError` on a version mismatch, a
    checksum mismatch or a corrupt file.
"""

from __future__ import annotations

import math
import numbers
from pathlib import Path

import numpy as np
import pandas as pd

from scheduler.core.job import Job
from scheduler.errors import ConfigError
from scheduler.knowledge.choices import (
    CLASSIFIER_METHODS as METHODS, DIVIDERS, FEATURE_MODES, PARTIAL_ORACLES, JobClass,
)
from scheduler.knowledge.classifier_file import ClassifierError, read_classifier_file, write_classifier_file
from scheduler.knowledge.features import CATEGORIES, CategoryCodes, CompletionLog, FeatureEncoder
from scheduler.knowledge.forest import PackedForest
from scheduler.knowledge.job_table import JobTable
from scheduler.knowledge.learner import (
    FOREST_DEFAULTS,
    Model,
    default_forest,
    describe,
    fitted_model,
    fresh_clone,
    from_description,
    is_forest,
    validate_estimator,
)
from scheduler.values import is_number

__all__ = ["ClassifierError", "JobClassifier", "PackedForest", "classification_metrics", "quality", "default_forest",
           "DEFAULTS", "FOREST_DEFAULTS"]

#: Default settings of the classifier itself (the forest's are :data:`FOREST_DEFAULTS`).
DEFAULTS = dict(max_training_jobs=20000, threshold=0.5)

#: The class of a job from its stored (small or uncertain, uncertain) flags.
_LABELS = {(1, 0): JobClass.SMALL, (1, 1): JobClass.UNCERTAIN, (0, 0): JobClass.LARGE}


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


def _check_choice(name, value, choices):
    if value not in choices:
        raise ConfigError(f"classifier {name} must be one of {', '.join(map(repr, choices))}, got {value!r}")


def _truly_small(job: Job, divider: float) -> bool:
    """The true class of ``job``: its runtime (capped by its walltime, as Batsim kills it then) is below
    ``divider``; never small when the runtime is unknown or the divider is undefined (NaN)."""
    runtime = job.runtime
    if runtime is not None and job.walltime > 0:
        runtime = min(runtime, job.walltime)
    return runtime is not None and runtime < divider


class JobClassifier:
    """Online small/large job classifier (see the module docstring).

    Parameters
    ----------
    method : ``"rf"`` (a trained model), ``"oracle"`` (true class) or ``"none"`` (all large).
    divider : ``"median"``, ``"last-week-median"`` or a positive number of seconds.
    features : ``"live"`` (history up to the submission) or ``"paper"`` (weekly snapshot).
    seed : the ``random_state`` of the estimator at every retrain.
    week : the retraining period, in seconds.
    start_time : the simulation start; weeks are counted from it.
    estimator : the unfitted scikit-learn classifier that ``method="rf"`` trains (cloned at each
        retrain; other methods ignore it); None: :func:`default_forest`. A forest of decision
        trees is packed for speed.
    max_training_jobs : train on at most this many of the most recently submitted
        completed jobs (None: all of them).
    timezone : the trace's time zone for the temporal features: an IANA name (the SWF
        ``TimeZoneString`` header), an offset in seconds east of UTC, or None (UTC).
    threshold : a job is small when P(small) > threshold.
    probe_threshold : None, or a job that is not small is uncertain when P(small) > probe_threshold
        (the decision core queues it after the small jobs and the safeguard watches it).
    categories : the history categories (a subset of ``features.CATEGORIES``).
    partial_oracle : ``"none"``, or a measurement aid of ``method="rf"`` (``choices.PARTIAL_ORACLES``):
        the true class corrects the forest's false-large or false-small answers, or answers for the
        forest while it has no model (the blind first week).
    """

    def __init__(self, *, method: str = "rf", divider: str | float = "median", features: str = "live",
                 seed: int = 0, week: float = 604800.0, start_time: float = 0.0, estimator=None,
                 max_training_jobs: int | None = DEFAULTS["max_training_jobs"],
                 timezone: str | float | None = None,
                 threshold: float = DEFAULTS["threshold"],
                 probe_threshold: float | None = None,
                 categories: tuple[str, ...] | list[str] = CATEGORIES,
                 partial_oracle: str = "none") -> None:
        _check_choice("method", method, METHODS)
        _check_choice("partial_oracle", partial_oracle, PARTIAL_ORACLES)
        if partial_oracle != "none" and method != "rf":
            raise ConfigError(f"classifier partial_oracle {partial_oracle!r} corrects the forest: it needs method 'rf'")
        _check_choice("features", features, FEATURE_MODES)
        if is_number(divider):
            if not (math.isfinite(divider) and divider > 0):
                raise ConfigError(f"classifier divider must be positive seconds, got {divider!r}")
            divider = float(divider)
        else:
            _check_choice("divider", divider, DIVIDERS)
        if not (is_number(week) and math.isfinite(week) and week > 0):
            raise ConfigError(f"classifier week must be positive seconds, got {week!r}")
        if not (is_number(start_time) and math.isfinite(start_time)):
            raise ConfigError(f"classifier start_time must be a finite number, got {start_time!r}")
        if not (isinstance(seed, numbers.Integral) and not isinstance(seed, bool) and seed >= 0):
            raise ConfigError(f"classifier seed must be a non-negative integer, got {seed!r}")
        if max_training_jobs is not None and not (isinstance(max_training_jobs, numbers.Integral)
                                                  and max_training_jobs > 0):
            raise ConfigError(f"classifier max_training_jobs must be a positive integer or None, "
                              f"got {max_training_jobs!r}")
        self.set_thresholds(threshold, probe_threshold)
        self.method = method
        self.divider = divider
        self.features = features
        self.seed = int(seed)
        self.week = float(week)
        self.start_time = float(start_time)
        self.max_training_jobs = None if max_training_jobs is None else int(max_training_jobs)
        self.timezone = float(timezone) if is_number(timezone) else timezone
        self.categories = tuple(categories)
        self.partial_oracle = partial_oracle
        self.estimator = None
        if method == "rf":
            self.estimator = default_forest() if estimator is None else estimator
            validate_estimator(self.estimator)
        self._encoder = FeatureEncoder(timezone, self.categories)
        self.feature_names = list(self._encoder.names)
        self._init_state()

    # --- configuration ----------------------------------------------------------------

    def get_config(self) -> dict:
        """The constructor arguments (JSON-safe; the estimator as its class and parameters)."""
        estimator = None
        if self.estimator is not None:
            estimator = (describe(self.estimator) if is_forest(self.estimator)
                         else {"class": type(self.estimator).__name__, "repr": repr(self.estimator)})
        return {
            "method": self.method, "divider": self.divider, "features": self.features, "seed": self.seed,
            "week": self.week, "start_time": self.start_time, "estimator": estimator,
            "max_training_jobs": self.max_training_jobs, "timezone": self.timezone,
            "threshold": self.threshold, "probe_threshold": self.probe_threshold,
            "categories": list(self.categories), "partial_oracle": self.partial_oracle,
        }

    def set_thresholds(self, threshold: float, probe_threshold: float | None = None) -> None:
        """Change the probability thresholds (e.g. of a loaded classifier); checked as in the constructor."""
        if not (is_number(threshold) and 0 <= threshold < 1):
            raise ConfigError(f"classifier threshold must be in [0, 1), got {threshold!r}")
        if probe_threshold is not None and not (is_number(probe_threshold) and 0 <= probe_threshold < threshold):
            raise ConfigError(f"classifier probe_threshold must be in [0, threshold), got {probe_threshold!r}")
        self.threshold = float(threshold)
        self.probe_threshold = None if probe_threshold is None else float(probe_threshold)

    # --- state ------------------------------------------------------------------------

    def _init_state(self) -> None:
        reads_features = self.method == "rf"
        k = len(self.categories) if reads_features else 0
        self._jobs = JobTable(k, len(self.feature_names) if reads_features else 0)
        # the history of completed jobs, for the features (only when a model reads them)
        self._codes = [CategoryCodes() for _ in range(k)]
        self._log = CompletionLog(k) if reads_features else None
        self._snapshot = None  # the history at the start of the week, for features="paper"
        self._run = 0
        self._completions = 0
        self._blind = (-1, math.nan)  # no-blind-week's divider, and the completion count it was computed at
        self._now = -math.inf
        self._same_week_until = -math.inf  # see _advance
        self._current_week = 0
        self._current_divider = self.divider if isinstance(self.divider, float) else math.nan
        if self._log is not None:
            self._log.relabel(self._current_divider)
            self._take_snapshot()
        self._model: Model | None = None
        self._fit_key: tuple | None = None
        self._importances: list[tuple[int, list[float]]] = []
        self._importances_current: list[float] | None = None
        self._weeks: list[dict] = [self._week_record(0, 0, 0, False)]

    def _take_snapshot(self) -> None:
        if self.features == "paper":
            self._snapshot = self._log.snapshot()

    def _week_record(self, week: int, training_size: int, training_small: int, refit: bool) -> dict:
        return {"week": week, "week_start": self.start_time + week * self.week,
                "divider": self._current_divider, "training_size": training_size,
                "training_small": training_small, "refit": refit,
                "model": self._model is not None}

    def _encode(self, job: Job) -> tuple[list[float], list[int]]:
        """The job's static features and category codes."""
        static, keys = self._encoder.encode(job)
        return static, [category.code(key) for category, key in zip(self._codes, keys)]

    # --- time -------------------------------------------------------------------------

    def week_of(self, now: float) -> int:
        """The index of the week ``now`` falls in (0 = the first week)."""
        return max(0, math.floor((now - self.start_time) / self.week))

    def _advance(self, now: float) -> None:
        if now.__class__ is float and self._now <= now < self._same_week_until:
            self._now = now  # the common case: a valid time in the current week
            return
        if not is_number(now) or not math.isfinite(now):
            raise ClassifierError(f"classifier: time must be a finite number, got {now!r}")
        if now < self._now:
            raise ClassifierError(f"classifier: time went backwards ({now} after {self._now})")
        self._now = float(now)
        week = self.week_of(now)
        if week > self._current_week:
            self._retrain(week)
        # times from now to a hair before the next week are surely in this week (week_of rounds)
        self._same_week_until = self.start_time + (self._current_week + 1 - 1e-9) * self.week

    def _retrain(self, week: int) -> None:
        """Start ``week``: new divider, relabelled history, snapshot, refitted model."""
        self._current_week = week
        jobs = self._jobs
        runtime = jobs.column("runtime")
        # classified and completed, by submission
        completed = np.flatnonzero(~np.isnan(runtime) & (jobs.column("week") >= 0))
        train = completed
        if self.max_training_jobs is not None and len(train) > self.max_training_jobs:
            train = train[-self.max_training_jobs:]
        runtimes = runtime[train]
        divider = self._current_divider
        if self.divider == "median":  # of every job completed so far (the paper trains on all previous weeks)
            if len(completed):
                divider = float(np.median(runtime[completed]))
        elif self.divider == "last-week-median":
            start = self.start_time + week * self.week
            done = jobs.column("complete_time")
            recent = (done >= start - self.week) & (done < start) & (jobs.column("run") == self._run)
            if recent.any():
                divider = float(np.median(runtime[recent]))
        if not (divider == self._current_divider or (math.isnan(divider) and math.isnan(self._current_divider))):
            self._current_divider = divider
            if self._log is not None:
                self._log.relabel(divider)
        if self._log is not None:
            self._take_snapshot()
        labels = runtimes < divider
        refit = False
        if self.method == "rf" and len(train) and not math.isnan(divider):
            key = (self._completions, divider)
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
        if self._log is None:
            raise ClassifierError(f"classifier: method {self.method!r} computes no features")
        if rows is None:
            rows = np.flatnonzero(self._jobs.column("week") >= 0)
        n_static = self._encoder.n_static
        X = np.empty((len(rows), len(self.feature_names)), dtype=np.float32)
        X[:, :n_static] = self._jobs.matrix("features", rows)[:, :n_static]
        X[:, n_static:] = self._log.features(self._jobs.matrix("anchors", rows))
        return X

    def _fit(self, train: np.ndarray, labels: np.ndarray) -> None:
        if labels.all() or not labels.any():
            self._model = PackedForest.constant(1.0 if labels.all() else 0.0)
            self._importances_current = [0.0] * len(self.feature_names)
            return
        estimator = fresh_clone(self.estimator, self.seed, len(train))
        estimator.fit(self.training_matrix(train), labels)
        self._model = fitted_model(estimator, positive=True)
        importances = getattr(estimator, "feature_importances_", None)
        self._importances_current = ([math.nan] * len(self.feature_names) if importances is None
                                     else importances.tolist())

    # --- the online interface ---------------------------------------------------------

    def classify(self, job: Job, now: float) -> JobClass:
        """The class of ``job``: small when P(small) > ``threshold``, uncertain when it is not but
        exceeds ``probe_threshold``, else large. Call once, at its submission."""
        self._advance(now)
        jobs = self._jobs
        row = jobs.rows.get(job.id)
        if row is not None:
            if jobs.week[row] < 0:
                raise ClassifierError(f"classifier: job {job.id} is classified after its completion")
            return _LABELS[jobs.predicted[row], jobs.uncertain[row]]
        divider = self._current_divider
        p = math.nan
        uncertain = False
        if self._log is not None:  # a model reads the features
            static, codes = self._encode(job)
            anchors, history = self._log.history(codes, self._snapshot)
            x = static + history
            if self._model is not None:
                p = self._model.proba_one(x)
            small = p > self.threshold
            uncertain = not small and self.probe_threshold is not None and p > self.probe_threshold
            if self.partial_oracle != "none":
                small, uncertain = self._partial_oracle(job, small, uncertain)
            jobs.add(job.id, self._run, self._current_week, int(small or uncertain), int(uncertain), p, divider,
                     codes, anchors, x)
        else:
            if self.method == "oracle":
                small = _truly_small(job, divider)
                p = float(small)
            else:
                small = False
            jobs.add(job.id, self._run, self._current_week, int(small), 0, p, divider)
        return _LABELS[int(small or uncertain), int(uncertain)]

    def _partial_oracle(self, job: Job, small: bool, uncertain: bool) -> tuple[bool, bool]:
        """The forest's answer with the ``partial_oracle`` correction (a measurement aid)."""
        if self.partial_oracle == "no-blind-week":
            if self._model is not None:
                return small, uncertain
            return _truly_small(job, self._blind_divider()), False
        truly_small = _truly_small(job, self._current_divider)
        if self.partial_oracle == "no-false-large" and truly_small:
            return True, False
        if self.partial_oracle == "no-false-small" and small and not truly_small:
            return False, uncertain
        return small, uncertain

    def completed(self, job: Job, runtime: float, now: float) -> None:
        """Tell the classifier that ``job`` finished after running ``runtime`` seconds."""
        self._advance(now)
        if not (is_number(runtime) and math.isfinite(runtime) and runtime >= 0):
            raise ClassifierError(f"classifier: job {job.id} completed with an invalid runtime {runtime!r}")
        jobs = self._jobs
        row = jobs.rows.get(job.id)
        if row is None:  # completed without being classified: history only
            row = jobs.add(job.id, self._run, codes=self._encode(job)[1] if self._log is not None else ())
        if not jobs.complete(row, runtime, now):
            return
        self._completions += 1
        if self._log is not None:
            self._log.append(float(runtime), jobs.codes_of(row))

    def _blind_divider(self) -> float:
        """``no-blind-week``'s divider while there is no model: the median runtime of the jobs completed so far
        (recomputed only after a completion)."""
        if self._blind[0] != self._completions:
            runtimes = self._jobs.column("runtime")
            done = runtimes[~np.isnan(runtimes)]
            self._blind = (self._completions, float(np.median(done)) if len(done) else math.nan)
        return self._blind[1]

    def divider_at(self, now: float) -> float:
        """The divider in force at ``now`` (NaN while no job has completed); may retrain."""
        self._advance(now)
        if self.partial_oracle == "no-blind-week" and self._model is None:
            return self._blind_divider()  # what the blind week's true classes were judged by
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
        if not (is_number(start_time) and math.isfinite(start_time)):
            raise ConfigError(f"classifier start_time must be a finite number, got {start_time!r}")
        self.start_time = float(start_time)
        self._run += 1
        self._jobs.rows = {}
        self._now = -math.inf
        self._same_week_until = -math.inf
        self._current_week = 0
        if self._log is not None:
            self._take_snapshot()
        self._weeks = [self._week_record(0, 0, 0, False)]
        self._importances = ([(0, self._importances_current)]
                             if self._model is not None and self._importances_current is not None else [])
        return self

    # --- reports ----------------------------------------------------------------------

    def _current_rows(self) -> np.ndarray:
        """Table rows of the jobs classified in the current run."""
        return np.flatnonzero((self._jobs.column("week") >= 0) & (self._jobs.column("run") == self._run))

    def predictions(self) -> pd.DataFrame:
        """One row per classified job, in submission order.

        Columns: ``job_id``, ``week``, ``predicted_small`` (small or uncertain: the jobs ahead of Q,
        watched by the safeguard), ``uncertain``, ``p_small`` (the model's
        probability; NaN without a model), ``divider`` (in force at classification),
        ``runtime`` and ``actual_small`` (runtime < divider; NA until the job completes or
        while the divider is undefined).
        """
        jobs = self._jobs
        rows = self._current_rows()
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

    def weekly_report(self) -> pd.DataFrame:
        """One row per week in which the classifier was used or retrained.

        Columns: ``week``, ``week_start``, ``divider``, ``training_size``,
        ``training_small`` (training jobs labelled small), ``refit`` (a new model was
        fitted), ``model`` (a model was in use), ``n_predicted``, ``n_predicted_small``,
        ``n_known`` (predicted jobs whose class is known), and, over the known ones,
        ``accuracy``, ``precision``, ``recall``, ``false_small_rate``, ``false_large_rate``.
        """
        weeks = pd.DataFrame(self._weeks).drop_duplicates("week", keep="last").set_index("week")
        counts = self._confusion_by_week()
        rates = pd.DataFrame([quality(*row) for row in counts[["tp", "fp", "fn", "tn"]].itertuples(index=False)],
                             index=counts.index, columns=list(RATES))
        stats = counts[["n_predicted", "n_predicted_small", "n_known"]].join(rates)
        report = weeks.join(stats, how="outer")
        for name in ("n_predicted", "n_predicted_small", "n_known", "training_size", "training_small"):
            report[name] = report[name].fillna(0).astype(np.int64)
        return report.reset_index()

    def summary(self) -> dict[str, float]:
        """:func:`quality` over every classified job whose class is known."""
        counts = self._confusion_by_week()
        return quality(*(int(counts[name].sum()) for name in ("tp", "fp", "fn", "tn")))

    def _confusion_by_week(self) -> pd.DataFrame:
        """Per week of classification: jobs predicted, predicted small, of known class, and the confusion
        counts (small = positive) over the known ones."""
        preds = self.predictions()
        predicted = preds["predicted_small"].to_numpy()
        known = preds["actual_small"].notna().to_numpy()
        actual = preds["actual_small"].to_numpy(dtype=bool, na_value=False)
        columns = {"n_predicted": np.ones(len(preds), dtype=np.int64), "n_predicted_small": predicted,
                   "n_known": known, "tp": known & predicted & actual, "fp": known & predicted & ~actual,
                   "fn": known & ~predicted & actual, "tn": known & ~predicted & ~actual}
        return pd.DataFrame(columns).astype(np.int64).groupby(preds["week"].to_numpy()).sum().rename_axis("week")

    def feature_importances(self) -> pd.DataFrame:
        """The forest's Gini importances for each week it was used (rows: week; columns: features)."""
        weeks = [w for w, _ in self._importances]
        values = np.array([v for _, v in self._importances], dtype=np.float64).reshape(-1, len(self.feature_names))
        return pd.DataFrame(values, index=pd.Index(weeks, name="week"), columns=self.feature_names)

    def feature_table(self) -> pd.DataFrame:
        """The feature vector each classified job had at its classification (index: job id)."""
        if self._log is None:
            raise ClassifierError(f"classifier: method {self.method!r} computes no features")
        rows = self._current_rows()
        return pd.DataFrame(self._jobs.matrix("features", rows).astype(np.float64), columns=self.feature_names,
                            index=pd.Index([self._jobs.ids[r] for r in rows], name="job_id"))

    # --- persistence ------------------------------------------------------------------

    def save(self, path: str | Path) -> Path:
        """Write the classifier (config, model, history, reports) to ``path``."""
        config = self.get_config()
        if self.estimator is not None:
            config["estimator"] = describe(self.estimator)  # raises unless it is a forest
        arrays = {f"table_{name}": values for name, values in self._jobs.to_arrays().items()}
        if self._log is not None:
            arrays |= {f"log_{name}": values for name, values in self._log.to_arrays().items()}
            for c, codes in enumerate(self._codes):
                arrays[f"codes_users_{c}"], arrays[f"codes_traits_{c}"] = codes.to_arrays()
            if self._snapshot is not None:
                for c, (last, nsmall) in enumerate(zip(*self._snapshot)):
                    arrays[f"snapshot_last_{c}"] = np.array(last, dtype=np.int64)
                    arrays[f"snapshot_nsmall_{c}"] = np.array(nsmall, dtype=np.int64)
        if self._model is not None:
            arrays |= {f"model_{name}": values for name, values in self._model.to_arrays().items()}
        arrays["importances"] = np.array([v for _, v in self._importances], dtype=np.float64).reshape(
            -1, len(self.feature_names))
        state = {
            "config": config, "feature_names": self.feature_names, "now": self._now,
            "current_week": self._current_week, "current_divider": self._current_divider, "run": self._run,
            "completions": self._completions, "fit_key": list(self._fit_key) if self._fit_key else None,
            "model_depth": self._model.depth if self._model is not None else None,
            "importances_weeks": [w for w, _ in self._importances],
            "importances_current": self._importances_current,
            "weeks": self._weeks, "users": self._encoder.user_values,
        }
        return write_classifier_file(path, state, arrays)

    @classmethod
    def load(cls, path: str | Path, *, start_time: float | None = None) -> "JobClassifier":
        """Read a classifier written by :meth:`save`.

        It continues exactly where it stopped; with ``start_time``, it starts a new
        simulation there instead (:meth:`restart`), keeping what it learnt.
        """
        state, arrays = read_classifier_file(path)
        try:
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
        if config["estimator"] is not None:
            config["estimator"] = from_description(config["estimator"])
        self = cls(**config)
        if state["feature_names"] != self.feature_names:
            raise ClassifierError("saved feature names differ from this version's")
        self._run = int(state["run"])
        self._completions = int(state["completions"])
        self._now = float(state["now"])
        self._current_week = int(state["current_week"])
        self._current_divider = float(state["current_divider"])
        table = {name[len("table_"):]: values for name, values in arrays.items() if name.startswith("table_")}
        self._jobs = JobTable.from_arrays(table, self._jobs.k, self._jobs.f, self._run)
        if self._log is not None:
            k = len(self.categories)
            log = {name[len("log_"):]: values for name, values in arrays.items() if name.startswith("log_")}
            self._log = CompletionLog.from_arrays(log, k, self._current_divider)
            self._codes = [CategoryCodes.from_arrays(arrays[f"codes_users_{c}"], arrays[f"codes_traits_{c}"])
                           for c in range(k)]
            if self.features == "paper":
                self._snapshot = ([arrays[f"snapshot_last_{c}"].tolist() for c in range(k)],
                                  [arrays[f"snapshot_nsmall_{c}"].tolist() for c in range(k)])
        self._encoder.user_values = list(state["users"])
        self._encoder.users = {value: i for i, value in enumerate(self._encoder.user_values)}
        self._fit_key = tuple(state["fit_key"]) if state["fit_key"] is not None else None
        if "model_roots" in arrays:
            self._model = PackedForest(*(arrays[f"model_{name}"] for name in PackedForest.ARRAYS),
                                       depth=state["model_depth"])
        self._importances = list(zip(state["importances_weeks"], arrays["importances"].tolist()))
        self._importances_current = state["importances_current"]
        self._weeks = state["weeks"]
        return self
