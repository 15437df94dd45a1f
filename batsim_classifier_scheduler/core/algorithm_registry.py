"""The scheduling algorithms ``--algorithm`` (batsched's ``-v``) names, registered with the one registry of
names (``batsim_classifier_scheduler.registry``), and what an algorithm plug-in must be: an :class:`Algorithm` subclass, made
with its ``Options`` instance when it declares one."""

from __future__ import annotations

import inspect
from functools import partial
from typing import Any, Callable

from batsim_classifier_scheduler.core.algorithm import Algorithm
from batsim_classifier_scheduler.core.conservative import ConservativeBackfilling
from batsim_classifier_scheduler.core.easy import EasyBackfilling
from batsim_classifier_scheduler.core.easy_fast import EasyBackfillingFast
from batsim_classifier_scheduler.core.filler import Filler
from batsim_classifier_scheduler.core.strict import StrictOrder
from batsim_classifier_scheduler.errors import ConfigError
from batsim_classifier_scheduler.registry import Made, Rules, define, describe, register


def _is_algorithm(target: Any) -> bool:
    return inspect.isclass(target) and issubclass(target, Algorithm)


def _check(spec: str, target: Any) -> None:
    if not _is_algorithm(target):
        raise ConfigError(f"algorithm {spec!r}: not an Algorithm subclass (batsim_classifier_scheduler.core.algorithm.Algorithm); "
                          f"got {describe(target)}")
    if inspect.isabstract(target):
        missing = ", ".join(sorted(target.__abstractmethods__))
        raise ConfigError(f"algorithm {spec!r}: {target.__name__} does not implement {missing}")


def _make(made: Made) -> Callable[..., Algorithm]:
    """What makes the algorithm: its class, given its ``Options`` instance when it declares one."""
    return made.target if made.instance is None else partial(made.target, options=made.instance)


define("algorithm", Rules(check=_check, make=_make, claims=_is_algorithm))
# batsched's names: easy_bf for easy, fcfs_fast for fcfs (its fcfs_fast takes the same decisions as its fcfs)
register("algorithm", EasyBackfilling.name, EasyBackfilling, aliases=("easy_bf",))
register("algorithm", EasyBackfillingFast.name, EasyBackfillingFast)
register("algorithm", ConservativeBackfilling.name, ConservativeBackfilling)
register("algorithm", StrictOrder.name, StrictOrder, aliases=("fcfs_fast",))
register("algorithm", Filler.name, Filler)
