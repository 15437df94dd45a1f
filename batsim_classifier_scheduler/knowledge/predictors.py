"""Runtime predictors (after Talby et al.) and the predictions the decision core plans with.

A :class:`Predictor` sees four hooks:

- ``predict(job, now)`` on arrival: the job's first prediction;
- ``on_start(job, now)`` when the job starts;
- ``on_end(job, runtime, now)`` when it terminates (``runtime`` is what it ran);
- ``on_deadline_miss(job, elapsed, now)`` when it is still running as its prediction runs out.

``on_start`` and ``on_end`` may return ``{job_id: new prediction}`` for any queued or running
job; ``on_deadline_miss`` may return the job's new prediction, or None to let the correction
rule (``batsim_classifier_scheduler.knowledge.corrections``) decide. :class:`Predictions` owns the predictions
and enforces the invariants whatever the predictor returns:

- a prediction is at least ``MIN_PREDICTION`` (1 s) and never exceeds the requested time p̃;
- a running job's prediction exceeds its elapsed time (strictly), except when p̃ itself is
  reached, where Batsim kills the job anyway;
- each job's prediction history ``[(time, prediction), ...]`` is recorded (for the
  time-weighted accuracy of ``batsim_classifier_scheduler.knowledge.accuracy``).

Predictors (registered with the one registry of names, ``batsim_classifier_scheduler.registry``):

- ``requested``: p̃.
- ``clairvoyant``: the actual runtime, capped at p̃.
- ``constant`` (``constant:C``, the one predictor taking an argument: its ``argument`` option): C seconds
  (default 1), capped at p̃.
- ``ave2`` (EASY++, Tsafrir et al. 2007): the mean runtime of the user's last two jobs, capped at
  p̃; the runtime of the only one when the user has one; p̃ for a user without any.
- ``ruh`` (recent user history): the median runtime of the user's last (up to) three jobs; p̃ for
  a user without any.
- ``sbh`` / ``sbh-noest``: session-based history (Talby et al.), see :class:`SessionBasedHistory` and
  :class:`SessionBasedHistoryNoEstimate`.
- ``eloss``: Gaussier et al.'s online regression with the E-Loss, see :mod:`batsim_classifier_scheduler.knowledge.eloss`.

Each predictor class carries its registry name (``name``); ``easy++`` is another name of ``ave2``. A plug-in
predictor (``FILE.py:NAME``...) is a :class:`Predictor` class, or a function making one.

A user's "last" jobs (``ave2``, ``ruh``) are, after Tsafrir et al., the most recently *submitted*
of the user's terminated jobs: a job that ends after a later-submitted one has ended does not
displace it.
"""

from __future__ import annotations

import math
from bisect import insort
from collections import defaultdict
from itertools import count
from statistics import fmean, median
from typing import Any

from batsim_classifier_scheduler.core.job import Job
from batsim_classifier_scheduler.errors import ConfigError
from batsim_classifier_scheduler.registry import Made, Rules, call, define, describe, make, register

MIN_PREDICTION = 1.0

Updates = dict[str, float] | None


def user_of(job: Job) -> Any:
    """The job's user (its workload when the trace has none), as a dictionary key: a value of another type
    than a number or a string (a list, from a broken workload) by its text."""
    user = job.extras.get("user", job.workload)
    return user if isinstance(user, (int, float, str)) else str(user)


class Predictor:
    """Base predictor: predicts p̃ and learns nothing.

    ``name`` is its registered name; ``argument``, for a predictor named with an argument
    (``constant:C``), the option the argument gives (a number).
    """

    name = "base"
    argument: str | None = None

    def predict(self, job: Job, now: float) -> float:
        return job.walltime

    def known(self, job: Job) -> float | None:
        """What the job alone tells, before any history: what ``--estimates`` plans with (the requested time p̃;
        None without one)."""
        return job.walltime if job.walltime > 0 else None

    def on_start(self, job: Job, now: float) -> Updates:
        return None

    def on_end(self, job: Job, runtime: float, now: float) -> Updates:
        return None

    def on_deadline_miss(self, job: Job, elapsed: float, now: float) -> float | None:
        return None


class RequestedPredictor(Predictor):
    name = "requested"


class ClairvoyantPredictor(Predictor):
    """The actual runtime, capped at p̃ (p̃ when the runtime is unknown; as an estimate, none)."""

    name = "clairvoyant"

    def predict(self, job: Job, now: float) -> float:
        runtime = job.capped_runtime
        return job.walltime if runtime is None else runtime

    def known(self, job: Job) -> float | None:
        return job.capped_runtime


