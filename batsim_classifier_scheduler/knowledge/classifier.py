"""The online small/large job classifier of Zrigui et al. (JPDC 2022), as a pure component.

The decision core calls :meth:`JobClassifier.classify` when a job is submitted (in
submission order) and :meth:`JobClassifier.completed` when a job finishes. No I/O, no
wall clock; the same calls with the same seed give the same answers.

Weeks and retraining
    Weeks are ``week`` seconds long, counted from ``start_time`` (the simulation start). The first
    call whose ``now`` falls in a new week retrains the model on the jobs that completed so far (all
    submitted in earlier weeks), keeping the ``max_training_jobs`` most recently submitted; with
    ``train_window`` (N weeks, off by default: the paper trains on all previous weeks), only those
    of this run that completed during the last N weeks. During the first week there is no model and
    every job is large. Jobs are labelled small iff runtime < divider; the divider is the median
    runtime of every job completed so far (``"median"``, recomputed at each retrain: the paper
    trains on all previous weeks, and its dividers are the traces' medians), the median runtime of
    the jobs that completed during the previous week (``"last-week-median"``), or a fixed number of
    seconds. When no job has completed yet the divider is undefined (NaN) and every job is large.
    ``method="oracle"`` gives the true class (``job.runtime``, capped by the walltime, < divider)
    and ``method="none"`` calls every job large.

Features (:mod:`batsim_classifier_scheduler.knowledge.features`)
    The job's request and submission time, and the classes of the completed jobs of the
    same user with the same requested time, processor count or day of the week, or of the
    user as a whole. ``features="live"`` uses every job completed before the submission;
    ``features="paper"`` only those completed before the current week started (the
    snapshot taken at the weekly retrain). When the divider changes, the history's classes
    change: the training matrix is rebuilt from what each job could see at its submission
    (its anchors in the completion log), relabelled under the new divider.

Model and cost
    A scikit-learn classifier, given as ``estimator`` (default: our ``RandomForestClassifier``,
    :func:`~batsim_classifier_scheduler.knowledge.learner.default_forest`), cloned at each retrain with
    ``random_state=seed``. A job is classified small when the model's probability of "small"
    exceeds ``threshold`` (0.5 is scikit-learn's ``predict``). For speed, a fitted forest is
    packed (:class:`~batsim_classifier_scheduler.knowledge.forest.PackedForest`) and walked for one job at a
    time without scikit-learn's per-call overhead; it gives the probabilities of
    ``predict_proba``. Other estimators answer through their own ``predict_proba``.
    ``method="oracle"`` and ``"none"`` compute no features and keep no history: only what the
    divider and the reports need. The per-job calls are plain Python; numpy and scikit-learn
    run at the weekly retrain.

    The defaults (:data:`~batsim_classifier_scheduler.knowledge.learner.FOREST_DEFAULTS`, :data:`DEFAULTS`) were chosen
    by an offline replay of KTH-SP2 and SDSC-SP2; what each costs and gains, and the classifier's
    quality in that replay, are in ``benchmarks/README.md`` ("The forest's hyper-parameters").

Reports and persistence
    Reports: :mod:`~batsim_classifier_scheduler.knowledge.classifier_reports` (rates: :mod:`~batsim_classifier_scheduler.knowledge.confusion`); save
    and load: :mod:`~batsim_classifier_scheduler.knowledge.classifier_file` (no pickle: only forests can be saved).
"""

from __future__ import annotations

import math
import numbers
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from batsim_classifier_scheduler.core.job import Job, JobClass
from batsim_classifier_scheduler.errors import ConfigError
from batsim_classifier_scheduler.knowledge.choices import (CLASSIFIER_METHODS as METHODS, DIVIDERS, FEATURE_MODES,
                                                           PARTIAL_ORACLES)
from batsim_classifier_scheduler.knowledge.classifier_file import ClassifierError, load_classifier, save_classifier
from batsim_classifier_scheduler.knowledge import classifier_reports as reports
from batsim_classifier_scheduler.knowledge.confusion import RATES, classification_metrics, quality
from batsim_classifier_scheduler.knowledge.features import CATEGORIES, CategoryCodes, CompletionLog, FeatureEncoder
from batsim_classifier_scheduler.knowledge.forest import PackedForest
from batsim_classifier_scheduler.knowledge.classified_jobs import JobTable
if TYPE_CHECKING:
    import pandas as pd  # annotations only
from batsim_classifier_scheduler.knowledge.learner import (
    FOREST_DEFAULTS,
    Model,
    default_forest,
    describe,
    fitted_model,
    fresh_clone,
    is_forest,
    validate_estimator,
)
from batsim_classifier_scheduler.util.values import is_number

__all__ = ["ClassifierError", "JobClassifier", "PackedForest", "classification_metrics", "quality", "default_forest",
           "DEFAULTS", "FOREST_DEFAULTS", "RATES"]

#: Default settings of the classifier itself (the forest's are :data:`FOREST_DEFAULTS`).
DEFAULTS = dict(max_training_jobs=20000, threshold=0.5)

#: The class of a job from its stored (small or uncertain, uncertain) flags.
_LABELS = {(1, 0): JobClass.SMALL, (1, 1): JobClass.UNCERTAIN, (0, 0): JobClass.LARGE}


def _check_choice(name, value, choices):
    if value not in choices:
        raise ConfigError(f"classifier {name} must be one of {', '.join(map(repr, choices))}, got {value!r}")


