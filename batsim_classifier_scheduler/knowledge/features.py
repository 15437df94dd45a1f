"""Job features for the online small/large classifier (Zrigui et al., JPDC 2022, Table 4).

A job's feature vector is built when it is submitted, from the job itself and from the
jobs that had *completed* by then; never from its own runtime or from the future.

Static features (from the job alone)
    ``requested_time`` (the walltime p̃, -1 when none), ``res`` (processors),
    ``requested_procs`` (the SWF request, field 8; ``res`` when absent), and six temporal
    features of the submission in the trace's local time: ``hour``, ``day_of_week``
    (Monday = 0), ``day_of_month``, ``month``, ``week_of_year`` (ISO) and ``quarter``.
    The submission instant is the job's ``unix_submit_time`` extra field (UTC epoch, when it is
    a number of seconds within ``MAX_SECONDS`` of 1970), read in the trace's time zone (an IANA name such as ``"Europe/Stockholm"``, from the SWF
    ``TimeZoneString`` header, or a fixed UTC offset in seconds). Without
    ``unix_submit_time``, ``job.subtime`` is taken as seconds since Monday 5 January 1970,
    00:00 UTC (an arbitrary Monday), read in UTC.

History features (from completed jobs), for each category of :data:`CATEGORIES`
    A category groups the jobs of one user sharing a trait: ``user_reqtime`` (same
    requested time), ``user_procs`` (same processor count), ``user_day`` (same local day of
    the week of submission), and ``user`` (all the user's jobs). For each, the classes
    (1 = small, 0 = large, -1 = unknown) of the last three completed jobs of the category
    (``<cat>_lag1`` is the most recent completion), the fraction of small jobs among its
    completed jobs (``<cat>_small_frac``, -1 when none) and their number (``<cat>_count``).
    A job without a ``user`` extra field belongs to one "unknown" user.

Classes depend on the divider, which changes when the model is retrained, so no class is
stored per completion. Instead the history is a *completion log* (one entry per completed
job, in completion order) with, per category, a link to the previous completion of the same
category and running counts. What a job saw at submission is recorded as one *anchor* per
category: the log entry of the last completion of its category that it could see (-1: none).
A submission reads its features in plain Python (:meth:`CompletionLog.history`); the history
features of the training jobs under a new divider are a few vectorised gathers and one
grouped cumulative sum per category (:meth:`CompletionLog.features`).
"""

from __future__ import annotations

import math
import numbers
from array import array
from collections.abc import Sequence
from datetime import datetime, timedelta, timezone as dt_timezone, tzinfo
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import numpy as np

from batsim_classifier_scheduler.core.job import Job
from batsim_classifier_scheduler.errors import ConfigError
from batsim_classifier_scheduler.util.values import MAX_SECONDS, is_number

#: Static feature names, in column order.
STATIC_FEATURES = ("requested_time", "res", "requested_procs", "hour", "day_of_week",
                   "day_of_month", "month", "week_of_year", "quarter")
TEMPORAL_FEATURES = STATIC_FEATURES[3:]
#: History categories: the user plus one trait of the job (or the user alone).
CATEGORIES = ("user_reqtime", "user_procs", "user_day", "user")
#: Per category: the classes of the last ``N_LAGS`` completions, the small fraction and count.
N_LAGS = 3
HISTORY_STATS = tuple(f"lag{k}" for k in range(1, N_LAGS + 1)) + ("small_frac", "count")

#: ``job.subtime`` = 0 is this instant when a job has no ``unix_submit_time`` (a Monday).
SUBTIME_EPOCH = datetime(1970, 1, 5, tzinfo=dt_timezone.utc)


def feature_names(categories: tuple[str, ...] = CATEGORIES) -> list[str]:
    """All feature names, in column order: static ones, then the history of each category."""
    return list(STATIC_FEATURES) + [f"{c}_{s}" for c in categories for s in HISTORY_STATS]


def resolve_timezone(name: str | float | int | None) -> tzinfo:
    """The tzinfo for an IANA name, a fixed offset in seconds east of UTC, or None (UTC)."""
    if name is None:
        return dt_timezone.utc
    if isinstance(name, numbers.Real) and not isinstance(name, bool):
        if not math.isfinite(name) or abs(name) >= 86400:
            raise ConfigError(f"timezone offset must be within ±86400 s, got {name!r}")
        return dt_timezone(timedelta(seconds=float(name)))
    if isinstance(name, str):
        try:
            return ZoneInfo(name)
        except (ZoneInfoNotFoundError, ValueError):
            raise ConfigError(f"unknown time zone {name!r} (expected an IANA name such as "
                              "'Europe/Stockholm', or an offset in seconds)") from None
    raise ConfigError(f"timezone must be an IANA name, an offset in seconds or None, got {name!r}")


