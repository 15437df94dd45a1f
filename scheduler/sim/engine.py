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

This module is the driver (SimGrid's main loop, the exchanges with the decision process, the
``_jobs.csv`` table); the actors and the server are :mod:`scheduler.sim.actors`, the request-reply actor
:mod:`scheduler.sim.exchange`, the records they share :mod:`scheduler.sim.records`.
"""

from __future__ import annotations

import time
from collections import deque
from itertools import starmap
from typing import Callable, Sequence

from scheduler.core.events import (
    Decision,
    Event,
    Execute,
    RegisterJob,
    RegisterProfile,
    SimulationEnds,
)
from scheduler.core.job import Job
from scheduler.core.machines import full_mask
from scheduler.cyclic_gc import cyclic_gc_paused
from scheduler.errors import SimulationError
from scheduler.sim.actors import BatsimActors, JobEnd
from scheduler.sim.exchange import Exchange
from scheduler.sim.jobs_table import jobs_columns
from scheduler.sim.records import (
    LAST_MESSAGES,
    MSG_DECISION,
    MSG_READY,
    MSG_SUBMITTED,
    RUNNING,
    SEND,
    Actor,
    DecideFunction,
    Process,
    SimJob,
    SimulationOptions,
    SimulationResult,
    TimedReply,
    stamp,
)
from scheduler.sim.simgrid import MESSAGE_TIME, Timeline
from scheduler.workloads.model import Workload

__all__ = ["BatsimEngine", "DecideFunction", "SimulationOptions", "SimulationResult", "TimedReply"]

#: The request-reply actor's last message of an exchange.
_READY = (MSG_READY,)


class BatsimEngine(BatsimActors):
    """Drives a decision process through a whole workload.

    With :attr:`shortcuts` (the default), what can only happen one way is done without SimGrid's round
    bookkeeping: an actor that runs alone while the server waits and no sleep is about to end, with the step of
    its message (:meth:`_run_alone`); a reporter's end; a plain exchange's decisions (:meth:`_send_at_once` from its
    reply, :meth:`_finish_exchange` from its queue; a job's executor begins its sleep at once, :meth:`_run_job`);
    a sleep that ends alone (:meth:`Timeline.jump`). While nothing else is under way, a sleep that ends alone
    starts a whole cycle in one call (:meth:`_cycles`): a job's end, its report and the exchange it starts
    (:meth:`_completion_cycle`), or the submitter's report, its next sleep and the exchange
    (:meth:`_submission_cycle`); whatever else happens falls back to the general actors. Without the shortcuts
    every actor goes through the rounds: the reference they are tested against (``tests/test_engine_shortcuts.py``).
    """

    #: Whether the run takes the shortcuts (a class attribute, so that a test can run both ways).
    shortcuts = True

    def __init__(self, workload: Workload, nb_machines: int | None = None,
                 options: SimulationOptions | None = None) -> None:
        self.workload = workload
        self.nb_machines = int(nb_machines or workload.nb_res)
        self.options = options or SimulationOptions()
        self.free = full_mask(self.nb_machines)
        self.jobs: dict[str, SimJob] = {}
        self.rows: list[SimJob] = []  # the jobs in the order their _jobs.csv rows are written
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
        fields = workload.job_fields()
        jobs = starmap(Job, zip(ids, subtimes, map(int, workload.column("res")), map(float, workload.column("walltime")),
                                profiles, runtimes, fields))
        sims = list(map(SimJob, jobs, runtimes))
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
        self._timeline = Timeline(shortcuts=self.shortcuts)
        self._to_run: list[Process] = []
        self._mailbox: deque[tuple[Process, tuple]] = deque()
        self._receiving = False  # the server waits for a message
        self._in_flight: tuple[int, Process, tuple] | None = None  # (seq, sender, message) of the message sent
        self._in_flight_left = 0.0
        self._recorded: list[Event] = []  # what the server will send the decision process next
        self._ready = False  # the decision process waits for a message
        self._end_sent = self._done = False
        self._submitter_done = self._registration_finished = False
        self._waiters = self._killers = 0
        self._active = 0  # jobs submitted and not done (completed, killed or rejected)
        self._messages, self._deciding, self._reported = 0, 0.0, 0
        with cyclic_gc_paused():  # in process (simulate) or over the socket (batsim-peer) alike; the table too
            self._submitter_process = self._spawn(self._submitter())
            self._start_server()
            self._maestro()
            unfinished = [job_id for job_id, sim in self.jobs.items() if sim.state in ("", RUNNING)]
            result = SimulationResult(self._jobs_columns(), self.nb_machines, self._end_time, self._messages,
                                      unfinished, self._deciding, self.options.flags())
        self._release()
        return result

    def _release(self) -> None:
        """The run is over: drop what it made. The actors, the server's handlers and the engine hold one another in
        cycles, which the cyclic collector, paused for the whole command, would keep with every job record."""
        self._handlers = self._decide = self._progress = None
        self._to_run, self._static, self.rows = [], [], []
        self._mailbox.clear()
        self._timeline = Timeline()
        self.jobs = {}

    def _maestro(self) -> None:
        """SimGrid's main loop: every actor ready to run runs until it blocks, then their calls are handled
        in the order they ran; when none is ready, the clock moves one step."""
        timeline, mailbox, sleep_for = self._timeline, self._mailbox, self._timeline.sleep
        shortcuts, followed = self.shortcuts, timeline.followed
        while not self._done:
            while self._to_run:
                if shortcuts and len(self._to_run) <= 2 and self._receiving and not followed and not self._done:
                    if len(self._to_run) == 1:
                        self._run_alone(self._to_run.pop())  # the common case, without a round's bookkeeping
                        continue
                    if self._sleeps_before_exchange():
                        continue  # the exchange is left to run alone (or in a round of its own)
                ran, self._to_run = self._to_run, []
                for process in ran:
                    if not process.dead and process.call is None:  # (a call already taken: its body ran)
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
                    if call[0] is SEND:
                        if self._receiving:
                            self._receiving = False
                            self._start_sending(process, call[1])
                        else:
                            mailbox.append((process, call[1]))
                    else:
                        process.sleep = sleep_for(call[1], process)
            if self._done:
                break
            if shortcuts and self._cycles():
                continue
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
            if self.shortcuts and len(ended) == 1 and self._receiving and not timeline.followed and not self._to_run:
                self._cycle(ended[0].owner)  # it runs alone next (see _maestro): at once
                return
        to_run = self._to_run
        if arrived:
            self._in_flight = None
            if not ended:  # the common case: only the message arrived
                if self.shortcuts:
                    self._arrived_alone(in_flight[1], in_flight[2])
                else:
                    to_run.append(in_flight[1])
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

    def _cycles(self) -> bool:
        """Whole cycles, one after the other, while the engine is quiet (no actor to run, no message in flight, the
        server waiting, no sleep about to end) and the next sleep to end ends alone (:meth:`_cycle`); whether any
        ran. The first cycle that leaves the engine otherwise hands back to :meth:`_maestro`."""
        timeline, ran = self._timeline, False
        while (self._in_flight is None and self._receiving and not self._to_run and not timeline.followed
               and not self._done):
            sleep = timeline.jump_alone()
            if sleep is None:
                break
            self._cycle(sleep.owner)
            ran = True
        return ran

    def _cycle(self, process: Process) -> None:
        """An actor whose sleep ended alone, the engine quiet: it runs alone, in a whole cycle when it has one."""
        process.sleep = None
        if process.actor.__class__ is JobEnd:
            self._completion_cycle(process)
        elif process is self._submitter_process:
            self._submission_cycle(process)
        else:
            self._run_alone(process)

    def _run_alone(self, process: Process) -> None:
        """A round in which ``process`` runs alone, the server waiting and no sleep about to end, then the step
        of the message it sends, which arrives alone: as :meth:`_maestro` and :meth:`_step` would take them."""
        if process.dead:
            return
        actor = process.actor
        if actor.__class__ is Exchange and actor.events is not None:  # a fresh exchange: it calls the decision process
            events, actor.events = actor.events, None
            self._exchange_alone(events, process)
            return
        try:
            call = actor.send(None)
        except StopIteration:
            process.dead = True
            return
        self._call_alone(process, call)

    def _call_alone(self, process: Process, call: tuple) -> None:
        """The call of an actor that ran alone: a sleep begins, or a message takes its step alone and arrives."""
        if call[0] is SEND:
            self._receiving = False
            self._timeline.lone_message_step()
            self._arrived_alone(process, call[1])
        else:
            process.sleep = self._timeline.sleep(call[1], process)

    def _exchange_alone(self, events: list[Event], process: Process | None) -> None:
        """A fresh exchange running alone (``process``, or one made only if needed): the decision process is told
        ``events``. A plain reply whose decisions all apply at once, at a time the clock has reached, is sent from
        the reply (:meth:`_send_at_once`); a plain one with a queue is finished from it (:meth:`_finish_exchange`);
        any other goes on as the actor it is."""
        clock = self._timeline.now
        now = stamp(clock)
        reply = self._call_decide(now, events)
        if (now <= clock and not self._end_sent and not isinstance(reply, TimedReply)
                and all(map(self._plain, reply))):
            self._send_at_once(reply)
            if process is not None:
                process.dead = True
            return
        if process is None:
            process = Process(Exchange(self, None))
        exchange = process.actor
        exchange.queue(reply, now)
        if exchange.plain and exchange.pending[0][0] <= self._timeline.now:  # its first message is sent at once,
            self._finish_exchange(process)  # and arrives alone: the rest of a plain exchange follows (_arrived_alone)
            return
        self._call_alone(process, exchange.send(None))

    def _completion_cycle(self, executor: Process) -> None:
        """A job's executor (its actor a :class:`JobEnd`) whose sleep ended alone, the server waiting: the whole
        cycle, as :meth:`_run_alone` takes it: the job ends, its report takes its step and arrives alone, the server
        records it and, when the decision process is ready, sends it what it recorded, and that exchange runs alone."""
        executor.actor.end()
        executor.dead = True
        self._timeline.lone_message_step()
        self._completed(executor.actor.sim)  # (the server's _on_completed)
        if self._ready:  # (its mailbox is empty: it was waiting)
            self._exchange_alone(self._take_recorded(), None)

    def _submission_cycle(self, submitter: Process) -> None:
        """The submitter, its sleep ended alone, the server waiting: the whole cycle, as :meth:`_run_alone` and
        :meth:`_sleeps_before_exchange` take it. Its jobs' report takes its step and arrives alone, and the server
        records them; when the decision process is ready, the server sends it what it recorded, and the submitter
        and that exchange share a round: the submitter begins its next sleep and the exchange runs alone (its
        goodbye instead: the round is played)."""
        call = submitter.actor.send(None)
        if call[0] is not SEND or call[1][0] is not MSG_SUBMITTED:  # it sleeps again (the clock stopped short)
            self._call_alone(submitter, call)
            return
        self._timeline.lone_message_step()
        self._on_submitted(call[1])
        if not self._ready:  # (its mailbox is empty: it was waiting)
            self._run_alone(submitter)
            return
        call = submitter.actor.send(None)
        if call[0] is SEND:  # its goodbye: the round is played, its call taken (_sleeps_before_exchange leaves it)
            submitter.call = call
            self._to_run.append(submitter)
            self._send_recorded()
            return
        submitter.sleep = self._timeline.sleep(call[1], submitter)
        if self._timeline.followed:  # a sleep about to end: the exchange runs in a round
            self._send_recorded()
            return
        self._exchange_alone(self._take_recorded(), None)

    def _sleeps_before_exchange(self) -> bool:
        """A round of two actors, the second a fresh exchange (the submitter, its report served, and the exchange
        the server then started): if the first only begins a sleep, begin it and leave the exchange to run next.

        Exact: in the round, the first actor runs, then the exchange, then the first's sleep begins, then the
        exchange's call is handled. The exchange's body (the call to the decision process) reads neither the
        sleeps nor the sequence of actions (beginning a sleep leaves the clock as it is), so beginning the sleep
        before it runs changes nothing, and the exchange's call is handled after the sleep, as in the round. When
        the first actor does anything else, the round is played as usual (its call kept for the round)."""
        first, second = self._to_run
        if second.actor.__class__ is not Exchange or second.actor.events is None or first.dead or first.call:
            return False
        try:
            call = first.actor.send(first.answer)
        except StopIteration:
            first.dead, first.answer = True, None
            self._to_run.pop(0)
            return True
        first.answer = None
        if call[0] is SEND:
            first.call = call
            return False
        first.sleep = self._timeline.sleep(call[1], first)
        self._to_run.pop(0)
        return True

    def _arrived_alone(self, sender: Process, message: tuple) -> None:
        """A message arrived in a step in which nothing else happened: the server serves it; its sender runs
        next, unless its report was its last call (it would only end), or it is a plain exchange, whose rest
        :meth:`_finish_exchange` takes."""
        if message[0] in LAST_MESSAGES:
            sender.dead = True
            self._serve(message)
        elif sender.actor.__class__ is Exchange and sender.actor.plain and not self._timeline.followed:
            self._serve(message)
            self._finish_exchange(sender)
        else:
            self._to_run.append(sender)
            self._serve(message)

    def _send_at_once(self, decisions: Sequence[Decision]) -> None:
        """A fresh plain exchange running alone whose decisions all apply at once (a list reply, the clock at its
        time): its messages, each decision then READY, as :meth:`_finish_exchange` sends them from the queue the
        exchange would have made. (Nothing changes what that loop checks between them: a decision is not READY.)"""
        timeline = self._timeline
        for decision in decisions:
            kind = decision.__class__
            if kind is Execute and not self._to_run:  # the common case, as _lone_message takes it
                timeline.lone_message_step()
                self._run_job(decision)
                continue
            if kind is RegisterJob:  # (as the exchange's next_message: registered before the message is sent)
                self._register(decision.job)
            elif kind is RegisterProfile:
                self._register_profile(decision)
            self._lone_message((MSG_DECISION, decision))
        if self._to_run:  # READY, as _lone_message takes it
            self._begin_sleeps()
        timeline.lone_message_step()
        self._ready = True  # (READY served: _serve, without its handler)
        self._served()

    def _lone_message(self, message: tuple) -> None:
        """One message of a plain exchange, in a step of its own: the actors the previous decision started begin
        their sleeps, the message's step is taken, and the server handles it (until READY the decision process is
        busy: serving a decision is applying it, and the server then waits again, its mailbox empty)."""
        if self._to_run:
            self._begin_sleeps()
        # the message's own action began before these sleeps; its number, drawn after theirs here, is never
        # compared with anything (it ends in this step, alone), and theirs keep their order with every other
        self._timeline.lone_message_step()
        if message[0] is MSG_DECISION:
            if message[1].__class__ is Execute:
                self._run_job(message[1])
            else:
                self._on_decision(message)
        else:
            self._serve(message)

    def _begin_sleeps(self) -> None:
        """The actors the last decision of a plain exchange started begin their sleeps (the only call they make)."""
        timeline, to_run = self._timeline, self._to_run
        while to_run:
            started = to_run.pop(0)
            started.sleep = timeline.sleep(started.actor.send(None)[1], started)

    def _finish_exchange(self, process: Process) -> None:
        """The rest of a plain exchange (:attr:`Exchange.plain`), step by step as :meth:`_maestro` would take
        it, without its rounds: nothing else can happen meanwhile. Each decision reaches the server in its
        own step, after the actors the previous one started have begun their sleeps. Until READY, the decision
        process is busy: serving a decision is applying it (the server then waits again, its mailbox empty)."""
        exchange, pending = process.actor, process.actor.pending
        while not self._done and pending and not self._mailbox and self._receiving:
            self._lone_message(exchange.next_message())
        if pending:
            self._to_run.insert(0, process)  # what is left goes through the rounds
        else:
            process.dead = True

    def _start_sending(self, sender: Process, message: tuple) -> None:
        self._in_flight = (self._timeline.next_seq(), sender, message)
        self._in_flight_left = MESSAGE_TIME

    def _spawn(self, actor: Actor) -> Process:
        process = Process(actor)
        self._to_run.append(process)
        return process

    def _deadlock(self) -> None:
        """Nothing can happen any more, and Batsim has not ended the simulation: why."""
        if self.options.enable_dynamic_jobs and not self._registration_finished:
            raise SimulationError("dynamic jobs are enabled but the scheduler never sent NOTIFY "
                                  "registration_finished: Batsim would wait forever")
        # the decision process leaves jobs waiting forever: end here, and report them as unfinished
        self._end_time = stamp(self._timeline.now)
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

    # --- output --------------------------------------------------------------------

    def _jobs_columns(self) -> dict[str, list]:
        """One row per job, in the order Batsim writes them (:func:`~scheduler.sim.jobs_table.jobs_columns`)."""
        return jobs_columns(self.rows)


def _first_duplicate(values: list) -> object:
    """The first value that comes again."""
    seen = set()
    for value in values:
        if value in seen:
            return value
        seen.add(value)
    return None