class ConstantPredictor(Predictor):
    name = "constant"
    argument = "constant"

    def __init__(self, constant: float = 1.0) -> None:
        if not constant > 0:
            raise ConfigError(f"constant predictor: expected a positive number of seconds, got {constant!r}")
        self.constant = float(constant)

    def predict(self, job: Job, now: float) -> float:
        return self.constant


class _UserHistory(Predictor):
    """Predicts ``combine`` of the runtimes of the user's last ``window`` jobs, p̃ for a user without
    any. The last jobs are the most recently submitted of the user's terminated jobs (Tsafrir et al.:
    the history is updated when a job submitted after the ones it holds terminates)."""

    window = 1

    def __init__(self) -> None:
        self.history: dict[Any, list[tuple[int, float]]] = defaultdict(list)  # user -> [(rank, runtime)]
        self._ranks = count()
        self._rank: dict[str, int] = {}  # submitted, not terminated job -> its submission rank

    @staticmethod
    def combine(runtimes: list[float]) -> float:
        raise NotImplementedError

    def predict(self, job: Job, now: float) -> float:
        self._rank[job.id] = next(self._ranks)
        last = self.history.get(user_of(job))
        return self.combine([runtime for _, runtime in last]) if last else job.walltime

    def on_end(self, job: Job, runtime: float, now: float) -> Updates:
        rank = self._rank.pop(job.id, None)
        last = self.history[user_of(job)]
        insort(last, (next(self._ranks) if rank is None else rank, runtime))
        if len(last) > self.window:
            del last[0]
        return None


class Ave2Predictor(_UserHistory):
    """EASY++'s predictor: the mean runtime of the user's last two jobs (of the only one if one)."""

    name = "ave2"
    window = 2

    combine = staticmethod(fmean)


class RecentUserHistory(_UserHistory):
    """The median runtime of the user's last (up to) three jobs."""

    name = "ruh"
    window = 3
    combine = staticmethod(median)


class SessionBasedHistory(Predictor):
    """Talby et al.'s session-based history.

    A user's jobs form sessions: a session breaks when the user's think time (the time between
    the end of their last job and a submission) is at least ``think_time`` (20 min). The
    prediction of a job is the median runtime of the terminated jobs of the user's current
    session that match it, searched with a list of criteria (processors, estimate, executable)
    from the most specific (all of them) to the least (none): ``dfs`` drops criteria from the
    end of the list one at a time; ``bfs`` tries every subset of a size before the smaller
    sizes. ``depth`` limits how many criteria may be dropped (None = all). Without any matching
    job in the session, the user's whole history is searched the same way; without any, p̃.
    ``sbh-noest`` is the same without the estimate criterion.
    """

    name = "sbh"

    def __init__(self, criteria: tuple[str, ...] = ("res", "walltime", "executable"), search: str = "dfs",
                 depth: int | None = None, think_time: float = 20 * 60) -> None:
        if search not in ("dfs", "bfs"):
            raise ConfigError(f"sbh: search must be dfs or bfs, got {search!r}")
        self.criteria = tuple(criteria)
        self.search = search
        self.depth = depth
        self.think_time = think_time
        self.last_end: dict[Any, float] = {}
        self.running: dict[Any, int] = defaultdict(int)
        self.session: dict[Any, list[tuple[dict, float]]] = defaultdict(list)
        self.all: dict[Any, list[tuple[dict, float]]] = defaultdict(list)
        self.session_of: dict[str, int] = {}
        self.session_id: dict[Any, int] = defaultdict(int)

    @staticmethod
    def _features(job: Job) -> dict:
        return {"res": job.res, "walltime": job.walltime, "executable": job.extras.get("executable")}

    def _subsets(self) -> list[tuple[str, ...]]:
        from itertools import combinations

        n = len(self.criteria)
        min_size = 0 if self.depth is None else max(n - self.depth, 0)
        if self.search == "dfs":
            return [self.criteria[:k] for k in range(n, min_size - 1, -1)]
        return [c for k in range(n, min_size - 1, -1) for c in combinations(self.criteria, k)]

    def _match(self, history: list[tuple[dict, float]], features: dict) -> float | None:
        for subset in self._subsets():
            runtimes = [rt for f, rt in history if all(f[c] == features[c] for c in subset)]
            if runtimes:
                return median(runtimes)
        return None

    def predict(self, job: Job, now: float) -> float:
        user = user_of(job)
        last = self.last_end.get(user)
        if self.running[user] == 0 and last is not None and now - last >= self.think_time:
            self.session_id[user] += 1
            self.session[user] = []
        self.session_of[job.id] = self.session_id[user]
        self.running[user] += 1
        features = self._features(job)
        for history in (self.session[user], self.all[user]):
            found = self._match(history, features)
            if found is not None:
                return found
        return job.walltime

    def on_end(self, job: Job, runtime: float, now: float) -> Updates:
        user = user_of(job)
        self.running[user] = max(self.running[user] - 1, 0)
        self.last_end[user] = now
        entry = (self._features(job), runtime)
        if self.session_of.pop(job.id, None) == self.session_id[user]:
            self.session[user].append(entry)
        self.all[user].append(entry)
        return None


