"""Batsim 4.2.1's side of the simulation, for ``delay`` profiles on a homogeneous platform.

The engine owns the simulated clock and the machines. It delivers events to a decision
process in Batsim messages (``decide(now, events) -> decisions``) and applies the
decisions with Batsim's rules, on a platform whose links add no latency:

- static jobs are submitted in ``(subtime, "w0!id")`` order, ids compared as strings;
  jobs with the same subtime come in one message;
- independent events due at the same instant (job ends, submissions, requested calls)
  share one message, in the order their timers were armed: a job's end is armed when it
  starts, the submitter's next wake-up when it delivers a group, a call when requested;
- what the server itself causes comes in the next message, at the same instant:
  NOTIFY ``no_more_static_job_to_submit``, the answer to KILL_JOB (JOB_COMPLETED with
  ``COMPLETED_KILLED``, then JOB_KILLED) and the JOB_SUBMITTED echo of REGISTER_JOB;
- a delay job runs for its delay unless that reaches its walltime: with
  ``delay >= walltime`` (Batsim's strict test) it ends at the walltime as
  ``COMPLETED_WALLTIME_REACHED``; walltime -1 means no limit;
- CALL_ME_LATER must be strictly in the future; each one gives a REQUESTED_CALL;
- a reply may carry Batsim's clock (:class:`TimedReply`, what ``batsim-peer`` decodes): Batsim
  sleeps until each decision's timestamp before applying it, and the scheduler stays busy
  until the reply's ``now``; what happens meanwhile (job ends, submissions, calls, the answer
  to a kill) is held and delivered in one message when the scheduler is ready again. A plain
  list of decisions applies them all at the message's time;
- SIMULATION_ENDS comes alone, once every static job was submitted, every job finished,
  no call is pending and, with dynamic jobs, registration is finished.

Every decision is validated: an impossible one raises :class:`SimulationError` naming
the job, where real Batsim would abort.
"""

from __future__ import annotations

import math
import time
from heapq import heappop, heappush
from dataclasses import dataclass, field
from functools import cached_property
from itertools import starmap
from operator import attrgetter
from typing import TYPE_CHECKING, Callable, Sequence

from scheduler.core.events import (
    KILLED,
    REJECTED,
    SUCCESS,
    WALLTIME,
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
    RegisterProfile,
    RegistrationFinished,
    Reject,
    RequestedCall,
    SetMetadata,
    SimulationBegins,
    SimulationEnds,
)
from scheduler.core.job import Job
from scheduler.core.machines import full_mask, to_interval_string
from scheduler.cyclic_gc import cyclic_gc_paused
from scheduler.errors import SimulationError
from scheduler.values import is_missing
from scheduler.sim.output import JOBS_COLUMNS
from scheduler.workloads.model import Workload

if TYPE_CHECKING:
    import pandas as pd


@dataclass
class TimedReply:
    """A reply with Batsim's clock: each decision applies at its timestamp (or at once when that
    is past), and the decision process is busy until ``now``."""

    now: float
    decisions: Sequence[tuple[float, Decision]]


DecideFunction = Callable[[float, Sequence[Event]], "Sequence[Decision] | TimedReply"]

_RUNNING = "RUNNING"
#: What :meth:`BatsimEngine._jobs_columns` reads of each job record, and of each job.
_SIM_FIELDS = attrgetter("job", "state", "start", "finish", "mask", "metadata")
_JOB_FIELDS = attrgetter("id", "subtime", "res", "walltime", "profile")
_END, _SUBMIT, _CALL = "end", "submit", "call"


@dataclass(slots=True)
class _SimJob:
    """What the engine knows of one job."""

    job: Job
    runtime: float
    start: float = math.nan
    finish: float = math.nan
    state: str = ""  # "" (waiting), RUNNING, or a final state
    mask: int = 0
    metadata: str = ""
    submitted: bool = False
    kill_requested: bool = False


@dataclass
class SimulationOptions:
    """Batsim's flags that change the simulation (same names, without dashes)."""

    enable_dynamic_jobs: bool = False
    acknowledge_dynamic_jobs: bool = False
    enable_profile_reuse: bool = False
    sched_config: str = ""


