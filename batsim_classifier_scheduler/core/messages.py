"""Events into the decision core, and decisions out of it.

Only ``batsim_classifier_scheduler.batsim`` turns these into JSON; the embedded simulator builds them
directly. Times are float seconds of simulated time.

They are never changed once made, but not declared ``frozen``: a frozen dataclass sets each field
through ``object.__setattr__``, which made building the ~85,000 events and decisions of a KTH-SP2
simulation about 30 ms slower.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Union

from procset import ProcSet

from batsim_classifier_scheduler.core.job import Job
from batsim_classifier_scheduler.core.machines import from_procset, to_procset

#: Batsim's final job states: JOB_COMPLETED's ``job_state``, and ``final_state`` in ``_jobs.csv``.
SUCCESS = "COMPLETED_SUCCESSFULLY"
FAILED = "COMPLETED_FAILED"
WALLTIME = "COMPLETED_WALLTIME_REACHED"
KILLED = "COMPLETED_KILLED"
REJECTED = "REJECTED"

# --- events (Batsim -> scheduler) -------------------------------------------------


@dataclass(slots=True)
class SimulationBegins:
    time: float
    nb_resources: int
    config: dict[str, Any] = field(default_factory=dict)
    #: The workload files Batsim simulates, by workload name (as Batsim names them: paths on its machine).
    workloads: dict[str, str] = field(default_factory=dict)


@dataclass(slots=True)
class JobSubmitted:
    time: float
    job: Job


@dataclass(slots=True)
class JobCompleted:
    time: float
    job_id: str
    state: str  # SUCCESS, FAILED, WALLTIME or KILLED


@dataclass(slots=True)
class JobKilled:
    time: float
    job_ids: tuple[str, ...]


@dataclass(slots=True)
class RequestedCall:
    time: float


@dataclass(slots=True)
class NoMoreStaticJobs:
    time: float


@dataclass(slots=True)
class SimulationEnds:
    time: float


@dataclass(slots=True)
class WaitingTimeQuery:
    """QUERY ``estimate_waiting_time``: how long would ``job`` wait if submitted now?"""

    time: float
    job: Job


@dataclass(slots=True)
class Unhandled:
    """A valid Batsim event the scheduler does not act on (it is logged and ignored)."""

    time: float
    type: str
    data: dict[str, Any] = field(default_factory=dict)


Event = Union[SimulationBegins, JobSubmitted, JobCompleted, JobKilled, RequestedCall, NoMoreStaticJobs,
              SimulationEnds, WaitingTimeQuery, Unhandled]

# --- decisions (scheduler -> Batsim) ----------------------------------------------


@dataclass(slots=True)
class Execute:
    """Run ``job_id`` on the machines of bit mask ``machines`` (bit i = machine i)."""

    job_id: str
    machines: int

    @property
    def alloc(self) -> ProcSet:
        return to_procset(self.machines)

    @classmethod
    def on(cls, job_id: str, alloc: ProcSet) -> "Execute":
        return cls(job_id, from_procset(alloc))


@dataclass(slots=True)
class Reject:
    job_id: str
    reason: str


@dataclass(slots=True)
class Kill:
    job_ids: tuple[str, ...]


@dataclass(slots=True)
class CallMeLater:
    time: float


@dataclass(slots=True)
class RegisterJob:
    job: Job


@dataclass(slots=True)
class SetMetadata:
    job_id: str
    metadata: str


@dataclass(slots=True)
class RegistrationFinished:
    pass


@dataclass(slots=True)
class RegisterProfile:
    """REGISTER_PROFILE: a ``delay`` profile for dynamically registered jobs."""

    workload: str
    name: str
    delay: float


@dataclass(slots=True)
class AnswerWaitingTime:
    """ANSWER to a waiting-time query: the estimated wait in seconds (-1 when unknown)."""

    job_id: str
    estimate: float


Decision = Union[Execute, Reject, Kill, CallMeLater, RegisterJob, SetMetadata, RegistrationFinished,
                 RegisterProfile, AnswerWaitingTime]