def timezone_from_header(header: dict) -> str | float | None:
    """The time zone an SWF header gives: ``TimeZoneString``, else the ``TimeZone`` offset."""
    name = header.get("TimeZoneString")
    if isinstance(name, str) and name.strip():
        return name.strip()
    offset = header.get("TimeZone")
    return float(offset) if isinstance(offset, numbers.Real) and not isinstance(offset, bool) else None


def submission_instant(job: Job) -> tuple[float, bool]:
    """``(seconds, is_unix)``: the job's ``unix_submit_time`` if it has one the calendar holds, else its
    subtime."""
    unix = job.extras.get("unix_submit_time")
    if is_number(unix) and abs(unix) <= MAX_SECONDS:  # NaN fails
        return float(unix), True
    return float(job.subtime), False


def temporal_features(seconds: float, is_unix: bool, tz: tzinfo) -> tuple[int, int, int, int, int, int]:
    """``(hour, day_of_week, day_of_month, month, week_of_year, quarter)`` of one instant."""
    if is_unix:
        moment = datetime.fromtimestamp(seconds, tz)
    else:
        moment = SUBTIME_EPOCH + timedelta(seconds=seconds)
    return (moment.hour, moment.weekday(), moment.day, moment.month, moment.isocalendar()[1],
            (moment.month - 1) // 3 + 1)


def user_key(job: Job):
    """The job's user as a hashable, JSON-safe value (int or str); None when unknown."""
    user = job.extras.get("user")
    if user is None or isinstance(user, bool):
        return None
    if isinstance(user, (int, numbers.Integral)):  # int first: the ABC check costs a microsecond
        return int(user)
    if isinstance(user, (float, numbers.Real)):
        if not math.isfinite(user):
            return None
        return int(user) if float(user).is_integer() else float(user)
    return str(user)


def requested_procs(job: Job) -> int:
    """The SWF requested processors (field 8) when given and positive, else ``job.res``."""
    value = job.extras.get("requested_procs")
    if is_number(value) and value > 0:
        return int(value)
    return int(job.res)


class FeatureEncoder:
    """Turns a job into its static features and its category keys.

    Parameters
    ----------
    timezone : the trace's time zone (IANA name, offset in seconds, or None for UTC).
    categories : the history categories, a subset of :data:`CATEGORIES`.
    """

    def __init__(self, timezone: str | float | None = None,
                 categories: tuple[str, ...] = CATEGORIES) -> None:
        unknown = [c for c in categories if c not in CATEGORIES]
        if unknown or not categories or len(set(categories)) != len(categories):
            raise ConfigError(f"categories must be distinct names among {CATEGORIES}, got {categories}")
        self.timezone = timezone
        self.tz = resolve_timezone(timezone)
        self.categories = tuple(categories)
        self.names = feature_names(self.categories)
        self.n_static = len(STATIC_FEATURES)
        self._traits = [CATEGORIES.index(c) for c in self.categories]  # each category's trait
        self.users: dict = {}         # user value -> user code
        self.user_values: list = []   # user code -> user value

    def user_code(self, job: Job) -> int:
        key = user_key(job)
        code = self.users.get(key)
        if code is None:
            code = self.users[key] = len(self.user_values)
            self.user_values.append(key)
        return code

    def encode(self, job: Job) -> tuple[list[float], list[tuple[int, float]]]:
        """``(static feature values, category keys)`` of a job; keys are ``(user code, trait)``."""
        seconds, is_unix = submission_instant(job)
        temporal = temporal_features(seconds, is_unix, self.tz)
        walltime = float(job.walltime) if job.walltime > 0 else -1.0
        res = float(job.res)
        static = [walltime, res, float(requested_procs(job)), *map(float, temporal)]
        user = self.user_code(job)
        traits = (walltime, res, float(temporal[1]), 0.0)  # in the order of CATEGORIES
        return static, [(user, traits[t]) for t in self._traits]


class CategoryCodes:
    """Dense integer codes for the keys of one category, assigned at first sight."""

    def __init__(self) -> None:
        self.codes: dict[tuple[int, float], int] = {}
        self.keys: list[tuple[int, float]] = []

    def code(self, key: tuple[int, float]) -> int:
        code = self.codes.get(key)
        if code is None:
            code = self.codes[key] = len(self.keys)
            self.keys.append(key)
        return code

    def __len__(self) -> int:
        return len(self.keys)

    def to_arrays(self) -> tuple[np.ndarray, np.ndarray]:
        users = np.array([k[0] for k in self.keys], dtype=np.int64)
        traits = np.array([k[1] for k in self.keys], dtype=np.float64)
        return users, traits

    @classmethod
    def from_arrays(cls, users: np.ndarray, traits: np.ndarray) -> "CategoryCodes":
        codes = cls()
        codes.keys = [(int(u), float(t)) for u, t in zip(users.tolist(), traits.tolist())]
        codes.codes = {key: i for i, key in enumerate(codes.keys)}
        return codes


class CompletionLog:
    """Completed jobs in completion order, linked per category; their classes under one divider.

    Entry ``e`` holds the runtime and, per category ``c``: ``codes[c][e]``,
    ``prev[c][e]`` (the previous entry of the same category, -1 if none) and ``rank[c][e]``
    (completions of the category up to and including ``e``). These never change. A job's class is
    ``runtime < divider``; per category, ``last[c][code]`` is the newest entry and ``nsmall[c][code]``
    the number of small completions under the current divider.

    The per-job calls (:meth:`append`, :meth:`history`) are plain Python over ``array.array`` columns;
    numpy is used at retrain time only (:meth:`relabel`, :meth:`features`).
    """

    def __init__(self, n_categories: int) -> None:
        self.k = n_categories
        self.runtime = array("d")
        self.codes = [array("q") for _ in range(n_categories)]
        self.prev = [array("q") for _ in range(n_categories)]
        self.rank = [array("q") for _ in range(n_categories)]
        self.last: list[list[int]] = [[] for _ in range(n_categories)]
        self.nsmall: list[list[int]] = [[] for _ in range(n_categories)]
        self.divider = math.nan

    def __len__(self) -> int:
        return len(self.runtime)

    def append(self, runtime: float, codes: Sequence[int]) -> int:
        """Log a completion; returns its entry index."""
        e = len(self.runtime)
        self.runtime.append(runtime)
        small = runtime < self.divider
        for c, code in enumerate(codes):
            last, nsmall, rank = self.last[c], self.nsmall[c], self.rank[c]
            if code >= len(last):
                missing = code + 1 - len(last)
                last.extend([-1] * missing)
                nsmall.extend([0] * missing)
            previous = last[code]
            last[code] = e
            self.codes[c].append(code)
            self.prev[c].append(previous)
            rank.append(rank[previous] + 1 if previous >= 0 else 1)
            if small:
                nsmall[code] += 1
        return e

    @property
    def live(self) -> tuple[list[list[int]], list[list[int]]]:
        """The history as it is now: ``(last, nsmall)``, kept up to date."""
        return self.last, self.nsmall

    def snapshot(self) -> tuple[list[list[int]], list[list[int]]]:
        """A copy of :attr:`live`: the history as it is now, for the paper's weekly snapshot."""
        return [last.copy() for last in self.last], [nsmall.copy() for nsmall in self.nsmall]

    def history(self, codes: Sequence[int], seen=None) -> tuple[list[int], list[float]]:
        """What a job of category ``codes`` sees: its anchors (the newest entry of each category, -1 if
        none) and its history features, category by category. ``seen`` is :attr:`live` (default) or a
        :meth:`snapshot` taken under the current divider."""
        last_of, nsmall_of = seen or self.live
        runtime, divider = self.runtime, self.divider
        anchors: list[int] = []
        values: list[float] = []
        for c, code in enumerate(codes):
            last = last_of[c]
            anchor = last[code] if code < len(last) else -1
            anchors.append(anchor)
            if anchor < 0:
                values += _NO_HISTORY
                continue
            prev, entry = self.prev[c], anchor
            for _ in range(N_LAGS):
                if entry >= 0:
                    values.append(1.0 if runtime[entry] < divider else 0.0)
                    entry = prev[entry]
                else:
                    values.append(-1.0)
            count = self.rank[c][anchor]
            values.append(nsmall_of[c][code] / count)
            values.append(float(count))
        return anchors, values

    def relabel(self, divider: float) -> None:
        """Make ``divider`` the small/large boundary: recount the small completions per category."""
        self.divider = float(divider)
        small = np.array(self.runtime) < self.divider
        for c in range(self.k):
            codes = np.array(self.codes[c])
            self.nsmall[c] = np.bincount(codes[small], minlength=len(self.last[c])).tolist()

    def small_counts(self, c: int, small: np.ndarray, entries: np.ndarray, first: int | None = None) -> np.ndarray:
        """For each of ``entries`` (log entries; -1: none, counted 0), the small completions of its category
        ``c`` up to and including it. ``small`` is each entry's class under the log's divider.

        A cumulative sum grouped by category over the entries from ``first`` on only (default: the oldest of
        ``entries``; the completions before it are the live small count, :attr:`nsmall`, less those after):
        the entries laid out category after category (a category's block starts after the blocks of the lower
        codes; an entry's place in it is its rank less the category's completions before the window), summed
        cumulatively, minus the sum before its block. An entry below ``first`` must have no later completion of
        its category before ``first`` (``first`` at most the log's length when each job saw its history, whose
        anchors ``entries`` are): its count is its category's before the window.
        """
        entries = np.asarray(entries, dtype=np.int64)
        counts = np.zeros(len(entries), dtype=np.int64)
        seen = entries >= 0
        if not seen.any():
            return counts
        if first is None:
            first = int(entries[seen].min())
        codes, rank = np.array(self.codes[c][first:]), np.array(self.rank[c][first:])
        last = np.array(self.last[c], dtype=np.int64)
        sizes = np.bincount(codes, minlength=len(last))  # each category's entries in the window
        before = np.where(last >= 0, _gather(self.rank[c], last), 0) - sizes  # and before it
        start = np.cumsum(sizes) - sizes
        position = start[codes] + rank - before[codes] - 1
        laid_out = np.zeros(len(codes), dtype=bool)
        laid_out[position] = small[first:]
        total = np.zeros(len(codes) + 1, dtype=np.int64)
        np.cumsum(laid_out, out=total[1:])
        small_before = np.array(self.nsmall[c], dtype=np.int64) - (total[start + sizes] - total[start])
        inside = entries >= first
        window = entries[inside] - first
        code = codes[window]
        counts[inside] = small_before[code] + total[position[window] + 1] - total[start[code]]
        older = seen & ~inside
        if older.any():
            counts[older] = small_before[_gather(self.codes[c], entries[older])]
        return counts

    def features(self, anchors: np.ndarray, first: int | None = None) -> np.ndarray:
        """History features for anchors ``(n, k)`` (log entries, -1 = none) under the current divider; ``first``
        as :meth:`small_counts` takes it.

        Returns ``(n, k * len(HISTORY_STATS))`` float64, category by category. The arrays indexed by entry
        get one more element, read by entry -1: no class (-1), no previous entry, no completion.
        """
        anchors = np.asarray(anchors, dtype=np.int64).reshape(-1, self.k)
        out = np.empty((len(anchors), self.k, len(HISTORY_STATS)), dtype=np.float64)
        if len(self) == 0:
            out[:] = _NO_HISTORY[: len(HISTORY_STATS)]
            return out.reshape(len(anchors), -1)
        small = np.array(self.runtime) < self.divider
        classes = np.append(small.astype(np.float64), -1.0)
        for c in range(self.k):
            entry = anchors[:, c]
            prev = np.append(np.array(self.prev[c]), -1)
            for lag in range(N_LAGS):
                out[:, c, lag] = classes[entry]
                entry = prev[entry]
            count = np.append(np.array(self.rank[c]), 0)[anchors[:, c]]
            nsmall = self.small_counts(c, small, anchors[:, c], first)
            out[:, c, N_LAGS] = np.where(count > 0, nsmall / np.maximum(count, 1), -1.0)
            out[:, c, N_LAGS + 1] = count
        return out.reshape(len(anchors), -1)

    def to_arrays(self) -> dict[str, np.ndarray]:
        """The log as named arrays (for a saved classifier); :meth:`from_arrays` reads them back."""
        arrays = {"runtime": np.array(self.runtime)}
        for c in range(self.k):
            arrays |= {f"codes_{c}": np.array(self.codes[c]), f"prev_{c}": np.array(self.prev[c]),
                       f"rank_{c}": np.array(self.rank[c]), f"last_{c}": np.array(self.last[c], dtype=np.int64)}
        return arrays

    @classmethod
    def from_arrays(cls, arrays: dict[str, np.ndarray], n_categories: int, divider: float) -> "CompletionLog":
        log = cls(n_categories)
        log.runtime = array("d", arrays["runtime"].astype(np.float64).tobytes())
        for c in range(n_categories):
            log.codes[c] = array("q", arrays[f"codes_{c}"].astype(np.int64).tobytes())
            log.prev[c] = array("q", arrays[f"prev_{c}"].astype(np.int64).tobytes())
            log.rank[c] = array("q", arrays[f"rank_{c}"].astype(np.int64).tobytes())
            log.last[c] = arrays[f"last_{c}"].tolist()
        log.relabel(divider)
        return log


def _gather(column: array, index: np.ndarray) -> np.ndarray:
    """``column[index]`` of an ``array.array`` column, through a numpy view of it that does not outlive the call
    (while a view lives, the column cannot grow)."""
    return np.frombuffer(column, dtype=np.dtype(column.typecode))[index]


#: The history features of a category without completions: unknown lags, no small fraction, none seen.
_NO_HISTORY = [-1.0] * N_LAGS + [-1.0, 0.0]