class SessionBasedHistoryNoEstimate(SessionBasedHistory):
    """:class:`SessionBasedHistory` whose criteria leave out the estimate (p̃) by default."""

    name = "sbh-noest"

    def __init__(self, criteria: tuple[str, ...] = ("res", "executable"), **options: Any) -> None:
        super().__init__(criteria, **options)


def _seconds(text: str) -> float:
    """The C of ``constant:C``: a positive number of seconds."""
    try:
        value = float(text)
    except ValueError:
        raise ValueError("C must be a number of seconds") from None
    if not 0 < value < math.inf:
        raise ValueError(f"C must be a positive number of seconds, got {text!r}")
    return value


def _check(spec: str, target: Any) -> None:
    if not callable(target):
        raise ConfigError(f"predictor {spec!r}: not a runtime predictor (a Predictor class, or a function making "
                          f"one); got {describe(target)}")


def _make(made: Made) -> Predictor:
    """The predictor: made with its ``Options`` instance if it declares one, else with its options as keywords
    (and the argument of ``NAME:ARG`` as the one its class names)."""
    if made.instance is not None:
        return call("predictor", made.name, made.target, made.instance)
    options = dict(made.options or {})
    if made.argument is not None:
        options = {made.target.argument: made.argument, **options}
    try:
        return made.target(**options)
    except TypeError as exc:
        raise ConfigError(f"predictor {made.name!r}: bad options {options!r} ({exc})") from None


define("predictor", Rules(check=_check, make=_make, loose=lambda spec, target, options: options))
register("predictor", RequestedPredictor.name, RequestedPredictor)
register("predictor", ClairvoyantPredictor.name, ClairvoyantPredictor)
register("predictor", ConstantPredictor.name, ConstantPredictor, argument=_seconds, metavar="C")
register("predictor", Ave2Predictor.name, Ave2Predictor)
register("predictor", "easy++", Ave2Predictor)  # EASY++'s name for ave2 (whose predictions it names)
register("predictor", RecentUserHistory.name, RecentUserHistory)
register("predictor", SessionBasedHistory.name, SessionBasedHistory)
register("predictor", SessionBasedHistoryNoEstimate.name, SessionBasedHistoryNoEstimate)
register("predictor", "eloss", "batsim_classifier_scheduler.knowledge.eloss:ELossRegression")  # numpy's: imported when asked for


def get_predictor(name: str, **options: Any) -> Predictor:
    """The predictor called ``name``, made with ``options``."""
    return make("predictor", name, options)


