"""Batsim 4.2.1's side of the simulation, for ``delay`` profiles on a homogeneous platform.

The engine owns the simulated clock and the machines. It delivers events to a decision
process in Batsim messages (``decide(now, events) -> decisions``) and applies the
decisions with Batsim's rules:

- jobs are submitted at their ``subtime``; submissions at the same time come together;
- a job runs for its profile's delay, unless it reaches its walltime first: a job whose
  runtime is greater than or equal to its walltime ends at the walltime as
  ``COMPLETED_WALLTIME_REACHED`` (Batsim's test is strict);
- KILL_JOB is answered, in the next message, by JOB_COMPLETED(COMPLETED_KILLED) then
  JOB_KILLED with the job's progress;
- CALL_ME_LATER produces a REQUESTED_CALL at the requested time;
- REGISTER_JOB submits a new job at once (dynamic jobs must be enabled);
- the simulation ends (SIMULATION_ENDS) once every static job was submitted, every job
  is finished, no kill or call is pending and, with dynamic jobs, registration is over.

Every decision is validated; an impossible one raises :class:`SimulationError` naming
the job.
"""

from __future__ import annotations

import heapq
import math
from dataclasses import dataclass, field
from typing import Callable, Sequence

import pandas as pd

from scheduler.core.events import (
    CallMeLater,
    Decision,
    Event,
    Execute,
    JobCompleted,
    JobKilled,
    JobSubmitted,
    Kill,
    NoMoreStaticJobs,
    RegisterJob,
    RegistrationFinished,
    Reject,
    RequestedCall,
    SetMetadata,
    SimulationBegins,
    SimulationEnds,
)
from scheduler.core.job import Job
from scheduler.core.machines import from_procset, full_mask
from scheduler.errors import SimulationError
from scheduler.workloads.model import Workload

DecideFunction = Callable[[float, Sequence[Event]], Sequence[Decision]]

# Kinds of timed events, in the order Batsim puts same-time events in one message.
_COMPLETION, _SUBMISSION, _CALL = 0, 1, 2

SUCCESS, WALLTIME, KILLED, REJECTED = (
    "COMPLETED_SUCCESSFULLY",
    "COMPLETED_WALLTIME_REACHED",
    "COMPLETED_KILLED",
    "REJECTED",
)


@dataclass(slots=True)
class _SimJob:
    """What the engine knows of one job."""

    job: Job
    runtime: float
    start: float = math.nan
    finish: float = math.nan
    state: str = ""  # "", "running", or a final state
    mask: int = 0
    alloc: str = ""
    metadata: str = ""


@dataclass
class SimulationOptions:
    """Batsim's flags that change the simulation (same names, without dashes)."""

    enable_dynamic_jobs: bool = False
    acknowledge_dynamic_jobs: bool = False
    enable_profile_reuse: bool = False
    sched_config: str = ""


@dataclass
class SimulationResult:
    """The outcome of one run: one row per job attempt, in Batsim's ``_jobs.csv`` schema."""

    jobs: pd.DataFrame
    nb_machines: int
    makespan: float
    nb_messages: int
    unfinished: list[str] = field(default_factory=list)


