"""Batsim's request-reply actor: one exchange with the decision process, and its decisions sent to the server."""

from __future__ import annotations

from collections import deque
from typing import TYPE_CHECKING, Any, Sequence

from scheduler.core.events import Decision, Event, RegisterJob, RegisterProfile
from scheduler.sim.records import MSG_DECISION, MSG_READY, SEND, SLEEP, TimedReply, stamp

if TYPE_CHECKING:
    from scheduler.sim.engine import BatsimEngine


class Exchange:
    """Batsim's request-reply actor: one exchange with the decision process, then its decisions sent to
    the server one by one, each at its timestamp (Batsim sleeps until then), and READY at the reply's
    ``now``. It runs as an actor (:meth:`send`, as a generator's); a *plain* exchange, whose decisions
    only start jobs and sleeps longer than 1e-6 s, at their own time, can be finished without rounds
    (:meth:`BatsimEngine._finish_exchange`)."""

    __slots__ = ("engine", "events", "pending", "plain")

    def __init__(self, engine: BatsimEngine, events: list[Event] | None) -> None:
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
