"""Batsim 4.2.1's side of the simulation, for ``delay`` profiles on a homogeneous platform.

The engine plays Batsim's actors as Batsim runs them on SimGrid 3.32, so that it sends the decision
process the same messages, grouped and ordered the same, at the same times:

- the *submitter* submits the static jobs in ``(subtime, "w0!id")`` order (ids compared as strings),
  one message to the server per group of jobs due at the same time, then says goodbye (NOTIFY
  ``no_more_static_job_to_submit``);
- a job's *executor* sleeps for its delay, or until its walltime when ``delay >= walltime`` (Batsim's
  strict test: ``COMPLETED_WALLTIME_REACHED``; walltime -1 means no limit), then reports its end;
- a *waiter* sleeps until a CALL_ME_LATER's time, then reports REQUESTED_CALL; a *killer* kills the
  jobs of a KILL_JOB, then reports JOB_COMPLETED (``COMPLETED_KILLED``) and JOB_KILLED;
- the *server* receives these reports one by one and records their events; whenever the decision
  process is ready and no report is waiting, it sends it what it recorded. The *request-reply* actor
  then applies the reply's decisions one by one, each at its timestamp (Batsim sleeps until then),
  and tells the server the decision process is ready again at the reply's ``now``.

Every report and every decision is a message to the server, which takes one SimGrid step
(:mod:`scheduler.sim.simgrid`); the steps' rounding decides which events due at the same time end in
the same step, hence in the same message. Actors are generators yielding SimGrid's blocking calls
(send a message, receive one, sleep), run in SimGrid's order: every actor ready to run runs until it
blocks, then the calls are handled in the order the actors ran; then the clock moves one step.

Times given to the decision process are rounded to 6 decimals, as Batsim prints them. Every decision
is validated: an impossible one raises :class:`SimulationError` naming the job, where Batsim aborts.
"""

from __future__ import annotations

import math
import time
from collections import deque
from dataclasses import dataclass, field
from functools import cached_property
from itertools import starmap
from operator import attrgetter
from typing import TYPE_CHECKING, Any, Callable, Generator, Sequence

import numpy as np

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
from scheduler.sim.output import JOBS_COLUMNS
from scheduler.sim.simgrid import MESSAGE_TIME, Timeline
from scheduler.values import is_missing
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
#: A waiter sleeps at least this long (Batsim's ``waiter_process``).
_MIN_WAIT = 1e-5

# SimGrid's blocking calls, as actors yield them, and the reports actors send the server.
_SEND, _SLEEP = "send", "sleep"
_HELLO, _SUBMITTED, _BYE, _COMPLETED, _WAITED, _KILLED = "hello", "submitted", "bye", "completed", "waited", "killed"
_DECISION, _READY = "decision", "ready"

Actor = Generator[tuple, Any, None]


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
    executor: Any = None


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


class _Exchange:
    """Batsim's request-reply actor: one exchange with the decision process, then its decisions sent to
    the server one by one, each at its timestamp (Batsim sleeps until then), and READY at the reply's
    ``now``. It runs as an actor (:meth:`send`, as a generator's); a *plain* exchange, whose decisions
    only start jobs and sleeps longer than 1e-6 s, at their own time, can be finished without rounds
    (:meth:`BatsimEngine._finish_exchange`)."""

    __slots__ = ("engine", "events", "pending", "plain")

    def __init__(self, engine: BatsimEngine, events: list[Event]) -> None:
        self.engine, self.events = engine, events
        self.pending: deque[tuple[float, tuple]] = deque()
        self.plain = False

    def send(self, answer: Any) -> tuple:
        engine, timeline = self.engine, self.engine._timeline
        if self.events is not None:
            self._exchange()
        if not self.pending:
            raise StopIteration
        at, message = self.pending[0]
        if at > timeline.now:
            return (_SLEEP, at - timeline.now)
        return (_SEND, self.next_message())

    def next_message(self) -> tuple:
        """The next message to the server, its decision registered first if it registers a job or profile."""
        message = self.pending.popleft()[1]
        if message[0] is _DECISION:
            decision = message[1]
            if isinstance(decision, RegisterJob):
                self.engine._register(decision.job)
            elif isinstance(decision, RegisterProfile):
                self.engine._register_profile(decision)
        return message

    def _exchange(self) -> None:
        engine = self.engine
        now = _stamp(engine._timeline.now)
        events, self.events = self.events, None
        reply = engine._call_decide(now, events)
        if engine._end_sent:
            self.pending.append((now, (_READY,)))
            return
        if isinstance(reply, TimedReply):
            timed, ready_at = reply.decisions, reply.now
        else:
            timed, ready_at = [(now, decision) for decision in reply], now
        pending = self.pending
        plain = ready_at <= now
        for at, decision in timed:
            pending.append((at, (_DECISION, decision)))
            plain = plain and at <= now and engine._plain(decision)
        pending.append((ready_at, (_READY,)))
        self.plain = plain


