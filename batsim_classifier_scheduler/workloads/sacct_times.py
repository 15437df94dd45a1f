"""sacct's times and durations as seconds, a whole column at a time.

Times are as ``SLURM_TIME_FORMAT`` leaves them: ``2024-03-01T10:00:00`` (the default: the cluster's local
time, without its offset; read as it is written) or ``2024-03-01T10:00:00+0100`` (``%FT%T%z``: an offset, or
``Z``; a file whose offsets differ, as summer and winter time do, is normalised to UTC). ``Unknown``,
``None`` and an empty field are no time. Durations are ``[D-]HH:MM:SS`` or ``MM:SS`` (``Elapsed``,
``Timelimit``), or whole seconds (``ElapsedRaw``) or minutes (``TimelimitRaw``); a limit ``UNLIMITED`` or
``Partition_Limit`` is none. A value that is none of these raises :class:`BadValue` with its row.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

#: Words that mean "no time" in a time field.
NO_TIME = ("Unknown", "None", "")
#: Words that mean "no limit" in a duration field (``TimelimitRaw`` prints Slurm's INFINITE as a number).
NO_LIMIT = ("UNLIMITED", "Partition_Limit", "INFINITE", "NOT_SET", "INVALID", "", "4294967295", "4294967294")
_DURATION = r"^(?:(\d+)-)?(?:(\d+):)?(\d+):(\d+)$"


class BadValue(ValueError):
    """A field's value that cannot be read: ``row`` (0-based, of the column) and what was expected."""

    def __init__(self, row: int, value: str, expected: str) -> None:
        super().__init__(f"{value!r} is not {expected}")
        self.row = row


def times(values: pd.Series) -> tuple[np.ndarray, set[str] | None]:
    """Seconds since 1970 (float, NaN for no time) and the UTC offsets written (None: times without one).

    Times without an offset are read as they are written, as if they were UTC: their differences are
    right but across a change of summer time.
    """
    values = values.reset_index(drop=True)
    known = ~values.isin(NO_TIME).to_numpy()
    text = values[known]
    seconds = np.full(len(values), np.nan)
    if not len(text):
        return seconds, None
    parsed = pd.to_datetime(text, format="%Y-%m-%dT%H:%M:%S", errors="coerce")
    offsets = None
    if parsed.isna().any():
        with_offset = pd.to_datetime(text, format="%Y-%m-%dT%H:%M:%S%z", errors="coerce", utc=True)
        neither = (parsed.isna() & with_offset.isna()).to_numpy()
        if not neither.any() and parsed.notna().any():  # some with an offset, some without
            row = int(np.flatnonzero(parsed.notna().to_numpy())[0])
            raise BadValue(int(text.index[row]), text.iloc[row], "a time with a UTC offset, as the file's others")
        if with_offset.notna().any() and not parsed.notna().any():
            parsed = with_offset.dt.tz_localize(None)
            offsets = set(text.str.slice(19).unique().tolist())
    bad = parsed.isna().to_numpy()
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        raise BadValue(int(text.index[row]), text.iloc[row],
                       "a time (YYYY-MM-DDTHH:MM:SS, with or without a UTC offset; Unknown; None)")
    seconds[known] = parsed.to_numpy().astype("datetime64[s]").astype(np.int64)
    return seconds, offsets


def durations(values: pd.Series, *, limit: bool = False) -> np.ndarray:
    """Seconds of ``[D-]HH:MM:SS`` or ``MM:SS`` durations; NaN for no limit (``limit``) or no value."""
    values = values.reset_index(drop=True)
    missing = values.isin(NO_LIMIT if limit else ("",)).to_numpy()
    seconds = _clock_seconds(values)
    slow = np.isnan(seconds) & ~missing  # not [D-]HH:MM:SS: read by the regular expression
    if slow.any():
        rows = np.flatnonzero(slow)
        parts = values.iloc[rows].str.extract(_DURATION).astype(float)
        bad = parts[2].isna().to_numpy()
        if bad.any():
            row = int(rows[np.flatnonzero(bad)[0]])
            raise BadValue(row, values.iloc[row], "a duration ([D-]HH:MM:SS or MM:SS"
                           + (", UNLIMITED or Partition_Limit)" if limit else ")"))
        days, hours, minutes, secs = (parts[i].fillna(0).to_numpy() for i in range(4))
        seconds[rows] = days * 86400 + hours * 3600 + minutes * 60 + secs
    return np.where(missing, np.nan, seconds)


def _clock_seconds(values: pd.Series) -> np.ndarray:
    """``HH:MM:SS`` and ``D-HH:MM:SS`` read from the characters' codes, a whole column at once; NaN where
    a value is written otherwise."""
    try:
        text = values.to_numpy(dtype="S24")  # longer values are not clocks: length 24 is not read here
    except UnicodeEncodeError:
        return np.full(len(values), np.nan)
    length = np.strings.str_len(text)
    chars = np.frombuffer(text.tobytes(), dtype=np.uint8).reshape(len(text), 24).astype(np.int64)
    rows = np.arange(len(text))[:, None]
    tail = chars[rows, np.maximum(length, 8)[:, None] - 8 + np.arange(8)] - ord("0")
    digits = np.delete(tail, [2, 5], axis=1)
    fits = ((length == 8) | (length >= 10)) & (tail[:, 2] == ord(":") - ord("0")) & (tail[:, 5] == ord(":") - ord("0"))
    fits &= ((digits >= 0) & (digits <= 9)).all(axis=1)
    days = np.zeros(len(text), dtype=np.int64)
    dash = chars[rows[:, 0], np.maximum(length - 9, 0)] == ord("-")
    fits &= (length == 8) | dash
    for position in range(7):  # the days, up to 7 digits before the '-'
        inside = position < length - 9
        digit = chars[:, position] - ord("0")
        fits &= ~inside | ((digit >= 0) & (digit <= 9))
        days = np.where(inside, days * 10 + digit, days)
    fits &= length <= 16  # at most 7 digits of days
    seconds = days * 86400 + (tail[:, 0] * 10 + tail[:, 1]) * 3600 + (tail[:, 3] * 10 + tail[:, 4]) * 60 \
        + tail[:, 6] * 10 + tail[:, 7]
    return np.where(fits, seconds.astype(float), np.nan)


def counts(values: pd.Series, *, limit: bool = False, what: str = "a whole number") -> np.ndarray:
    """Whole numbers (float; NaN for an empty field, or no limit with ``limit``)."""
    values = values.reset_index(drop=True)
    missing = values.isin(NO_LIMIT if limit else ("",)).to_numpy()
    written = values.where(~missing, "0")
    try:  # numpy reads the text in C; pandas names the first value it cannot read
        numbers = written.to_numpy(dtype=str).astype(float)
    except ValueError:
        numbers = pd.to_numeric(written, errors="coerce").to_numpy(dtype=float)
    bad = ~np.isfinite(numbers) | (numbers < 0) | (numbers != np.round(numbers))
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        raise BadValue(row, values.iloc[row], what + (" (or UNLIMITED)" if limit else ""))
    return np.where(missing, np.nan, numbers)
