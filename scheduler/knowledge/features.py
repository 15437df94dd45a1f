"""Job features for the online small/large classifier (Zrigui et al., JPDC 2022, Table 4).

A job's feature vector is built when it is submitted, from the job itself and from the
jobs that had *completed* by then; never from its own runtime or from the future.

Static features (from the job alone)
    ``requested_time`` (the walltime p̃, -1 when none), ``res`` (processors),
    ``requested_procs`` (the SWF request, field 8; ``res`` when absent), and six temporal
    features of the submission in the trace's local time: ``hour``, ``day_of_week``
    (Monday = 0), ``day_of_month``, ``month``, ``week_of_year`` (ISO) and ``quarter``.
    The submission instant is the job's ``unix_submit_time`` extra field (UTC epoch), read in
    the trace's time zone (an IANA name such as ``"Europe/Stockholm"``, from the SWF
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
stored per category. Instead the history is a *completion log* (one entry per completed
job, in completion order) with, per category, a link to the previous completion of the same
category. What a job saw at submission is recorded as one *anchor* per category: the log
entry of the last completion of its category that it could see (-1: none). The history
features of any set of jobs under any divider are then a few vectorised gathers
(:meth:`CompletionLog.features`), and re-labelling the whole log after a retrain is one
comparison and one grouped cumulative sum per category.
"""

from __future__ import annotations

import math
import numbers
from datetime import datetime, timedelta, timezone as dt_timezone, tzinfo
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import numpy as np
import pandas as pd

from scheduler.core.job import Job
from scheduler.errors import ConfigError

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
_SUBTIME_EPOCH_UNIX = SUBTIME_EPOCH.timestamp()


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
    """``(seconds, is_unix)``: the job's ``unix_submit_time`` if it has one, else its subtime."""
    unix = job.extras.get("unix_submit_time")
    if isinstance(unix, numbers.Real) and not isinstance(unix, bool) and math.isfinite(unix):
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


def temporal_columns(seconds: np.ndarray, is_unix: bool, timezone: str | float | None) -> pd.DataFrame:
    """:func:`temporal_features` for many instants at once (vectorised, with pandas)."""
    base = 0.0 if is_unix else _SUBTIME_EPOCH_UNIX
    stamps = pd.to_datetime(np.asarray(seconds, dtype=float) + base, unit="s", utc=True)
    if is_unix and timezone is not None:
        tz = resolve_timezone(timezone)
        stamps = stamps.tz_convert(tz.key if isinstance(tz, ZoneInfo) else tz)
    index = pd.DatetimeIndex(stamps)
    return pd.DataFrame({
        "hour": index.hour, "day_of_week": index.day_of_week, "day_of_month": index.day,
        "month": index.month, "week_of_year": index.isocalendar().week.to_numpy(dtype=np.int64),
        "quarter": index.quarter,
    }).astype(np.int64)


def user_key(job: Job):
    """The job's user as a hashable, JSON-safe value (int or str); None when unknown."""
    user = job.extras.get("user")
    if user is None or isinstance(user, bool):
        return None
    if isinstance(user, numbers.Integral):
        return int(user)
    if isinstance(user, numbers.Real):
        if not math.isfinite(user):
            return None
        return int(user) if float(user).is_integer() else float(user)
    return str(user)


def requested_procs(job: Job) -> int:
    """The SWF requested processors (field 8) when given and positive, else ``job.res``."""
    value = job.extras.get("requested_procs")
    if isinstance(value, numbers.Real) and not isinstance(value, bool) and value > 0:
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
        static = [walltime, float(job.res), float(requested_procs(job)), *map(float, temporal)]
        user = self.user_code(job)
        traits = {"user_reqtime": walltime, "user_procs": float(job.res),
                  "user_day": float(temporal[1]), "user": 0.0}
        return static, [(user, traits[c]) for c in self.categories]


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


class GrowingArray:
    """A numpy array that grows along its first axis by doubling (amortised O(1) appends)."""

    def __init__(self, shape_tail: tuple[int, ...] = (), dtype=np.float64, fill=0, capacity: int = 1024):
        self.fill = fill
        self.data = np.full((capacity, *shape_tail), fill, dtype=dtype)
        self.n = 0

    def reserve(self, n: int) -> None:
        if n > len(self.data):
            grown = np.full((max(n, 2 * len(self.data)), *self.data.shape[1:]), self.fill, dtype=self.data.dtype)
            grown[: self.n] = self.data[: self.n]
            self.data = grown

    def append(self, value) -> int:
        self.reserve(self.n + 1)
        self.data[self.n] = value
        self.n += 1
        return self.n - 1

    @property
    def view(self) -> np.ndarray:
        return self.data[: self.n]

    @classmethod
    def of(cls, array: np.ndarray, fill=0) -> "GrowingArray":
        grown = cls(array.shape[1:], array.dtype, fill, capacity=max(1024, len(array)))
        grown.data[: len(array)] = array
        grown.n = len(array)
        return grown