class _Process:
    """An actor, with the blocking call it made and what answers it."""

    __slots__ = ("actor", "call", "answer", "dead", "sleep")

    def __init__(self, actor: Actor) -> None:
        self.actor = actor
        self.call: tuple | None = None
        self.answer: Any = None
        self.dead = False
        self.sleep = None


def _stamp(clock: float) -> float:
    """The time Batsim prints for ``clock`` (``%f``: 6 decimals)."""
    whole = round(clock)
    if -5e-7 < clock - whole < 5e-7:  # the common case, an integer time (or one off by SimGrid's rounding)
        return float(whole)
    return round(clock, 6)


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

    # --- the run -------------------------------------------------------------------

    def run(self, decide: DecideFunction, progress: Callable[[int], None] | None = None) -> SimulationResult:
        """Simulate until SIMULATION_ENDS. ``progress(n)`` is told, with each message, of the ``n`` static jobs
        that ended since the last call (completed, killed or rejected): they add up to the workload's size, a
        killed and resubmitted job counting once."""
        self._decide, self._progress = decide, progress
        self._static_ids = set(map(id, self._static)) if progress is not None else set()
        self._timeline = Timeline()
        self._to_run: list[_Process] = []
        self._mailbox: deque[tuple[_Process, tuple]] = deque()
        self._receiving = False  # the server waits for a message
        self._in_flight: tuple[int, _Process, tuple] | None = None  # (seq, sender, message) of the message sent
        self._in_flight_left = 0.0
        self._recorded: list[Event] = []  # what the server will send the decision process next
        self._ready = False  # the decision process waits for a message
        self._end_sent = self._done = False
        self._submitter_done = self._registration_finished = False
        self._waiters = self._killers = 0
        self._active = 0  # jobs submitted and not done (completed, killed or rejected)
        self._messages, self._deciding, self._reported = 0, 0.0, 0
        with cyclic_gc_paused():  # in process (simulate) or over the socket (batsim-peer) alike
            self._spawn(self._submitter())
            self._start_server()
            self._maestro()
        unfinished = [job_id for job_id, sim in self.jobs.items() if sim.state in ("", _RUNNING)]
        return SimulationResult(self._jobs_columns(), self.nb_machines, self._end_time, self._messages,
                                unfinished, self._deciding)

    def _maestro(self) -> None:
        """SimGrid's main loop: every actor ready to run runs until it blocks, then their calls are handled
        in the order they ran; when none is ready, the clock moves one step."""
        timeline, mailbox, sleep_for = self._timeline, self._mailbox, self._timeline.sleep
        while not self._done:
            while self._to_run:
                ran, self._to_run = self._to_run, []
                for process in ran:
                    if not process.dead:
                        try:
                            process.call = process.actor.send(process.answer)
                        except StopIteration:
                            process.dead, process.call = True, None
                        process.answer = None
                for process in ran:
                    call = process.call
                    if call is None:
                        continue
                    process.call = None
                    if call[0] is _SEND:
                        if self._receiving:
                            self._receiving = False
                            self._start_sending(process, call[1])
                        else:
                            mailbox.append((process, call[1]))
                    else:
                        process.sleep = sleep_for(call[1], process)
            if self._done:
                break
            self._step()

    def _step(self) -> None:
        """One step of SimGrid's clock: the message in flight arrives, or sleeps end, or both. The actors
        woken run next, in the order their actions started; the server, woken by a message, runs at once:
        what it does only shows in its mailbox, which nobody else reads, and the actors it starts run
        after those woken (SimGrid runs them in the next round, and nothing happens in between)."""
        timeline, in_flight = self._timeline, self._in_flight
        if in_flight is not None:
            delta, ended = timeline.message_step(self._in_flight_left)
            self._in_flight_left -= delta
            arrived = self._in_flight_left <= 0
        elif timeline.idle:
            self._deadlock()
            self._done = True
            return
        else:
            ended, arrived = timeline.jump(), False
        to_run = self._to_run
        if arrived:
            self._in_flight = None
            if not ended:  # the common case: only the message arrived
                sender = in_flight[1]
                if sender.actor.__class__ is _Exchange and sender.actor.plain and not timeline.following:
                    self._serve(in_flight[2])
                    self._finish_exchange(sender)
                else:
                    to_run.append(sender)
                    self._serve(in_flight[2])
                return
            sender_at = next((i for i, sleep in enumerate(ended) if sleep.seq > in_flight[0]), len(ended))
        for i, sleep in enumerate(ended):
            if arrived and i == sender_at:
                to_run.append(in_flight[1])
            process = sleep.owner
            process.sleep = None
            to_run.append(process)
        if arrived:
            if sender_at == len(ended):
                to_run.append(in_flight[1])
            self._serve(in_flight[2])

    def _finish_exchange(self, process: _Process) -> None:
        """The rest of a plain exchange (:attr:`_Exchange.plain`), step by step as :meth:`_maestro` would take
        it, without its rounds: nothing else can happen meanwhile. Each decision reaches the server in its
        own step, after the actors the previous one started have begun their sleeps."""
        exchange, timeline, to_run = process.actor, self._timeline, self._to_run
        while not self._done and exchange.pending and not self._mailbox and self._receiving:
            message = exchange.next_message()
            self._in_flight = None
            timeline.next_seq()  # the message's own action
            while to_run:  # the actors the last decision started: a plain exchange's only sleep
                started = to_run.pop(0)
                started.sleep = timeline.sleep(started.actor.send(None)[1], started)
            timeline.message_step()
            self._serve(message)
        if exchange.pending:
            to_run.insert(0, process)  # what is left goes through the rounds
        else:
            process.dead = True

    def _start_sending(self, sender: _Process, message: tuple) -> None:
        self._in_flight = (self._timeline.next_seq(), sender, message)
        self._in_flight_left = MESSAGE_TIME

    def _spawn(self, actor: Actor) -> _Process:
        process = _Process(actor)
        self._to_run.append(process)
        return process

    def _deadlock(self) -> None:
        """Nothing can happen any more, and Batsim has not ended the simulation: why."""
        if self.options.enable_dynamic_jobs and not self._registration_finished:
            raise SimulationError("dynamic jobs are enabled but the scheduler never sent NOTIFY "
                                  "registration_finished: Batsim would wait forever")
        # the decision process leaves jobs waiting forever: end here, and report them as unfinished
        self._end_time = _stamp(self._timeline.now)
        self._call_decide(self._end_time, [SimulationEnds(self._end_time)])

    def _call_decide(self, now: float, events: list[Event]) -> Sequence[Decision] | TimedReply:
        started = time.perf_counter()
        reply = self._decide(now, events)
        self._deciding += time.perf_counter() - started
        self._messages += 1
        if self._progress is not None and len(self.rows) > self._reported:
            ended = sum(id(sim) in self._static_ids for sim in self.rows[self._reported:])
            self._reported = len(self.rows)
            if ended:
                self._progress(ended)
        return reply

    # --- Batsim's actors -----------------------------------------------------------

    def _start_server(self) -> None:
        """Batsim's server starts: it sends SIMULATION_BEGINS, then waits for messages."""
        self._handlers = {_SUBMITTED: self._on_submitted, _COMPLETED: self._on_completed, _WAITED: self._on_waited,
                          _KILLED: self._on_killed, _DECISION: self._on_decision, _READY: self._on_ready,
                          _BYE: self._on_bye, _HELLO: _ignore}
        self._record(SimulationBegins(0.0, self.nb_machines, self._batsim_config()))
        self._send_recorded()
        self._receive()

    def _serve(self, message: tuple) -> None:
        """Batsim's server gets a message: it records what happened, sends the decision process what it
        recorded when the decision process is ready and no message is waiting, then waits for the next."""
        self._handlers[message[0]](message)
        if self._end_sent and self._ready:
            self._done = True
            return
        if self._ready and not self._mailbox:
            if self._recorded:
                self._send_recorded()
            elif self._finished():
                self._end_time = _stamp(self._timeline.now)
                self._record(SimulationEnds(self._end_time))
                self._send_recorded()
                self._end_sent = True
        self._receive()

    def _receive(self) -> None:
        if self._mailbox:
            self._start_sending(*self._mailbox.popleft())
        else:
            self._receiving = True

    def _submitter(self) -> Actor:
        """Batsim's static job submitter: the jobs due at the same time in one message, then goodbye."""
        yield (_SEND, (_HELLO,))
        timeline = self._timeline
        current = timeline.now
        group: list[_SimJob] = []
        for sim in self._static:
            subtime = sim.job.subtime
            if subtime > current:
                if group:
                    yield (_SEND, (_SUBMITTED, group))
                    group = []
                yield (_SLEEP, float(np.longdouble(subtime) - np.longdouble(current)))  # Batsim's long doubles
                current = timeline.now
            group.append(sim)
        if group:
            yield (_SEND, (_SUBMITTED, group))
        yield (_SEND, (_BYE,))

    def _executor(self, sim: _SimJob) -> Actor:
        """A job's execution: its delay, or its walltime when the delay reaches it."""
        duration, state = _duration(sim)
        if duration > 0:
            yield (_SLEEP, duration)
        self._end(sim, state)
        yield (_SEND, (_COMPLETED, sim))

    def _waiter(self, at: float) -> Actor:
        timeline = self._timeline
        if timeline.now < at:
            yield (_SLEEP, max(at - timeline.now, _MIN_WAIT))
        if not self._end_sent:
            yield (_SEND, (_WAITED,))

    def _killer(self, job_ids: list[str]) -> Actor:
        killed = []
        for job_id in job_ids:
            sim = self.jobs[job_id]
            if sim.state == _RUNNING:
                executor = sim.executor
                if executor.sleep is not None:
                    self._timeline.cancel(executor.sleep)
                executor.dead = True
                self._end(sim, KILLED)
                killed.append(sim)
        yield (_SEND, (_KILLED, job_ids, killed))

    # --- what the server does with what it receives --------------------------------

    def _on_submitted(self, message: tuple) -> None:
        now = _stamp(self._timeline.now)
        self._active += len(message[1])
        for sim in message[1]:
            sim.submitted = True
            self._record(JobSubmitted(now, sim.job))

    def _on_completed(self, message: tuple) -> None:
        sim = message[1]
        self._active -= 1
        self.rows.append(sim)
        self._record(JobCompleted(_stamp(self._timeline.now), sim.job.id, sim.state))

    def _on_waited(self, message: tuple) -> None:
        self._waiters -= 1
        self._record(RequestedCall(_stamp(self._timeline.now)))

    def _on_killed(self, message: tuple) -> None:
        self._killers -= 1
        now = _stamp(self._timeline.now)
        self._active -= len(message[2])
        for sim in message[2]:
            self.rows.append(sim)
            self._record(JobCompleted(now, sim.job.id, KILLED))
        self._record(JobKilled(now, tuple(message[1])))

    def _on_bye(self, message: tuple) -> None:
        self._submitter_done = True
        self._record(NoMoreStaticJobs(_stamp(self._timeline.now)))

    def _on_ready(self, message: tuple) -> None:
        self._ready = True

    def _on_decision(self, message: tuple) -> None:
        decision = message[1]
        if isinstance(decision, Execute):
            self._execute(decision)
        elif isinstance(decision, CallMeLater):
            if not decision.time > self._timeline.now:
                raise SimulationError(f"CALL_ME_LATER at {decision.time:g} is not after now "
                                      f"({_stamp(self._timeline.now):g}): Batsim aborts ('You asked to be awaken "
                                      "in the past')")
            self._waiters += 1
            self._spawn(self._waiter(decision.time))
        elif isinstance(decision, Kill):
            self._kill(decision.job_ids)
        elif isinstance(decision, Reject):
            self._reject(decision.job_id)
        elif isinstance(decision, SetMetadata):
            if '"' in decision.metadata:
                raise SimulationError(f"SET_JOB_METADATA {decision.job_id!r}: metadata may not contain '\"'")
            self._known(decision.job_id, "SET_JOB_METADATA").metadata = decision.metadata
        elif isinstance(decision, RegisterJob):
            self._active += 1
            if self.options.acknowledge_dynamic_jobs:
                self._record(JobSubmitted(_stamp(self._timeline.now), self.jobs[decision.job.id].job))
        elif isinstance(decision, RegistrationFinished):
            self._registration_finished = True
        elif not isinstance(decision, RegisterProfile):
            raise SimulationError(f"unsupported decision {type(decision).__name__}")

    def _record(self, event: Event) -> None:
        self._recorded.append(event)

    def _send_recorded(self) -> None:
        events, self._recorded = self._recorded, []
        self._ready = False
        self._spawn(_Exchange(self, events))

    def _finished(self) -> bool:
        """Batsim's end: every static job submitted and every job done, no call or kill pending, and, with
        dynamic jobs, registration finished."""
        return (self._submitter_done and not self._waiters and not self._killers and not self._active
                and (not self.options.enable_dynamic_jobs or self._registration_finished))

    def _batsim_config(self) -> dict[str, Any]:
        return {
            "dynamic-jobs-enabled": self.options.enable_dynamic_jobs,
            "dynamic-jobs-acknowledged": self.options.acknowledge_dynamic_jobs,
            "profile-reuse-enabled": self.options.enable_profile_reuse,
            "profiles-forwarded-on-submission": False,
            "sched-config": self.options.sched_config,
            "forward-unknown-events": False,
        }

    # --- decisions -----------------------------------------------------------------

    def _known(self, job_id: str, what: str) -> _SimJob:
        try:
            return self.jobs[job_id]
        except KeyError:
            raise SimulationError(f"{what}: unknown job {job_id!r}") from None

    def _execute(self, decision: Execute) -> None:
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
        sim.mask, sim.start, sim.state = mask, _stamp(self._timeline.now), _RUNNING
        sim.executor = self._spawn(self._executor(sim))

    def _plain(self, decision: Decision) -> bool:
        """Whether ``decision`` only starts a sleep longer than 1e-6 s, or nothing (see :class:`_Exchange`)."""
        kind = decision.__class__
        if kind is Execute:
            sim = self.jobs.get(decision.job_id)
            return sim is not None and _duration(sim)[0] > 1e-6
        return kind is not Kill

    def _end(self, sim: _SimJob, state: str) -> None:
        """A job ends (its executor's time is up, or a killer killed it): its machines are free."""
        sim.state, sim.finish = state, _stamp(self._timeline.now)
        self.free |= sim.mask
        if self.options.enable_dynamic_jobs and not self.options.enable_profile_reuse:  # REGISTER_JOB checks them
            self._collected_profiles.add((sim.job.workload, sim.job.profile))

    def _reject(self, job_id: str) -> None:
        sim = self._known(job_id, "REJECT_JOB")
        if sim.state:
            raise SimulationError(f"REJECT_JOB: job {job_id!r} is {sim.state}, not waiting")
        sim.state = REJECTED
        self._active -= 1
        self.rows.append(sim)

    def _kill(self, job_ids: Sequence[str]) -> None:
        kept = []
        for job_id in job_ids:
            sim = self._known(job_id, "KILL_JOB")
            if sim.kill_requested:
                continue  # Batsim drops repeated kills silently
            if sim.state != _RUNNING and sim.state in ("", REJECTED):
                raise SimulationError(f"KILL_JOB: job {job_id!r} is "
                                      f"{'waiting' if not sim.state else sim.state}, not running")
            sim.kill_requested = True
            kept.append(job_id)
        if kept:
            self._killers += 1
            self._spawn(self._killer(kept))

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
        registered = Job(job.id, job.subtime, job.res, job.walltime, job.profile, runtime, dict(job.extras))
        self.jobs[job.id] = _SimJob(registered, float(runtime), submitted=True)  # Batsim submits it as it reads it

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


def _duration(sim: _SimJob) -> tuple[float, str]:
    """How long a job runs, and how it ends: its delay, or its walltime when the delay reaches it."""
    walltime = sim.job.walltime
    if walltime < 0 or sim.runtime < walltime:
        return sim.runtime, SUCCESS
    return walltime, WALLTIME


def _ignore(message: tuple) -> None:
    """A message the server only acknowledges (the submitter's hello)."""
