"""Plain values: what counts as a number, and numpy values made JSON-ready.

numpy is imported only when a value may be one of its scalars (``serve`` for EASY never imports it).
"""

from __future__ import annotations

import math
import numbers
from typing import Any

#: The largest time a workload may hold, in seconds (2**33 s, about 272 years): below it a float keeps the
#: microseconds that Batsim's outputs print (2**33 s x 2**20 steps a second = 2**53, a float's exact integers).
MAX_SECONDS = 2.0 ** 33
#: The largest whole number a workload's field may hold (job numbers, user ids...): what a float holds exactly.
MAX_INTEGER = 2 ** 53
#: The largest machine: 2**24 processors (16.7 million; the largest machines have about 10 million cores).
MAX_MACHINES = 2 ** 24
#: The bounded slowdown's threshold tau by default, in seconds (``batsim_classifier_scheduler.metrics``); 10 s compares with
#: Gaussier et al.
DEFAULT_TAU = 60.0


def is_number(value: Any) -> bool:
    """A real number (Python or numpy), not a bool."""
    return isinstance(value, (int, float, numbers.Real)) and not isinstance(value, bool)


def is_missing(value: Any) -> bool:
    """A JSON null or a NaN: no value."""
    return value is None or (isinstance(value, float) and math.isnan(value))


def plain(value: Any) -> Any:
    """``json.dumps``'s ``default``: a numpy scalar as the Python number it holds."""
    import numpy as np

    if isinstance(value, np.generic):
        return value.item()
    raise TypeError(f"{type(value).__name__} is not JSON serialisable")


def json_ready(value: Any) -> Any:
    """``value`` with numpy scalars made plain and NaN made None (JSON has no NaN), recursively."""
    import numpy as np

    if isinstance(value, dict):
        return {key: json_ready(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_ready(item) for item in value]
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and math.isnan(value):
        return None
    return value