@dataclass
class SimulationResult:
    """The outcome of one run: one row per job attempt, in Batsim's ``_jobs.csv`` schema.

    The metrics and the output files read :attr:`columns`; :attr:`jobs` is the same table as a
    DataFrame, built (and pandas imported) when it is first read.
    """

    columns: dict[str, list]  # JOBS_COLUMNS -> one value per row, rows in the order Batsim writes them
    nb_machines: int
    makespan: float
    nb_messages: int
    unfinished: list[str] = field(default_factory=list)
    scheduling_time: float = 0.0  # wall-clock seconds the decision process took (its replies, waited for)

    @cached_property
    def jobs(self) -> pd.DataFrame:
        import pandas as pd

        return pd.DataFrame(self.columns, columns=JOBS_COLUMNS)


class BatsimEngine:
    """Drives a decision process through a whole workload."""

    def __init__(self, workload: Workload, nb_machines: int | None = None,
                 options: SimulationOptions | None = None) -> None:
        self.workload = workload
        self.nb_machines = int(nb_machines or workload.nb_res)
        self.options = options or SimulationOptions()
        self.free = full_mask(self.nb_machines)
        self.jobs: dict[str, _SimJob] = {}
        self.rows: list[_SimJob] = []  # the jobs in the order their _jobs.csv rows are written
        self._timers: list[tuple] = []  # (time, arming order, kind, payload)
        self._armed = 0
        self._next_wave: list[Callable[[float], list[Event]]] = []
        self._held: list[Event] = []  # events that happened while the scheduler was busy
        self._static: list[_SimJob] = []  # static jobs in submission order
        self._static_next = 0
        self._calls_pending = 0
        self._registration_finished = False
        self._registered_profiles: dict[tuple[str, str], float] = {}
        self._collected_profiles: set[tuple[str, str]] = set()
        with cyclic_gc_paused():  # a few objects per job, all kept: the collector would scan them in vain
            self._load_static_jobs()

    # --- set-up --------------------------------------------------------------------

    def _load_static_jobs(self) -> None:
        """The workload's jobs, built column by column (a job per row, its extra fields but the missing ones)."""
        workload = self.workload
        ids = [f"{workload.name}!{job_id}" for job_id in workload.column("id")]
        if len(set(ids)) < len(ids):
            local_id = _first_duplicate(workload.column("id"))
            raise SimulationError(f"{workload.source or 'workload'}: duplicate job id {local_id!r}")
        subtimes = list(map(float, workload.column("subtime")))
        profiles = list(map(str, workload.column("profile")))
        runtimes = list(map(float, workload.column("runtime")))
        fields: list[dict] = [{} for _ in ids]
        for name in workload.extra_columns:
            for job_fields, value in zip(fields, workload.column(name)):
                if not is_missing(value):
                    job_fields[name] = value
        jobs = starmap(Job, zip(ids, subtimes, map(int, workload.column("res")), map(float, workload.column("walltime")),
                                profiles, runtimes, fields))
        sims = list(map(_SimJob, jobs, runtimes))
        self.jobs = dict(zip(ids, sims))
        self._static = [sim for _, _, sim in sorted(zip(subtimes, ids, sims))]  # ids are unique: sims never compared
        self._static_profiles = set(profiles)
        if self._static:
            self._arm(self._static[0].job.subtime, _SUBMIT, None)

    def _arm(self, due: float, kind: str, payload: object) -> None:
        self._armed += 1
        heappush(self._timers, (due, self._armed, kind, payload))

    # --- main loop -----------------------------------------------------------------

    def run(self, decide: DecideFunction, progress: Callable[[int], None] | None = None) -> SimulationResult:
        """Simulate until SIMULATION_ENDS. ``progress(n)`` is told, after each message, of the ``n`` static jobs
        that ended since the last call (completed, killed or rejected): they add up to the workload's size."""
        with cyclic_gc_paused():  # in process (simulate) or over the socket (batsim-peer) alike
            return self._run(decide, progress)

    def _run(self, decide: DecideFunction, progress: Callable[[int], None] | None) -> SimulationResult:
        now = 0.0
        config = {
            "dynamic-jobs-enabled": self.options.enable_dynamic_jobs,
            "dynamic-jobs-acknowledged": self.options.acknowledge_dynamic_jobs,
            "profile-reuse-enabled": self.options.enable_profile_reuse,
            "profiles-forwarded-on-submission": False,
            "sched-config": self.options.sched_config,
            "forward-unknown-events": False,
        }
        clock = time.perf_counter
        started = clock()
        now = self._reply(now, decide(now, [SimulationBegins(now, self.nb_machines, config)]))
        deciding = clock() - started  # the seconds spent waiting for decide
        messages, rows, next_message, reply = 1, self.rows, self._next_message, self._reply
        static = set(map(id, self._static)) if progress is not None else set()
        reported = len(rows)  # jobs end while the next message is made, and are rejected in replies
        while True:
            events, now = next_message(now)
            if not events:
                break
            started = clock()
            decisions = decide(now, events)
            deciding += clock() - started
            now = reply(now, decisions)
            messages += 1
            if progress is not None and len(rows) > reported:
                ended = sum(id(sim) in static for sim in rows[reported:])
                reported = len(rows)
                if ended:
                    progress(ended)
        started = clock()
        decide(now, [SimulationEnds(now)])
        deciding += clock() - started
        unfinished = [job_id for job_id, sim in self.jobs.items() if sim.state in ("", _RUNNING)]
        return SimulationResult(self._jobs_columns(), self.nb_machines, now, messages + 1, unfinished, deciding)

    def _next_message(self, now: float) -> tuple[list[Event], float]:
        """The events of the next Batsim message and its time; no events once the simulation ends."""
        if self._held:
            held, self._held = self._held, []
            return held, now
        if self._next_wave:
            return self._second_wave(now), now
        timers = self._timers
        while timers:
            due = timers[0][0]
            events = self._fire(due)
            if events:
                return events, due
        if self.options.enable_dynamic_jobs and not self._registration_finished:
            raise SimulationError("dynamic jobs are enabled but the scheduler never sent NOTIFY "
                                  "registration_finished: Batsim would wait forever")
        return [], now

    def _second_wave(self, now: float) -> list[Event]:
        wave, self._next_wave = self._next_wave, []
        return [event for produce in wave for event in produce(now)]

    def _fire(self, now: float) -> list[Event]:
        """Every timer due at ``now``: their effects, and the events they produce, in arming order."""
        events: list[Event] = []
        timers = self._timers
        while timers and timers[0][0] == now:
            _, _, kind, payload = heappop(timers)
            if kind == _END:
                sim, state = payload
                if sim.state == _RUNNING:  # else it was killed before
                    self._finish(sim, now, state)
                    events.append(JobCompleted(now, sim.job.id, state))
            elif kind == _SUBMIT:
                self._submit_static_group(now, events)
            else:
                self._calls_pending -= 1
                events.append(RequestedCall(now))
        return events

    def _reply(self, now: float, reply: Sequence[Decision] | TimedReply) -> float:
        """Apply a reply; the clock when the decision process is ready again."""
        if not isinstance(reply, TimedReply):
            self._apply(now, reply)
            return now
        for time, decision in reply.decisions:
            if time > now:
                self._busy_until(now, time)
                now = time
            self._apply(now, [decision])
        if reply.now > now:
            self._busy_until(now, reply.now)
            now = reply.now
        return now

    def _busy_until(self, now: float, until: float) -> None:
        """Batsim sleeps until ``until`` while the scheduler is busy: everything due meanwhile
        happens, and its events are held for the next message."""
        if self._next_wave:
            self._held += self._second_wave(now)
        while self._timers and self._timers[0][0] <= until:
            due = self._timers[0][0]
            self._held += self._fire(due)
            if self._next_wave:
                self._held += self._second_wave(due)

    def _submit_static_group(self, now: float, events: list[Event]) -> None:
        """Submit the static jobs due by ``now`` (their events added to ``events``); arm the next group."""
        static, index = self._static, self._static_next
        while index < len(static):
            sim = static[index]
            job = sim.job
            if job.subtime > now:
                self._arm(job.subtime, _SUBMIT, None)
                break
            sim.submitted = True
            events.append(JobSubmitted(now, job))
            index += 1
        else:
            self._next_wave.append(lambda now: [NoMoreStaticJobs(now)])
        self._static_next = index

    # --- decisions -----------------------------------------------------------------

    def _apply(self, now: float, decisions: Sequence[Decision]) -> None:
        for decision in decisions:
            if isinstance(decision, Execute):
                self._execute(now, decision)
            elif isinstance(decision, Reject):
                self._reject(decision.job_id)
            elif isinstance(decision, Kill):
                self._kill(decision.job_ids)
            elif isinstance(decision, CallMeLater):
                if not decision.time > now:
                    raise SimulationError(f"CALL_ME_LATER at {decision.time:g} is not after now ({now:g}): "
                                          "Batsim aborts ('You asked to be awaken in the past')")
                self._calls_pending += 1
                self._arm(decision.time, _CALL, None)
            elif isinstance(decision, RegisterProfile):
                self._register_profile(decision)
            elif isinstance(decision, RegisterJob):
                self._register(decision.job)
            elif isinstance(decision, SetMetadata):
                if '"' in decision.metadata:
                    raise SimulationError(f"SET_JOB_METADATA {decision.job_id!r}: metadata may not contain '\"'")
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
        sim = self.jobs.get(decision.job_id) or self._known(decision.job_id, "EXECUTE_JOB")
        job = sim.job
        if sim.state:
            raise SimulationError(f"EXECUTE_JOB: job {job.id!r} is {sim.state}, not waiting")
        if not sim.submitted:
            raise SimulationError(f"EXECUTE_JOB: job {job.id!r} is not submitted yet")
        mask = decision.machines
        if mask.bit_count() != job.res:
            raise SimulationError(f"EXECUTE_JOB: job {job.id!r} requests {job.res} machines, "
                                  f"allocation '{decision.alloc}' has {mask.bit_count()}")
        if mask >> self.nb_machines:
            raise SimulationError(f"EXECUTE_JOB: job {job.id!r}: allocation '{decision.alloc}' exceeds the "
                                  f"{self.nb_machines} machines")
        if mask & ~self.free:
            raise SimulationError(f"EXECUTE_JOB: job {job.id!r}: machines of '{decision.alloc}' are busy")
        self.free &= ~mask
        sim.mask, sim.start, sim.state = mask, now, _RUNNING
        if 0 < job.walltime <= sim.runtime:
            self._arm(now + job.walltime, _END, (sim, WALLTIME))
        else:
            self._arm(now + sim.runtime, _END, (sim, SUCCESS))

    def _reject(self, job_id: str) -> None:
        sim = self._known(job_id, "REJECT_JOB")
        if sim.state:
            raise SimulationError(f"REJECT_JOB: job {job_id!r} is {sim.state}, not waiting")
        sim.state = REJECTED
        self.rows.append(sim)

    def _kill(self, job_ids: Sequence[str]) -> None:
        kept = []
        for job_id in job_ids:
            sim = self._known(job_id, "KILL_JOB")
            if sim.kill_requested:
                continue  # Batsim drops repeated kills silently
            if sim.state != _RUNNING:
                raise SimulationError(f"KILL_JOB: job {job_id!r} is "
                                      f"{'waiting' if not sim.state else sim.state}, not running")
            sim.kill_requested = True
            kept.append(job_id)
        if kept:
            self._next_wave.append(lambda now: self._kill_now(now, kept))

    def _kill_now(self, now: float, job_ids: list[str]) -> list[Event]:
        events: list[Event] = []
        for job_id in job_ids:
            if self.jobs[job_id].state == _RUNNING:
                self._finish(self.jobs[job_id], now, KILLED)
                events.append(JobCompleted(now, job_id, KILLED))
        events.append(JobKilled(now, tuple(job_ids)))
        return events

    def _register(self, job: Job) -> None:
        what = f"REGISTER_JOB {job.id!r}"
        if not self.options.enable_dynamic_jobs:
            raise SimulationError(f"{what}: dynamic jobs are disabled (Batsim needs --enable-dynamic-jobs)")
        if self._registration_finished:
            raise SimulationError(f"{what}: registration is already finished")
        if job.id.count("!") != 1:
            raise SimulationError(f"{what}: a job id must be 'workload!name'")
        if job.id in self.jobs:
            raise SimulationError(f"{what}: the job already exists (Batsim aborts on duplicate ids)")
        workload = job.id.partition("!")[0]
        profile = (workload, job.profile)
        if profile in self._collected_profiles and profile not in self._registered_profiles:
            raise SimulationError(f"{what}: profile {job.profile!r} existed some time ago but is no longer "
                                  "accessible (Batsim garbage-collects a profile once a job using it finished; "
                                  "use --enable-profile-reuse or REGISTER_PROFILE a copy)")
        runtime = self._registered_profiles.get(profile, job.runtime)
        if runtime is None:
            raise SimulationError(f"{what}: profile {job.profile!r} has no known delay")
        job = Job(job.id, job.subtime, job.res, job.walltime, job.profile, runtime, job.extras)
        sim = _SimJob(Job(job.id, job.subtime, job.res, job.walltime, job.profile, job.runtime, dict(job.extras)),
                      float(job.runtime), submitted=True)  # Batsim submits it while parsing the reply
        self.jobs[job.id] = sim
        if self.options.acknowledge_dynamic_jobs:
            self._next_wave.append(lambda now: [JobSubmitted(now, sim.job)])

    def _register_profile(self, decision: RegisterProfile) -> None:
        what = f"REGISTER_PROFILE {decision.workload}!{decision.name}"
        if not self.options.enable_dynamic_jobs:
            raise SimulationError(f"{what}: dynamic jobs are disabled (Batsim needs --enable-dynamic-jobs)")
        key = (decision.workload, decision.name)
        if key in self._registered_profiles or self._profile_exists(key):
            raise SimulationError(f"{what}: the profile already exists (Batsim aborts on duplicates)")
        self._registered_profiles[key] = float(decision.delay)

    def _profile_exists(self, key: tuple[str, str]) -> bool:
        return key[0] == self.workload.name and key[1] in self._static_profiles

    def _finish(self, sim: _SimJob, time: float, state: str) -> None:
        sim.state, sim.finish = state, time
        self.free |= sim.mask
        self.rows.append(sim)
        if self.options.enable_dynamic_jobs and not self.options.enable_profile_reuse:  # REGISTER_JOB checks them
            self._collected_profiles.add((sim.job.workload, sim.job.profile))

    # --- output --------------------------------------------------------------------

    def _jobs_columns(self) -> dict[str, list]:
        """One row per job, in the order Batsim writes them; rejected jobs have no times (NaN)."""
        sims = self.rows
        if not sims:
            return {name: [] for name in JOBS_COLUMNS}
        jobs, states, start, ends, masks, metadata = map(list, zip(*map(_SIM_FIELDS, sims)))  # start NaN if never
        ids, submission, res, walltimes, profiles = map(list, zip(*map(_JOB_FIELDS, jobs)))
        ran = [state != REJECTED for state in states]
        # Batsim records a null runtime as 1e-5
        runtime = [max(end - begin, 1e-5) if r else math.nan for begin, end, r in zip(start, ends, ran)]
        finish = [s + r for s, r in zip(start, runtime)]
        turnaround = [f - s for f, s in zip(finish, submission)]
        intervals = {mask: to_interval_string(mask) for mask in set(masks)}  # allocations repeat: each written once
        names = [job_id.partition("!") for job_id in ids]  # (workload, "!", id)
        return {
            "job_id": [name[2] for name in names],
            "workload_name": [name[0] for name in names],
            "profile": profiles,
            "submission_time": submission,
            "requested_number_of_resources": res,
            "requested_time": walltimes,
            "success": [int(state == SUCCESS) for state in states],
            "final_state": states,
            "starting_time": start,
            "execution_time": runtime,
            "finish_time": finish,
            "waiting_time": [s - t for s, t in zip(start, submission)],
            "turnaround_time": turnaround,
            "stretch": [t / r for t, r in zip(turnaround, runtime)],
            "allocated_resources": [intervals[mask] if r else "" for mask, r in zip(masks, ran)],
            "consumed_energy": [-1.0] * len(sims),
            "metadata": metadata,
        }


def _first_duplicate(values: list) -> object:
    """The first value that comes again."""
    seen = set()
    for value in values:
        if value in seen:
            return value
        seen.add(value)
    return None
