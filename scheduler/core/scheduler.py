"""The decision core: Batsim-level events in, decisions out. Pure: no I/O, no clock."""

from __future__ import annotations

import logging
from collections import Counter
from typing import Iterable

from scheduler.config import SchedulerConfig
from scheduler.core.easy import EasyBackfilling
from scheduler.core.events import (
    AnswerWaitingTime,
    Decision,
    Event,
    JobCompleted,
    JobKilled,
    JobSubmitted,
    NoMoreStaticJobs,
    Reject,
    RequestedCall,
    SimulationBegins,
    SimulationEnds,
    Unhandled,
    WaitingTimeQuery,
)
from scheduler.core.job import Job
from scheduler.core.policies import get_policy
from scheduler.core.queue import JobQueue
from scheduler.errors import SimulationError
from scheduler.knowledge import get_estimates

#: Lifecycle states of a job in :attr:`DecisionCore.states`.
QUEUED, RUNNING, COMPLETED, REJECTED, KILLED = "queued", "running", "completed", "rejected", "killed"

log = logging.getLogger(__name__)


class DecisionCore:
    """One scheduler instance for one simulation.

    Front ends call :meth:`decide` once per Batsim message with that message's events,
    and send back the decisions it returns, in order.
    """

    def __init__(self, config: SchedulerConfig | None = None) -> None:
        self.config = config or SchedulerConfig()
        self.knowledge = get_estimates(self.config.estimates)
        self.easy: EasyBackfilling | None = None
        self.jobs: dict[str, Job] = {}
        self.states: dict[str, str] = {}
        self.reject_reasons: dict[str, str] = {}
        self.nb_machines = 0
        self.no_more_static_jobs = False
        self.ended = False

    # --- the one entry point -------------------------------------------------------

    def decide(self, now: float, events: Iterable[Event]) -> list[Decision]:
        decisions: list[Decision] = []
        arrived: list[Job] = []
        released = False
        for event in events:
            if isinstance(event, JobSubmitted):
                job = self._submit(event.job, decisions)
                if job is not None:
                    arrived.append(job)
            elif isinstance(event, JobCompleted):
                released |= self._complete(event)
            elif isinstance(event, JobKilled):
                pass  # machines were released by the JOB_COMPLETED(COMPLETED_KILLED) before it
            elif isinstance(event, SimulationBegins):
                self._begin(event)
            elif isinstance(event, NoMoreStaticJobs):
                self.no_more_static_jobs = True
            elif isinstance(event, SimulationEnds):
                self.ended = True
            elif isinstance(event, RequestedCall):
                pass
            elif isinstance(event, WaitingTimeQuery):
                decisions.append(AnswerWaitingTime(event.job.id, self.estimate_waiting_time(event.job, now)))
            elif isinstance(event, Unhandled):
                log.info("ignoring %s event at %g: %s", event.type, event.time, event.data)
            else:
                raise SimulationError(f"unsupported event {type(event).__name__}")
        if self.easy is not None and not self.ended:
            for execute in self.easy.schedule(now, arrived, released):
                self.states[execute.job_id] = RUNNING
                decisions.append(execute)
        return decisions

    # --- event handlers ------------------------------------------------------------

    def _begin(self, event: SimulationBegins) -> None:
        if self.easy is not None:
            raise SimulationError("SIMULATION_BEGINS received twice")
        if event.nb_resources <= 0:
            raise SimulationError(f"SIMULATION_BEGINS: nb_resources must be positive, got {event.nb_resources}")
        self.nb_machines = event.nb_resources
        queue = JobQueue(get_policy(self.config.policy), self.config.starvation_threshold)
        backfill = get_policy(self.config.backfill_order) if self.config.backfill_order else None
        self.easy = EasyBackfilling(self.nb_machines, queue, self._estimate, backfill)

    def _submit(self, job: Job, decisions: list[Decision]) -> Job | None:
        if self.easy is None:
            raise SimulationError(f"job {job.id!r} submitted before SIMULATION_BEGINS")
        if job.id in self.jobs:
            raise SimulationError(f"job {job.id!r} submitted twice")
        self.jobs[job.id] = job
        reason = self._rejection_reason(job)
        if reason:
            self.states[job.id] = REJECTED
            self.reject_reasons[job.id] = reason
            decisions.append(Reject(job.id, reason))
            return None
        self.states[job.id] = QUEUED
        self.easy.queue.push(job, self._estimate(job), now=job.subtime)
        return job

    def _rejection_reason(self, job: Job) -> str | None:
        if job.res <= 0:
            return f"requests {job.res} processors"
        if job.res > self.nb_machines:
            return f"requests {job.res} processors, the platform has {self.nb_machines}"
        estimate = self.knowledge.estimate(job)
        if estimate is None or estimate <= 0:
            return f"no runtime estimate ({self.knowledge.name} estimates need a positive walltime)"
        return None

    def _complete(self, event: JobCompleted) -> bool:
        state = self.states.get(event.job_id)
        if state is None:
            raise SimulationError(f"JOB_COMPLETED for unknown job {event.job_id!r}")
        if state != RUNNING:
            raise SimulationError(f"JOB_COMPLETED for job {event.job_id!r}, which is {state}, not running")
        self.easy.profile.finish(event.job_id)
        self.states[event.job_id] = KILLED if event.state == "COMPLETED_KILLED" else COMPLETED
        return True

    def _estimate(self, job: Job) -> float:
        estimate = self.knowledge.estimate(job)
        if estimate is None:
            raise SimulationError(f"job {job.id!r}: no runtime estimate")
        return estimate

    def estimate_waiting_time(self, job: Job, now: float) -> float:
        """How long ``job`` would wait if submitted now: EASY's earliest start for it given the
        running jobs and the current reservation (other queued jobs are not counted, so this is
        a lower bound). -1 when the job can never run or has no estimate."""
        if self.easy is None or self._rejection_reason(job):
            return -1.0
        fit = self.easy.profile.first_fit(job.res, self._estimate(job), now)
        return fit.start - now

    # --- accounting ----------------------------------------------------------------

    def accounting(self) -> Counter:
        """How many jobs are in each lifecycle state."""
        return Counter(self.states.values())
