"""Queue orderings. A policy maps a job to a sort key; smaller keys run first.

Every key ends with the job's submission time and id, so ties are broken by submit
time, then by id (compared as strings, as batsched does). ``estimate`` is p̃, the
runtime the scheduler believes (see ``scheduler.knowledge``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from scheduler.core.job import Job
from scheduler.errors import ConfigError

KeyFunction = Callable[[Job, float, float], tuple]


@dataclass(frozen=True)
class Policy:
    """A named ordering. ``dynamic`` keys change with time and are recomputed at each decision."""

    name: str
    description: str
    key: KeyFunction
    dynamic: bool = False


def _fcfs(job: Job, estimate: float, now: float) -> tuple:
    return (job.subtime, job.id)


def _spf(job: Job, estimate: float, now: float) -> tuple:
    return (estimate, job.subtime, job.id)


def _saf(job: Job, estimate: float, now: float) -> tuple:
    return (estimate * job.res, job.subtime, job.id)


def _sqf(job: Job, estimate: float, now: float) -> tuple:
    return (job.res, job.subtime, job.id)


def _lpf(job: Job, estimate: float, now: float) -> tuple:
    return (-estimate, job.subtime, job.id)


def _wfp(job: Job, estimate: float, now: float) -> tuple:
    wait = max(now - job.subtime, 0.0)
    return (-((wait / estimate) ** 3) * job.res, job.subtime, job.id)


POLICIES: dict[str, Policy] = {
    p.name: p
    for p in (
        Policy("fcfs", "first come, first served: submission time", _fcfs),
        Policy("spf", "smallest (estimated) processing time first", _spf),
        Policy("saf", "smallest area first: estimate x processors", _saf),
        Policy("sqf", "smallest number of processors first", _sqf),
        Policy("lpf", "largest (estimated) processing time first", _lpf),
        Policy("wfp", "WFP3: (wait / estimate)^3 x processors, largest first", _wfp, dynamic=True),
    )
}

#: batsched's ``-o/--queue_order`` names that mean the same thing as ours.
BATSCHED_ALIASES = {"fcfs": "fcfs", "asc_walltime": "spf", "asc_size": "sqf", "desc_walltime": "lpf"}


def get_policy(name: str) -> Policy:
    """The policy called ``name`` (case-insensitive; batsched's order names accepted)."""
    key = name.lower()
    key = BATSCHED_ALIASES.get(key, key)
    try:
        return POLICIES[key]
    except KeyError:
        known = ", ".join(sorted(POLICIES) + sorted(set(BATSCHED_ALIASES) - set(POLICIES)))
        raise ConfigError(f"unknown policy {name!r}; known: {known}") from None
