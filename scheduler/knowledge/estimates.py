"""Runtime estimates: the requested time p̃, or the actual runtime (clairvoyant)."""

from __future__ import annotations

from typing import Protocol

from scheduler.core.job import Job
from scheduler.errors import ConfigError


class RuntimeKnowledge(Protocol):
    """The one interface through which policies and backfilling learn about runtimes."""

    name: str

    def estimate(self, job: Job) -> float | None:
        """The runtime the scheduler plans with, in seconds; None when it cannot tell."""


class RequestedEstimates:
    """p̃ = the job's requested time (walltime), as users give it."""

    name = "requested"

    def estimate(self, job: Job) -> float | None:
        return job.walltime if job.walltime > 0 else None


class ClairvoyantEstimates:
    """p̃ = the actual runtime, capped at the walltime where the job would be killed."""

    name = "clairvoyant"

    def estimate(self, job: Job) -> float | None:
        if job.runtime is None:
            return None
        if job.walltime > 0:
            return min(job.runtime, job.walltime)
        return job.runtime


ESTIMATES = {"requested": RequestedEstimates, "clairvoyant": ClairvoyantEstimates}


def get_estimates(name: str) -> RuntimeKnowledge:
    try:
        return ESTIMATES[name.lower()]()
    except KeyError:
        raise ConfigError(f"unknown estimates {name!r}; known: {', '.join(ESTIMATES)}") from None