class CompletionLog:
    """Completed jobs in completion order, linked per category; classes under one divider.

    Entry ``e`` holds the runtime, the category codes, ``prev[e, c]`` (the previous entry of
    the same category, -1 if none), ``rank[e, c]`` (completions of the category up to and
    including ``e``), ``small[e]`` (runtime < divider) and ``csum[e, c]`` (small completions
    of the category up to and including ``e``). ``last[c][code]`` is the newest entry of a
    category. :meth:`relabel` recomputes ``small`` and ``csum`` for a new divider.
    """

    def __init__(self, n_categories: int) -> None:
        self.k = n_categories
        self.runtime = GrowingArray((), np.float64, np.nan)
        self.row = GrowingArray((), np.int64, -1)          # job table row of the entry
        self.codes = GrowingArray((n_categories,), np.int64, -1)
        self.prev = GrowingArray((n_categories,), np.int64, -1)
        self.rank = GrowingArray((n_categories,), np.int64, 0)
        self.csum = GrowingArray((n_categories,), np.int64, 0)
        self.small = GrowingArray((), np.int8, 0)
        self.last = [GrowingArray((), np.int64, -1) for _ in range(n_categories)]
        self.divider = math.nan

    def __len__(self) -> int:
        return self.runtime.n

    def append(self, row: int, runtime: float, codes: list[int]) -> int:
        """Log a completion (O(1)); returns its entry index."""
        e = self.runtime.append(runtime)
        self.row.append(row)
        small = int(runtime < self.divider)
        self.small.append(small)
        prev = np.empty(self.k, np.int64)
        for c, code in enumerate(codes):
            last = self.last[c]
            last.reserve(code + 1)
            last.n = max(last.n, code + 1)
            prev[c] = last.data[code]
            last.data[code] = e
        self.codes.append(codes)
        self.prev.append(prev)
        has_prev = prev >= 0
        safe = np.where(has_prev, prev, 0)
        self.rank.append(np.where(has_prev, self.rank.data[safe, np.arange(self.k)], 0) + 1)
        self.csum.append(np.where(has_prev, self.csum.data[safe, np.arange(self.k)], 0) + small)
        return e

    def last_entries(self, codes: list[int]) -> list[int]:
        """The newest entry of each category (``codes[c]`` of category ``c``), -1 if none."""
        out = []
        for c, code in enumerate(codes):
            last = self.last[c]
            out.append(int(last.data[code]) if code < last.n else -1)
        return out

    def snapshot(self) -> list[np.ndarray]:
        """A copy of ``last``: what the history looks like now, for the paper's weekly snapshot."""
        return [last.view.copy() for last in self.last]

    def relabel(self, divider: float) -> None:
        """Recompute every entry's class and the per-category small counts for ``divider``."""
        self.divider = float(divider)
        n = len(self)
        if n == 0:
            return
        small = self.runtime.view < self.divider
        self.small.data[:n] = small
        codes = self.codes.view
        for c in range(self.k):
            self.csum.data[:n, c] = pd.Series(small, dtype=np.int64).groupby(codes[:, c], sort=False).cumsum()

    def features(self, anchors: np.ndarray) -> np.ndarray:
        """History features for anchors ``(n, k)`` (log entries, -1 = none) under the current divider.

        Returns ``(n, k * len(HISTORY_STATS))`` float64, category by category.
        """
        anchors = np.asarray(anchors, dtype=np.int64).reshape(-1, self.k)
        out = np.empty((len(anchors), self.k, len(HISTORY_STATS)), dtype=np.float64)
        small = self.small.data
        for c in range(self.k):
            entry = anchors[:, c]
            seen = entry >= 0
            safe = np.where(seen, entry, 0)
            count = np.where(seen, self.rank.data[safe, c], 0)
            for lag in range(N_LAGS):
                out[:, c, lag] = np.where(seen, small[safe], -1)
                entry = np.where(seen, self.prev.data[safe, c], -1)
                seen = entry >= 0
                safe = np.where(seen, entry, 0)
            nsmall = np.where(anchors[:, c] >= 0, self.csum.data[np.maximum(anchors[:, c], 0), c], 0)
            out[:, c, N_LAGS] = np.where(count > 0, nsmall / np.maximum(count, 1), -1.0)
            out[:, c, N_LAGS + 1] = count
        return out.reshape(len(anchors), -1)

    def features_one(self, anchors: list[int]) -> list[float]:
        """:meth:`features` for one job, in plain Python (the per-submission path)."""
        small, prev, rank, csum = self.small.data, self.prev.data, self.rank.data, self.csum.data
        out: list[float] = []
        for c, anchor in enumerate(anchors):
            if anchor < 0:
                out.extend([-1.0] * N_LAGS + [-1.0, 0.0])
                continue
            entry = anchor
            for _ in range(N_LAGS):
                if entry >= 0:
                    out.append(float(small[entry]))
                    entry = int(prev[entry, c])
                else:
                    out.append(-1.0)
            count = int(rank[anchor, c])
            out.append(int(csum[anchor, c]) / count)
            out.append(float(count))
        return out