class BatsimEngine:
    """Drives a decision process through a whole workload."""

    def __init__(self, workload: Workload, nb_machines: int | None = None,
                 options: SimulationOptions | None = None) -> None:
        self.workload = workload
        self.nb_machines = int(nb_machines or workload.nb_res)
        self.options = options or SimulationOptions()
        self.free = full_mask(self.nb_machines)
        self.jobs: dict[str, _SimJob] = {}
        self.finished_order: list[str] = []
        self._timers: list[tuple] = []  # (time, kind, seq, payload)
        self._seq = 0
        self._pending_kills: list[str] = []
        self._pending_submissions: list[str] = []
        self._nb_running = 0
        self._static_left = 0
        self._calls_pending = 0
        self._registration_finished = False
        self._load_static_jobs()

    # --- set-up --------------------------------------------------------------------

    def _load_static_jobs(self) -> None:
        table = self.workload.jobs
        name = self.workload.name
        extra = self.workload.extra_columns
        ids = table["id"].astype(str).tolist()
        columns = [table[c].tolist() for c in ("subtime", "res", "walltime", "runtime", "profile")]
        extras = [table[c].tolist() for c in extra]
        for i, (job_id, subtime, res, walltime, runtime, profile) in enumerate(zip(ids, *columns)):
            full_id = f"{name}!{job_id}"
            if full_id in self.jobs:
                raise SimulationError(f"{self.workload.source or 'workload'}: duplicate job id {job_id!r}")
            fields = {c: values[i] for c, values in zip(extra, extras) if not _is_missing(values[i])}
            job = Job(full_id, float(subtime), int(res), float(walltime), str(profile), float(runtime), fields)
            self.jobs[full_id] = _SimJob(job, float(runtime))
            self._push(float(subtime), _SUBMISSION, full_id)
        self._static_left = len(ids)

    def _push(self, time: float, kind: int, payload: object) -> None:
        self._seq += 1
        heapq.heappush(self._timers, (time, kind, self._seq, payload))

    # --- main loop -----------------------------------------------------------------

    def run(self, decide: DecideFunction, progress: Callable[[int], None] | None = None) -> SimulationResult:
        """Simulate until SIMULATION_ENDS. ``progress(n)`` is told of each finished job."""
        now = 0.0
        config = {
            "dynamic-jobs-enabled": self.options.enable_dynamic_jobs,
            "dynamic-jobs-acknowledged": self.options.acknowledge_dynamic_jobs,
            "profile-reuse-enabled": self.options.enable_profile_reuse,
            "profiles-forwarded-on-submission": False,
            "sched-config": self.options.sched_config,
            "forward-unknown-events": False,
        }
        messages = 1
        self._apply(now, decide(now, [SimulationBegins(now, self.nb_machines, config)]))
        while True:
            events, now = self._next_message(now)
            if not events:
                break
            finished_before = len(self.finished_order)
            self._apply(now, decide(now, events))
            messages += 1
            if progress is not None and len(self.finished_order) > finished_before:
                progress(len(self.finished_order) - finished_before)
        decide(now, [SimulationEnds(now)])
        messages += 1
        unfinished = [job_id for job_id, sim in self.jobs.items() if sim.state in ("", "running")]
        return SimulationResult(self._jobs_table(), self.nb_machines, now, messages, unfinished)

    def _next_message(self, now: float) -> tuple[list[Event], float]:
        """The events of the next Batsim message, and its time; no events at the end."""
        events: list[Event] = []
        if self._pending_kills:
            killed = self._pending_kills
            self._pending_kills = []
            progress = {}
            for job_id in killed:
                sim = self.jobs[job_id]
                if sim.state == "running":
                    self._finish(job_id, now, KILLED)
                    events.append(JobCompleted(now, job_id, KILLED))
                    progress[job_id] = sim
            events.append(JobKilled(now, tuple(killed)))
            return events, now
        if self._pending_submissions:
            for job_id in self._pending_submissions:
                events.append(JobSubmitted(now, self.jobs[job_id].job))
            self._pending_submissions = []
            return events, now
        if not self._timers:
            if self.options.enable_dynamic_jobs and not self._registration_finished:
                raise SimulationError(
                    "dynamic jobs are enabled but the scheduler never sent NOTIFY registration_finished: "
                    "Batsim would wait forever"
                )
            return events, now
        time = self._timers[0][0]
        completions, submissions, calls = [], [], 0
        while self._timers and self._timers[0][0] == time:
            _, kind, _, payload = heapq.heappop(self._timers)
            if kind == _COMPLETION:
                job_id, state = payload
                if self.jobs[job_id].state == "running":  # not killed meanwhile
                    completions.append(JobCompleted(time, job_id, state))
                    self._finish(job_id, time, state)
            elif kind == _SUBMISSION:
                submissions.append(JobSubmitted(time, self.jobs[payload].job))
                self._static_left -= 1
            else:
                calls += 1
        if calls:
            self._calls_pending -= calls
        events = [*completions, *submissions, *(RequestedCall(time) for _ in range(calls))]
        if submissions and self._static_left == 0:
            events.append(NoMoreStaticJobs(time))
        if not events:  # only stale timers (completions of killed jobs): look further
            return self._next_message(time)
        return events, time

    # --- decisions -----------------------------------------------------------------

    def _apply(self, now: float, decisions: Sequence[Decision]) -> None:
        for decision in decisions:
            if isinstance(decision, Execute):
                self._execute(now, decision)
            elif isinstance(decision, Reject):
                self._reject(now, decision.job_id)
            elif isinstance(decision, Kill):
                self._kill(decision.job_ids)
            elif isinstance(decision, CallMeLater):
                self._calls_pending += 1
                self._push(max(decision.time, now), _CALL, None)
            elif isinstance(decision, RegisterJob):
                self._register(now, decision.job)
            elif isinstance(decision, SetMetadata):
                self._known(decision.job_id, "SET_JOB_METADATA").metadata = decision.metadata
            elif isinstance(decision, RegistrationFinished):
                self._registration_finished = True
            else:
                raise SimulationError(f"unsupported decision {type(decision).__name__}")

    def _known(self, job_id: str, what: str) -> _SimJob:
        try:
            return self.jobs[job_id]
        except KeyError:
            raise SimulationError(f"{what}: unknown job {job_id!r}") from None

    def _execute(self, now: float, decision: Execute) -> None:
        sim = self._known(decision.job_id, "EXECUTE_JOB")
        job = sim.job
        if sim.state:
            raise SimulationError(f"EXECUTE_JOB: job {job.id!r} is already {sim.state.lower()}")
        if now < job.subtime:
            raise SimulationError(f"EXECUTE_JOB: job {job.id!r} is not submitted yet")
        alloc = decision.alloc
        if len(alloc) != job.res:
            raise SimulationError(
                f"EXECUTE_JOB: job {job.id!r} requests {job.res} machines, allocation '{alloc}' has {len(alloc)}"
            )
        mask = from_procset(alloc)
        if mask >> self.nb_machines:
            raise SimulationError(f"EXECUTE_JOB: job {job.id!r}: allocation '{alloc}' exceeds the "
                                  f"{self.nb_machines} machines")
        if mask & ~self.free:
            raise SimulationError(f"EXECUTE_JOB: job {job.id!r}: machines of '{alloc}' are busy")
        self.free &= ~mask
        sim.mask, sim.alloc, sim.start, sim.state = mask, str(alloc), now, "running"
        self._nb_running += 1
        walltime = job.walltime
        if walltime > 0 and sim.runtime >= walltime:
            self._push(now + walltime, _COMPLETION, (job.id, WALLTIME))
        else:
            self._push(now + sim.runtime, _COMPLETION, (job.id, SUCCESS))

    def _reject(self, now: float, job_id: str) -> None:
        sim = self._known(job_id, "REJECT_JOB")
        if sim.state:
            raise SimulationError(f"REJECT_JOB: job {job_id!r} is {sim.state.lower()}, not waiting")
        sim.state, sim.start, sim.finish = REJECTED, math.nan, now
        self.finished_order.append(job_id)

    def _kill(self, job_ids: Sequence[str]) -> None:
        for job_id in job_ids:
            sim = self._known(job_id, "KILL_JOB")
            if not sim.state:
                raise SimulationError(f"KILL_JOB: job {job_id!r} has not started")
        self._pending_kills.extend(job_ids)

    def _register(self, now: float, job: Job) -> None:
        if not self.options.enable_dynamic_jobs:
            raise SimulationError(f"REGISTER_JOB {job.id!r}: dynamic jobs are disabled (--enable-dynamic-jobs)")
        if self._registration_finished:
            raise SimulationError(f"REGISTER_JOB {job.id!r}: registration is already finished")
        if job.id in self.jobs:
            raise SimulationError(f"REGISTER_JOB: job {job.id!r} already exists")
        if job.runtime is None:
            raise SimulationError(f"REGISTER_JOB {job.id!r}: profile {job.profile!r} has no known delay")
        registered = Job(job.id, now, job.res, job.walltime, job.profile, job.runtime, dict(job.extras))
        self.jobs[job.id] = _SimJob(registered, float(job.runtime))
        if self.options.acknowledge_dynamic_jobs:
            self._pending_submissions.append(job.id)

    def _finish(self, job_id: str, time: float, state: str) -> None:
        sim = self.jobs[job_id]
        sim.state, sim.finish = state, time
        self.free |= sim.mask
        self._nb_running -= 1
        self.finished_order.append(job_id)

    # --- output --------------------------------------------------------------------

    def _jobs_table(self) -> pd.DataFrame:
        rows = []
        for job_id in self.finished_order:
            sim = self.jobs[job_id]
            job = sim.job
            workload, _, local_id = job.id.partition("!")
            rejected = sim.state == REJECTED
            start = 0.0 if rejected else sim.start
            execution = 0.0 if rejected else sim.finish - sim.start
            waiting = start - job.subtime if not rejected else 0.0
            turnaround = sim.finish - job.subtime if not rejected else 0.0
            rows.append((
                local_id, workload, job.profile, job.subtime, job.res, job.walltime,
                int(sim.state == SUCCESS), sim.state, start, execution, sim.finish, waiting, turnaround,
                turnaround / execution if execution > 0 else math.nan, sim.alloc, -1.0, sim.metadata,
            ))
        return pd.DataFrame(rows, columns=JOB_COLUMNS)


JOB_COLUMNS = [
    "job_id", "workload_name", "profile", "submission_time", "requested_number_of_resources", "requested_time",
    "success", "final_state", "starting_time", "execution_time", "finish_time", "waiting_time", "turnaround_time",
    "stretch", "allocated_resources", "consumed_energy", "metadata",
]


def _is_missing(value: object) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))