def _truly_small(job: Job, divider: float) -> bool:
    """The true class of ``job``: its runtime (capped by its walltime, as Batsim kills it then) is below
    ``divider``; never small when the runtime is unknown or the divider is undefined (NaN)."""
    runtime = job.capped_runtime
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
    train_window : None (every previous week), or train only on the jobs that completed during the
        last ``train_window`` weeks of this run (the divider is still computed as ``divider`` says).
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
                 train_window: int | None = None,
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
        if train_window is not None and not (isinstance(train_window, numbers.Integral)
                                             and not isinstance(train_window, bool) and train_window > 0):
            raise ConfigError(f"classifier train_window must be a positive number of weeks or None, "
                              f"got {train_window!r}")
        self.set_thresholds(threshold, probe_threshold)
        self.method = method
        self.divider = divider
        self.features = features
        self.seed = int(seed)
        self.week = float(week)
        self.start_time = float(start_time)
        self.max_training_jobs = None if max_training_jobs is None else int(max_training_jobs)
        self.train_window = None if train_window is None else int(train_window)
        self.timezone = float(timezone) if is_number(timezone) else timezone
        self.categories = tuple(categories)
        self.partial_oracle = partial_oracle
        self.estimator = None
        if method == "rf":
            if estimator is not None:
                validate_estimator(estimator)  # our default forest needs no check
            self.estimator = default_forest() if estimator is None else estimator
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
            "max_training_jobs": self.max_training_jobs, "train_window": self.train_window, "timezone": self.timezone,
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
        #: (run, week) -> the log's length when the week began (for the training matrix's sums)
        self._week_starts: dict[tuple[int, int], int] = {}
        if self._log is not None:
            self._log.relabel(self._current_divider)
            self._take_snapshot()
            self._week_starts[(self._run, 0)] = 0
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
        if self._log is not None:
            self._week_starts[(self._run, week)] = len(self._log)
        jobs = self._jobs
        runtime = jobs.column("runtime")
        # classified and completed, by submission
        completed = np.flatnonzero(~np.isnan(runtime) & (jobs.column("week") >= 0))
        train = completed
        if self.train_window is not None:  # completed during the last train_window weeks of this run
            since = self.start_time + (week - self.train_window) * self.week
            recent = (jobs.column("complete_time")[train] >= since) & (jobs.column("run")[train] == self._run)
            train = train[recent]
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
            if self.train_window is not None:  # the same completions, fewer of them in the window as time passes:
                key += (len(train), int(train[0]))  # the first and the count tell which suffix of them is kept
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
        X[:, n_static:] = self._log.features(self._jobs.matrix("anchors", rows), self._seen_from(rows))
        return X

    def _seen_from(self, rows: np.ndarray) -> int | None:
        """The log's length when the week of the oldest of ``rows`` began (None if unknown, for a week of a
        run before a :meth:`load`): each of them saw the history of that many completions or more."""
        if not len(rows):
            return None
        oldest = int(rows.min())  # classified first: rows are added in order
        return self._week_starts.get((self._jobs.run[oldest], self._jobs.week[oldest]))

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

    def p_small(self, job_id: str) -> float:
        """The model's probability that a classified job is small (NaN without a model, or for an unknown job)."""
        row = self._jobs.rows.get(job_id)
        return math.nan if row is None else self._jobs.p_small[row]

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
            self._week_starts[(self._run, 0)] = len(self._log)
        self._weeks = [self._week_record(0, 0, 0, False)]
        self._importances = ([(0, self._importances_current)]
                             if self._model is not None and self._importances_current is not None else [])
        return self

    # --- reports (batsim_classifier_scheduler.knowledge.classifier_reports) ------------------------------

    def predictions(self) -> pd.DataFrame:
        """One row per job classified in this run (:func:`~batsim_classifier_scheduler.knowledge.classifier_reports.predictions`)."""
        return reports.predictions(self._jobs, reports.current_rows(self._jobs, self._run))

    def weekly_report(self) -> pd.DataFrame:
        """One row per week in which the classifier was used or retrained."""
        return reports.weekly_report(self._weeks, self.predictions())

    def summary(self) -> dict[str, float]:
        """The quality over every classified job whose class is known, and the uncertain jobs' count and share."""
        return reports.summary(self.predictions())

    def feature_importances(self) -> pd.DataFrame:
        """The forest's importances for each week it was used (rows: week; columns: features)."""
        return reports.feature_importances(self._importances, self.feature_names)

    def feature_table(self) -> pd.DataFrame:
        """The feature vector each classified job had at its classification (index: job id)."""
        if self._log is None:
            raise ClassifierError(f"classifier: method {self.method!r} computes no features")
        return reports.feature_table(self._jobs, reports.current_rows(self._jobs, self._run), self.feature_names)

    # --- persistence ------------------------------------------------------------------

    def save(self, path: str | Path) -> Path:
        """Write the classifier (config, model, history, reports) to ``path``."""
        return save_classifier(self, path)

    @classmethod
    def load(cls, path: str | Path, *, start_time: float | None = None) -> "JobClassifier":
        """Read a classifier written by :meth:`save`.

        It continues exactly where it stopped; with ``start_time``, it starts a new
        simulation there instead (:meth:`restart`), keeping what it learnt.
        """
        loaded = load_classifier(cls, path)
        return loaded if start_time is None else loaded.restart(start_time)
