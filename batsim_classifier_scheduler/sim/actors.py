"""Batsim's actors and server: what each actor does (the request-reply actor, :class:`Exchange`, among them), and how
the server records reports and applies decisions."""

from __future__ import annotations

import time
from collections import deque
from typing import Any, Sequence

import numpy as np

from batsim_classifier_scheduler.core.messages import (
    KILLED,
    REJECTED,
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
from batsim_classifier_scheduler.core.job import Job
from batsim_classifier_scheduler.core.machines import kept_allocation
from batsim_classifier_scheduler.errors import SimulationError
from batsim_classifier_scheduler.sim.engine_types import (
    MSG_BYE,
    MSG_COMPLETED,
    MSG_DECISION,
    MSG_HELLO,
    MSG_KILLED,
    MSG_READY,
    MSG_SUBMITTED,
    MSG_WAITED,
    RUNNING,
    SEND,
    SLEEP,
    Actor,
    Process,
    SimJob,
    TimedReply,
    run_duration,
    stamp,
)

#: A waiter sleeps at least this long (Batsim's ``waiter_process``).
_MIN_WAIT = 1e-5


class BatsimActors:
    """Batsim's actors (submitter, executors, waiters, killers; the request-reply actor is :class:`Exchange`) and its
    server.

    A base of :class:`~batsim_classifier_scheduler.sim.engine.BatsimEngine`, which holds the state they read (jobs, free
    machines, the clock) and runs them (``_spawn``, ``_start_sending``).
    """

    def _start_server(self) -> None:
        """Batsim's server starts: it sends SIMULATION_BEGINS, then waits for messages."""
        self._handlers = {MSG_SUBMITTED: self._on_submitted, MSG_COMPLETED: self._on_completed,
                          MSG_WAITED: self._on_waited, MSG_KILLED: self._on_killed, MSG_DECISION: self._on_decision,
                          MSG_READY: self._on_ready, MSG_BYE: self._on_bye, MSG_HELLO: _ignore}
        self._record(SimulationBegins(0.0, self.nb_machines, self._batsim_config()))
        self._send_recorded()
        self._receive()

    def _serve(self, message: tuple) -> None:
        """Batsim's server gets a message: it records what happened, sends the decision process what it
        recorded when the decision process is ready and no message is waiting, then waits for the next."""
        self._handlers[message[0]](message)
        self._served()

    def _served(self) -> None:
        """The server has handled a message (:meth:`_serve`): it ends the simulation, or sends the decision process
        what it recorded when it is ready and no message is waiting (or SIMULATION_ENDS, when all is done); then it
        takes the next message, or waits for one."""
        if self._end_sent and self._ready:
            self._done = True
            return
        if self._ready and not self._mailbox:
            if self._recorded:
                self._send_recorded()
            elif self._finished():
                self._end_time = stamp(self._timeline.now)
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
        """Batsim's static job submitter: the jobs due at the same time in one message, then goodbye.

        Batsim compares each job's submission time with the clock; when the clock stopped short of a group's
        time (a sleep ends up to a few nanoseconds early), each job of the group sleeps again first."""
        yield (SEND, (MSG_HELLO,))
        timeline = self._timeline
        current = timeline.now
        group: list[SimJob] = []
        for sim in self._static:  # job by job, as Batsim's loop: a group the clock stopped short of sleeps again
            subtime = sim.job.subtime
            if subtime > current:
                if group:
                    yield (SEND, (MSG_SUBMITTED, group))
                    group = []
                yield (SLEEP, long_double_difference(subtime, current))
                current = timeline.now
            group.append(sim)
        if group:
            yield (SEND, (MSG_SUBMITTED, group))
        yield (SEND, (MSG_BYE,))

    def _executor(self, sim: SimJob) -> Actor:
        """A job's execution: its delay, or its walltime when the delay reaches it."""
        duration, state = run_duration(sim)
        if duration > 0:
            yield (SLEEP, duration)
        self._end(sim, state)
        yield (SEND, (MSG_COMPLETED, sim))

    def _waiter(self, at: float) -> Actor:
        timeline = self._timeline
        if timeline.now < at:
            yield (SLEEP, max(at - timeline.now, _MIN_WAIT))
        if not self._end_sent:
            yield (SEND, (MSG_WAITED,))

    def _killer(self, job_ids: list[str]) -> Actor:
        killed = []
        for job_id in job_ids:
            sim = self.jobs[job_id]
            if sim.state == RUNNING:
                executor = self._executors[job_id]
                if executor.sleep is not None:
                    self._timeline.cancel(executor.sleep)
                executor.dead = True
                self._end(sim, KILLED)
                killed.append(sim)
        yield (SEND, (MSG_KILLED, job_ids, killed))

    # --- what the server does with what it receives --------------------------------

    def _on_submitted(self, message: tuple) -> None:
        now = stamp(self._timeline.now)
        self._active += len(message[1])
        for sim in message[1]:
            if sim.state is None:  # (not when rejected before)
                sim.state = ""
            self._recorded.append(JobSubmitted(now, sim.job))

    def _on_completed(self, message: tuple) -> None:
        self._completed(message[1])

    def _completed(self, sim: SimJob) -> None:
        """A job's end reported: its row is written, and the decision process will be told."""
        self._active -= 1
        self.rows.append(sim)
        self._recorded.append(JobCompleted(stamp(self._timeline.now), sim.job.id, sim.state))

    def _on_waited(self, message: tuple) -> None:
        self._waiters -= 1
        self._record(RequestedCall(stamp(self._timeline.now)))

    def _on_killed(self, message: tuple) -> None:
        self._killers -= 1
        now = stamp(self._timeline.now)
        self._active -= len(message[2])
        for sim in message[2]:
            self.rows.append(sim)
            self._record(JobCompleted(now, sim.job.id, KILLED))
        self._record(JobKilled(now, tuple(message[1])))

    def _on_bye(self, message: tuple) -> None:
        self._submitter_done = True
        self._record(NoMoreStaticJobs(stamp(self._timeline.now)))

    def _on_ready(self, message: tuple) -> None:
        self._ready = True

    def _on_decision(self, message: tuple) -> None:
        decision = message[1]
        if isinstance(decision, Execute):
            self._execute(decision)
        elif isinstance(decision, CallMeLater):
            if not decision.time > self._timeline.now:
                raise SimulationError(f"CALL_ME_LATER at {decision.time:g} is not after now "
                                      f"({stamp(self._timeline.now):g}): Batsim aborts ('You asked to be awaken "
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
                self._record(JobSubmitted(stamp(self._timeline.now), self.jobs[decision.job.id].job))
        elif isinstance(decision, RegistrationFinished):
            self._registration_finished = True
        elif not isinstance(decision, RegisterProfile):
            raise SimulationError(f"unsupported decision {type(decision).__name__}")

    def _record(self, event: Event) -> None:
        self._recorded.append(event)

    def _send_recorded(self) -> None:
        self._spawn(Exchange(self, self._take_recorded()))

    def _take_recorded(self) -> list[Event]:
        """What the server recorded, taken to be sent to the decision process (busy from then on)."""
        events, self._recorded = self._recorded, []
        self._ready = False
        return events

    def _call_decide(self, now: float, events: list[Event]) -> Sequence[Decision] | TimedReply:
        """The decision process told ``events`` at ``now``: its reply (its time and the message counted, the static
        jobs ended since the last call told to ``progress``)."""
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

    def _known(self, job_id: str, what: str) -> SimJob:
        try:
            return self.jobs[job_id]
        except KeyError:
            raise SimulationError(f"{what}: unknown job {job_id!r}") from None

    def _execute(self, decision: Execute) -> None:
        sim = self._start_job(decision)
        self._executors[decision.job_id] = self._spawn(self._executor(sim))

    def _run_job(self, decision: Execute) -> None:
        """EXECUTE_JOB in a plain exchange (:meth:`~batsim_classifier_scheduler.sim.fast_paths.Shortcuts._finish_exchange`): the job
        starts, and its executor begins its sleep at once, as it would first thing in the next round: nothing else
        runs or draws an action's number in between."""
        sim = self._start_job(decision)
        duration, state = run_duration(sim)  # (longer than 1e-6 s: the exchange is plain)
        executor = self._executors[decision.job_id] = Process(JobEnd(self, sim, state))
        executor.sleep = self._timeline.sleep(duration, executor)

    def _start_job(self, decision: Execute) -> SimJob:
        """EXECUTE_JOB checked and applied: the job runs on its machines from now."""
        sim = self.jobs.get(decision.job_id) or self._known(decision.job_id, "EXECUTE_JOB")
        job = sim.job
        if sim.state:
            raise SimulationError(f"EXECUTE_JOB: job {job.id!r} is {sim.state}, not waiting")
        if sim.state is None:
            raise SimulationError(f"EXECUTE_JOB: job {job.id!r} is not submitted yet")
        mask = decision.machines
        if mask.bit_count() != job.res:
            raise SimulationError(f"EXECUTE_JOB: job {job.id!r} requests {job.res} machines, "
                                  f"allocation '{decision.alloc}' has {mask.bit_count()}")
        if mask >> self.nb_machines:
            raise SimulationError(f"EXECUTE_JOB: job {job.id!r}: allocation '{decision.alloc}' exceeds the "
                                  f"{self.nb_machines} machines")
        if mask & self.free != mask:  # (not ``& ~``: on a large machine bit operations on negative integers cost more)
            raise SimulationError(f"EXECUTE_JOB: job {job.id!r}: machines of '{decision.alloc}' are busy")
        self.free ^= mask
        sim.mask, sim.start, sim.state = mask, stamp(self._timeline.now), RUNNING
        return sim

    def _plain(self, decision: Decision) -> bool:
        """Whether ``decision`` only starts a sleep longer than 1e-6 s, or nothing (see :class:`Exchange`)."""
        kind = decision.__class__
        if kind is Execute:
            sim = self.jobs.get(decision.job_id)
            return sim is not None and run_duration(sim)[0] > 1e-6
        return kind is not Kill

    def _end(self, sim: SimJob, state: str) -> None:
        """A job ends (its executor's time is up, or a killer killed it): its machines are free."""
        sim.state, sim.finish = state, stamp(self._timeline.now)
        del self._executors[sim.job.id]  # (it only ends now)
        self.free |= sim.mask
        sim.mask = kept_allocation(sim.mask)  # (a large machine's mask would keep kilobytes per job: a string)
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
            if job_id in self._kill_requested:
                continue  # Batsim drops repeated kills silently
            if sim.state != RUNNING and sim.state in (None, "", REJECTED):
                raise SimulationError(f"KILL_JOB: job {job_id!r} is "
                                      f"{'waiting' if not sim.state else sim.state}, not running")
            self._kill_requested.add(job_id)
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
        self.jobs[job.id] = SimJob(registered, state="")  # Batsim submits it as it reads it

    def _register_profile(self, decision: RegisterProfile) -> None:
        what = f"REGISTER_PROFILE {decision.workload}!{decision.name}"
        if not self.options.enable_dynamic_jobs:
            raise SimulationError(f"{what}: dynamic jobs are disabled (Batsim needs --enable-dynamic-jobs)")
        key = (decision.workload, decision.name)
        if key in self._registered_profiles or self._profile_exists(key):
            raise SimulationError(f"{what}: the profile already exists (Batsim aborts on duplicates)")
        self._registered_profiles[key] = float(decision.delay)

    def _profile_exists(self, key: tuple[str, str]) -> bool:
        if key[0] != self.workload.name:
            return False
        if self._static_profiles is None:  # (most runs register no profile)
            self._static_profiles = set(map(str, self.workload.column("profile")))
        return key[1] in self._static_profiles


class Exchange:
    """Batsim's request-reply actor: one exchange with the decision process, then its decisions sent to
    the server one by one, each at its timestamp (Batsim sleeps until then), and READY at the reply's
    ``now``. It runs as an actor (:meth:`send`, as a generator's); a *plain* exchange, whose decisions
    only start jobs and sleeps longer than 1e-6 s, at their own time, can be finished without rounds
    (:meth:`~batsim_classifier_scheduler.sim.fast_paths.Shortcuts._finish_exchange`)."""

    __slots__ = ("engine", "events", "pending", "plain")

    def __init__(self, engine: BatsimActors, events: list[Event] | None) -> None:
        """``events`` to tell the decision process; ``None`` when it was told already (the engine, which had it
        reply at once, gives the reply to :meth:`queue`)."""
        self.engine, self.events = engine, events
        self.pending: deque[tuple[float, tuple]] = deque()
        self.plain = False

    def send(self, answer: Any) -> tuple:
        timeline = self.engine._timeline
        if self.events is not None:
            self.call()
        if not self.pending:
            raise StopIteration
        at, message = self.pending[0]
        if at > timeline.now:
            return (SLEEP, at - timeline.now)
        return (SEND, self.next_message())

    def next_message(self) -> tuple:
        """The next message to the server, its decision registered first if it registers a job or profile."""
        message = self.pending.popleft()[1]
        if message[0] is MSG_DECISION:
            decision = message[1]
            if isinstance(decision, RegisterJob):
                self.engine._register(decision.job)
            elif isinstance(decision, RegisterProfile):
                self.engine._register_profile(decision)
        return message

    def call(self) -> None:
        """The exchange itself: the decision process is told the events and replies (:meth:`queue`)."""
        engine = self.engine
        now = stamp(engine._timeline.now)
        events, self.events = self.events, None
        self.queue(engine._call_decide(now, events), now)

    def queue(self, reply: Sequence[Decision] | TimedReply, now: float) -> None:
        """The decision process's reply, told at ``now``: its decisions and READY queued, each at its time (after
        SIMULATION_ENDS, READY alone)."""
        engine = self.engine
        pending = self.pending
        if engine._end_sent:
            pending.append((now, (MSG_READY,)))
            return
        if isinstance(reply, TimedReply):
            timed, ready_at = reply.decisions, reply.now
        else:
            timed, ready_at = [(now, decision) for decision in reply], now
        plain = ready_at <= now
        for at, decision in timed:
            pending.append((at, (MSG_DECISION, decision)))
            plain = plain and at <= now and engine._plain(decision)
        pending.append((ready_at, (MSG_READY,)))
        self.plain = plain


class JobEnd:
    """A job's executor whose sleep began (:meth:`BatsimActors._run_job`), as an actor: when its sleep is over, the job
    ends and the executor reports it, its last call. Not a generator, so that a whole cycle
    (:meth:`~batsim_classifier_scheduler.sim.fast_paths.Shortcuts._completion_cycle`) can read its job and do the same."""

    __slots__ = ("engine", "sim", "state", "reported")

    def __init__(self, engine: BatsimActors, sim: SimJob, state: str) -> None:
        self.engine, self.sim, self.state, self.reported = engine, sim, state, False

    def send(self, answer: Any) -> tuple:
        """Its one call (as a generator's ``send``): the job ends, and the executor reports it."""
        if self.reported:
            raise StopIteration
        self.end()
        return (SEND, (MSG_COMPLETED, self.sim))

    def end(self) -> None:
        """The job ends, its report about to be sent (its last call)."""
        self.reported = True
        self.engine._end(self.sim, self.state)


def long_double_difference(later: float, earlier: float) -> float:
    """``later - earlier`` computed in long doubles, as Batsim computes its submitter's sleeps, then rounded to a
    double: the plain difference when it is exact (Fast2Sum's error term is zero), else through numpy."""
    difference = later - earlier
    if abs(later) >= abs(earlier) and (-earlier) - (difference - later) == 0.0:
        return difference
    return float(np.longdouble(later) - np.longdouble(earlier))


def _ignore(message: tuple) -> None:
    """A message the server only acknowledges (the submitter's hello)."""
