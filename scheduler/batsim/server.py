"""The ZeroMQ decision process: Batsim connects, we answer every message with decisions.

A thin shell: each message is decoded by :class:`SchedulerCodec`, handed to the same
:class:`DecisionCore` that ``simulate`` uses, and the decisions are encoded back.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import zmq

from scheduler.batsim.protocol import SchedulerCodec
from scheduler.config import SchedulerConfig
from scheduler.core.events import SimulationBegins, SimulationEnds
from scheduler.decision import DecisionCore
from scheduler.errors import ProtocolError

log = logging.getLogger(__name__)

DEFAULT_ENDPOINT = "tcp://*:28000"


@dataclass
class ServeStats:
    """What happened during one served simulation."""

    messages: int = 0
    latencies: list[float] = field(default_factory=list)  # seconds spent deciding, per message
    core: DecisionCore | None = None

    def latency_percentiles(self) -> dict[str, float]:
        if not self.latencies:
            return {"median": 0.0, "p99": 0.0}
        values = np.asarray(self.latencies)
        return {"median": float(np.median(values)), "p99": float(np.percentile(values, 99))}


def config_at_begin(event: SimulationBegins, options: dict[str, Any], overrides: dict[str, Any]) -> SchedulerConfig:
    """The run's config: Batsim's ``sched-config``, then ``options``, then explicit ``overrides``."""
    source = "Batsim's sched-config"
    merged = SchedulerConfig.check_options(
        SchedulerConfig.parse_options(event.config.get("sched-config") or "", source), source)
    merged.update(options)
    merged.update({k: v for k, v in overrides.items() if v is not None})
    return SchedulerConfig.from_dict(merged, "scheduling options")


class DecisionServer:
    """Answers one Batsim simulation over a REP socket."""

    def __init__(self, endpoint: str = DEFAULT_ENDPOINT, options: dict[str, Any] | None = None,
                 overrides: dict[str, Any] | None = None, timeout: float | None = None) -> None:
        self.endpoint = endpoint
        self.options = options or {}
        self.overrides = overrides or {}
        self.timeout = timeout

    def run(self) -> ServeStats:
        """Serve until SIMULATION_ENDS has been answered."""
        context = zmq.Context.instance()
        socket = context.socket(zmq.REP)
        socket.setsockopt(zmq.LINGER, 1000)
        if self.timeout:
            socket.setsockopt(zmq.RCVTIMEO, int(self.timeout * 1000))
        try:
            socket.bind(self.endpoint)
        except zmq.ZMQError as exc:
            socket.close()
            raise ProtocolError(f"cannot bind {self.endpoint}: {exc}") from None
        log.info("listening on %s", self.endpoint)
        try:
            return self._loop(socket)
        finally:
            socket.close()

    def _loop(self, socket: zmq.Socket) -> ServeStats:
        codec = SchedulerCodec()
        stats = ServeStats()
        while True:
            try:
                raw = socket.recv()
            except zmq.Again:
                raise ProtocolError(f"no message from Batsim for {self.timeout:g} s "
                                    f"(message {stats.messages + 1}): did it stop?") from None
            started = time.perf_counter()
            now, events = codec.decode(raw)
            if stats.core is None:
                stats.core = self._make_core(events, stats.messages)
            reply = codec.encode(now, stats.core.decide(now, events))
            stats.latencies.append(time.perf_counter() - started)
            socket.send_string(reply)
            stats.messages += 1
            if any(isinstance(event, SimulationEnds) for event in events):
                return stats

    def _make_core(self, events: list, index: int) -> DecisionCore:
        begins = next((e for e in events if isinstance(e, SimulationBegins)), None)
        if begins is None:
            raise ProtocolError(f"message {index + 1}: the first message must carry SIMULATION_BEGINS")
        return DecisionCore(config_at_begin(begins, self.options, self.overrides))
