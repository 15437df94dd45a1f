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
(:mod:`batsim_classifier_scheduler.sim.simgrid`); the steps' rounding decides which events due at the same time end in
the same step, hence in the same message. Actors are generators yielding SimGrid's blocking calls
(send a message, receive one, sleep), run in SimGrid's order: every actor ready to run runs until it
blocks, then the calls are handled in the order the actors ran; then the clock moves one step.

Times given to the decision process are rounded to 6 decimals, as Batsim prints them. Every decision
is validated: an impossible one raises :class:`SimulationError` naming the job, where Batsim aborts.

This module is the driver (the run's set-up, SimGrid's main loop and clock, the ``_jobs.csv`` table); the
shortcuts it takes are :mod:`batsim_classifier_scheduler.sim.fast_paths`, the actors and the server (the request-reply actor among
them) :mod:`batsim_classifier_scheduler.sim.actors`, the records they share :mod:`batsim_classifier_scheduler.sim.engine_types`.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from itertools import starmap
from typing import Callable, TypeVar

from batsim_classifier_scheduler.core.messages import Event, SimulationEnds
from batsim_classifier_scheduler.core.job import Job
from batsim_classifier_scheduler.core.machines import full_mask
from batsim_classifier_scheduler.util.cyclic_gc import cyclic_gc_paused
from batsim_classifier_scheduler.errors import SimulationError
from batsim_classifier_scheduler.sim.engine_types import (
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
from batsim_classifier_scheduler.sim.fast_paths import Shortcuts
from batsim_classifier_scheduler.sim.simgrid import MESSAGE_TIME, Timeline
from batsim_classifier_scheduler.workloads.model import Workload

__all__ = ["BatsimEngine", "DecideFunction", "SimulationOptions", "SimulationResult", "TimedReply"]

T = TypeVar("T")


class BatsimEngine(Shortcuts):
    """Drives a decision process through a whole workload.

    With :attr:`shortcuts` (the default), what can only happen one way is done without SimGrid's round
    bookkeeping (:class:`~batsim_classifier_scheduler.sim.fast_paths.Shortcuts`). Without them every actor goes through the rounds:
    the reference they are tested against (``tests/test_engine_shortcuts.py``).
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
        self._static_profiles: set[str] | None = None  # the workload's profile names, once a registration asks
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
        profiles = _shared(map(str, workload.column("profile")))
        runtimes = _shared(map(float, workload.column("runtime")))
        walltimes = _shared(map(float, workload.column("walltime")))
        fields = workload.job_fields()
        jobs = starmap(Job, zip(ids, subtimes, map(int, workload.column("res")), walltimes, profiles, runtimes, fields))
        sims = list(map(SimJob, jobs))
        self.jobs = dict(zip(ids, sims))
        self._static = [sim for _, _, sim in sorted(zip(subtimes, ids, sims))]  # ids are unique: sims never compared

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
        self._executors: dict[str, Process] = {}  # the running jobs' executors, by job id
        self._kill_requested: set[str] = set()  # the jobs a KILL_JOB named (Batsim drops repeated kills)
        self._messages, self._deciding, self._reported = 0, 0.0, 0
        with cyclic_gc_paused():  # in process (simulate) or over the socket (batsim-peer) alike
            self._submitter_process = self._spawn(self._submitter())
            self._start_server()
            self._maestro()
            unfinished = [job_id for job_id, sim in self.jobs.items() if sim.state in (None, "", RUNNING)]
            result = SimulationResult(self.rows, self.nb_machines, self._end_time, self._messages,
                                      unfinished, self._deciding, self.options.flags())
        self._release()  # (the result keeps the rows)
        return result

    def _release(self) -> None:
        """The run is over: drop what it made. The actors, the server's handlers and the engine hold one another in
        cycles, which the cyclic collector, paused for the whole command, would keep with every job record."""
        self._handlers = self._decide = self._progress = None
        self._to_run, self._static, self.rows = [], [], []
        self._mailbox.clear()
        self._executors = {}
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


def _shared(values: Iterable[T]) -> list[T]:
    """The values, equal ones as one object: most jobs share their runtime, walltime and profile with others (a
    float is 24 bytes, a name 60)."""
    first: dict[T, T] = {}
    return [first.setdefault(value, value) for value in values]


def _first_duplicate(values: list) -> object:
    """The first value that comes again."""
    seen = set()
    for value in values:
        if value in seen:
            return value
        seen.add(value)
    return None
