"""How the console tables write values: times with their unit, counts with thousands separators, and one mark
for "not applicable".

:data:`NOT_APPLICABLE` ("–") stands for a value that does not exist: an option that does not act in a
config, a score without a classifier, a ratio to nothing, a metric without jobs (NaN, or None once read
from JSON). A zero is always written as a zero.
"""

from __future__ import annotations

import math
import statistics

#: The one mark of a value that does not apply (never a zero).
NOT_APPLICABLE = "–"

#: The units of a duration, largest first: (name, seconds).
TIME_UNITS = (("d", 86400.0), ("h", 3600.0), ("min", 60.0), ("s", 1.0))


def missing(value: float | None) -> bool:
    """True for None and NaN: a value that does not apply."""
    return value is None or (isinstance(value, float) and math.isnan(value))


def time_unit(seconds: float) -> tuple[str, float]:
    """The largest unit in which ``seconds`` is at least one (seconds below a minute)."""
    return next((name, size) for name, size in TIME_UNITS if abs(seconds) >= size or size == 1.0)


def duration(seconds: float | None, unit: tuple[str, float] | None = None) -> str:
    """``seconds`` in s, min, h or d (the largest that keeps it at least 1, or ``unit``), three significant
    digits: 3059789 -> "35.4 d", 20158 -> "5.60 h", 45 -> "45.0 s"; 0 -> "0 s"."""
    if missing(seconds):
        return NOT_APPLICABLE
    name, size = unit or time_unit(seconds)
    if seconds == 0:
        return f"0 {name}"
    return f"{_significant(seconds / size, abs(seconds) / size)} {name}"


def durations(values: list[float | None]) -> list[str]:
    """Times in one unit, so that a row reads at a glance: the unit of their median (zeros aside), with the
    decimals that give the largest three significant digits (3, 17.4 and 71.4 s stay in seconds)."""
    present = sorted(abs(value) for value in values if not missing(value))
    if not present:
        return [NOT_APPLICABLE] * len(values)
    nonzero = [value for value in present if value > 0] or present
    unit = time_unit(statistics.median(nonzero))
    largest = present[-1] / unit[1]
    return [NOT_APPLICABLE if missing(value) else "0 " + unit[0] if value == 0
            else f"{_significant(value / unit[1], largest)} {unit[0]}" for value in values]


def _significant(value: float, scale: float) -> str:
    """``value`` with the decimals that give three significant digits to a number of size ``scale``."""
    return f"{value:.{2 if scale < 10 else 1 if scale < 100 else 0}f}"


def count(value: int | float | None) -> str:
    """A count with thousands separators: 28467 -> "28,467"."""
    return NOT_APPLICABLE if missing(value) else f"{value:,.0f}"


def number(value: float | None, spec: str) -> str:
    """``value`` formatted with ``spec`` (e.g. ".3f", ".2%"), or the not-applicable mark."""
    return NOT_APPLICABLE if missing(value) else format(value, spec)


def share(part: float | None, whole: float | None, spec: str = ".2%") -> str:
    """``part / whole`` formatted with ``spec``; not applicable when ``whole`` is not positive."""
    return NOT_APPLICABLE if missing(part) or missing(whole) or not whole > 0 else format(part / whole, spec)


def change(value: float | None, reference: float | None) -> str:
    """The relative change of ``value`` against ``reference``, signed: "+12.3%", "-4.0%"."""
    return share(None if missing(value) or missing(reference) else value - reference, reference, "+.1%")


def reduction(value: float | None, reference: float | None) -> str:
    """How much lower ``value`` is than ``reference``, as a share of it: "58.5%"."""
    return NOT_APPLICABLE if missing(value) or missing(reference) or not reference > 0 else f"{1 - value / reference:.1%}"


def ratio(value: float | None, reference: float | None) -> str:
    """``value`` as a multiple of ``reference``: "1.52×"."""
    text = share(value, reference, ".2f")
    return text if text == NOT_APPLICABLE else f"{text}×"