class Predictions:
    """The predictions of every queued and running job: a predictor plus a correction rule.

    This is the runtime-knowledge interface (``name``, ``estimate(job)``) the decision core
    reads, and the bookkeeping of the hooks. Every method returning updates returns
    ``{job_id: prediction}`` for the jobs whose prediction changed (invariants enforced).
    """

    def __init__(self, predictor: Predictor, correction: Any) -> None:
        self.predictor = predictor
        self.correction = correction
        self.name = f"{predictor.name}+{correction.name}"
        self.current: dict[str, float] = {}
        self.original: dict[str, float] = {}  # the prediction at submission
        self.started: dict[str, float] = {}  # running job -> start time
        self.jobs: dict[str, Job] = {}
        self.history: dict[str, list[tuple[float, float]]] = {}  # job -> [(time, prediction)]
        self.runtimes: dict[str, float] = {}  # terminated job -> runtime
        self.ends: dict[str, float] = {}  # terminated job -> termination time
        self.requested: dict[str, float] = {}  # job -> requested time p̃
        self.misses: list[tuple[float, str, float, float]] = []  # (time, job, old, new prediction)
        self._accuracy = None  # the per-job accuracy table, until the next termination

    # --- the knowledge interface --------------------------------------------------

    def estimate(self, job: Job) -> float | None:
        prediction = self.current.get(job.id)
        if prediction is not None:
            return prediction
        if job.walltime > 0:
            return job.walltime
        return None

    def expected_end(self, job_id: str) -> float:
        return self.started[job_id] + self.current[job_id]

    def accuracy_table(self):
        """:func:`batsim_classifier_scheduler.knowledge.accuracy.job_accuracy` of the jobs terminated so far, computed
        once per termination (a run's summary and its ``_predictions.csv`` share it)."""
        if self._accuracy is None:
            from batsim_classifier_scheduler.knowledge.accuracy import job_accuracy

            self._accuracy = job_accuracy(self)
        return self._accuracy

    @staticmethod
    def accuracy_summary(table) -> dict:
        """:func:`batsim_classifier_scheduler.knowledge.accuracy.accuracy_summary` of an :meth:`accuracy_table`."""
        from batsim_classifier_scheduler.knowledge.accuracy import accuracy_summary

        return accuracy_summary(table)

    # --- invariants ------------------------------------------------------------------

    @staticmethod
    def clamp(job: Job, prediction: float) -> float:
        if not math.isfinite(prediction):
            prediction = job.walltime
        prediction = max(prediction, MIN_PREDICTION)
        if job.walltime > 0:
            prediction = min(prediction, job.walltime)
        return prediction

    def _set(self, job: Job, prediction: float, now: float) -> float | None:
        """Set a prediction (clamped); for a running job, correct it if it is not beyond the
        elapsed time. Returns the new prediction if it changed, else None."""
        prediction = self.clamp(job, prediction)
        start = self.started.get(job.id)
        if start is not None and prediction <= now - start:
            prediction = self._corrected(job, now - start)
        if start is not None:
            prediction = self._beyond_now(job, prediction, now)
        if self.current.get(job.id) == prediction:
            return None
        self.current[job.id] = prediction
        self.history[job.id].append((now, prediction))
        return prediction

    def _corrected(self, job: Job, elapsed: float) -> float:
        new = self.correction.correct(self.original[job.id], self.current[job.id], elapsed, job.walltime)
        new = self.clamp(job, new)
        if new <= elapsed and job.walltime > 0:
            new = job.walltime  # nothing beyond p̃: the job ends (or is killed) at p̃
        return new

    def _beyond_now(self, job: Job, prediction: float, now: float) -> float:
        """Round a running job's prediction up so that start + prediction > now in floating point
        (in steps of the sum's own precision: a small prediction's ulp is far finer than ``now``'s)."""
        start = self.started[job.id]
        step = math.ulp(now)
        while start + prediction <= now and (job.walltime <= 0 or prediction < job.walltime):
            prediction += step
            if job.walltime > 0:
                prediction = min(prediction, job.walltime)
        return prediction

    def _apply(self, updates: Updates, now: float) -> dict[str, float]:
        changed = {}
        for job_id, prediction in (updates or {}).items():
            job = self.jobs.get(job_id)
            if job is None:
                continue  # not queued nor running
            new = self._set(job, prediction, now)
            if new is not None:
                changed[job_id] = new
        return changed

    # --- hooks -----------------------------------------------------------------------

    def submit(self, job: Job, now: float) -> dict[str, float]:
        """A job arrived: its first prediction (read it with ``estimate``)."""
        prediction = self.clamp(job, self.predictor.predict(job, now))
        self.jobs[job.id] = job
        self.current[job.id] = self.original[job.id] = prediction
        self.history[job.id] = [(now, prediction)]
        self.requested[job.id] = job.walltime
        return {}

    def start(self, job: Job, now: float) -> dict[str, float]:
        self.started[job.id] = now
        return self._apply(self.predictor.on_start(job, now), now)

    def end(self, job: Job, now: float) -> dict[str, float]:
        start = self.started.pop(job.id)
        runtime = now - start
        self.runtimes[job.id] = runtime
        self._accuracy = None
        self.ends[job.id] = now
        self.jobs.pop(job.id, None)
        self.current.pop(job.id, None)
        self.original.pop(job.id, None)
        return self._apply(self.predictor.on_end(job, runtime, now), now)

    def deadline_miss(self, job: Job, now: float) -> float:
        """``job`` still runs at its predicted end: its new prediction (> elapsed unless p̃)."""
        old = self.current[job.id]
        # it ran its whole prediction, even where now - start rounds a hair below it
        elapsed = max(now - self.started[job.id], old)
        proposed = self.predictor.on_deadline_miss(job, elapsed, now)
        if proposed is not None and self.clamp(job, proposed) > elapsed:
            new = self.clamp(job, proposed)
        else:
            new = self._corrected(job, elapsed)
        new = self._beyond_now(job, new, now)
        if new != old:
            self.current[job.id] = new
            self.history[job.id].append((now, new))
        self.misses.append((now, job.id, old, new))
        return new


def make_predictions(predictor: str, correction: str, options: dict | None = None) -> Predictions:
    """The predictions of the predictor and correction rule so called."""
    return Predictions(make("predictor", predictor, options), make("correction", correction))
