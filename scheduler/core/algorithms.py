"""The registry of scheduling algorithms: ``--algorithm`` (batsched's ``-v``) picks one by name."""

from __future__ import annotations

from scheduler.core.algorithm import Algorithm
from scheduler.core.conservative import ConservativeBackfilling
from scheduler.core.easy import EasyBackfilling
from scheduler.core.easy_fast import EasyBackfillingFast
from scheduler.core.filler import Filler
from scheduler.core.strict import StrictOrder
from scheduler.errors import ConfigError

ALGORITHMS: dict[str, type[Algorithm]] = {
    cls.name: cls for cls in (EasyBackfilling, EasyBackfillingFast, ConservativeBackfilling, StrictOrder, Filler)}

#: batsched's names for ours (batsched's ``fcfs_fast`` takes the same decisions as its ``fcfs``).
BATSCHED_ALGORITHMS = {"easy_bf": "easy", "fcfs_fast": "fcfs"}


def algorithm_name(name: str) -> str:
    """The canonical name of algorithm ``name`` (case-insensitive; batsched's names accepted)."""
    key = name.lower()
    key = BATSCHED_ALGORITHMS.get(key, key)
    if key not in ALGORITHMS:
        known = ", ".join([*ALGORITHMS, *BATSCHED_ALGORITHMS])
        raise ConfigError(f"unknown algorithm {name!r}; known: {known}")
    return key


def get_algorithm(name: str) -> type[Algorithm]:
    """The algorithm class called ``name``."""
    return ALGORITHMS[algorithm_name(name)]
