"""The embedded engine's shortcuts: what can only happen one way, done without SimGrid's round bookkeeping.

:class:`~batsim_classifier_scheduler.sim.engine.BatsimEngine`'s main loop (``_maestro``, ``_step``) hands these methods whatever
they can take; each does exactly what the rounds would, in the same order, so that the decision process gets
the same messages at the same times (``tests/test_engine_shortcuts.py`` runs both ways and compares).
"""

from __future__ import annotations

from typing import Sequence

from batsim_classifier_scheduler.core.messages import Decision, Event, Execute, RegisterJob, RegisterProfile
from batsim_classifier_scheduler.sim.actors import BatsimActors, Exchange, JobEnd
from batsim_classifier_scheduler.sim.engine_types import (LAST_MESSAGES, MSG_DECISION, MSG_SUBMITTED, SEND, Process,
                                                          TimedReply, stamp)


class Shortcuts(BatsimActors):
    """The shortcuts of :class:`~batsim_classifier_scheduler.sim.engine.BatsimEngine`, a base of it (which holds the state they
    read and runs them when its :attr:`~batsim_classifier_scheduler.sim.engine.BatsimEngine.shortcuts` are on).

    An actor that runs alone while the server waits and no sleep is about to end runs with the step of its message
    (:meth:`_run_alone`); a reporter's end; a plain exchange's decisions (:meth:`_send_at_once` from its reply,
    :meth:`_finish_exchange` from its queue; a job's executor begins its sleep at once,
    :meth:`~batsim_classifier_scheduler.sim.actors.BatsimActors._run_job`); a sleep that ends alone
    (:meth:`~batsim_classifier_scheduler.sim.simgrid.Timeline.jump`). While nothing else is under way, a sleep that ends alone
    starts a whole cycle in one call (:meth:`_cycles`): a job's end, its report and the exchange it starts
    (:meth:`_completion_cycle`), or the submitter's report, its next sleep and the exchange
    (:meth:`_submission_cycle`); whatever else happens falls back to the general actors.
    """

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
