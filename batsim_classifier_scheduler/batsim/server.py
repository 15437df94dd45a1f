"""The ZeroMQ decision process: Batsim connects, we answer every message with decisions.

A thin shell: each message is decoded by :class:`SchedulerCodec`, handed to the same
:class:`DecisionCore` that ``simulate`` uses, and the decisions are encoded back.

Every message gets its reply, even one we cannot handle: on any error the reply is
:meth:`SchedulerCodec.encode_error` (a NOTIFY that makes Batsim abort at once, with our
error in its log) and the error is raised again, so that neither side waits forever.
"""

from __future__ import annotations

import logging
import statistics
import time
from dataclasses import dataclass, field, replace
from typing import Any

import zmq

from batsim_classifier_scheduler.batsim.scheduler_codec import SchedulerCodec
from batsim_classifier_scheduler.compose import build_core
from batsim_classifier_scheduler.config import SchedulerConfig
from batsim_classifier_scheduler.core.messages import SimulationBegins
from batsim_classifier_scheduler.util.cyclic_gc import cyclic_gc_paused
from batsim_classifier_scheduler.core.decision import DecisionCore
from batsim_classifier_scheduler.errors import ProtocolError, SchedulerError

log = logging.getLogger(__name__)

DEFAULT_ENDPOINT = "tcp://*:28000"


@dataclass
class ServeStats:
    """What happened during one served simulation."""

    messages: int = 0
    latencies: list[float] = field(default_factory=list)  # seconds spent deciding, per message
    core: DecisionCore | None = None
    #: The run's config: Batsim's sched-config, then the server's options (:func:`config_at_begin`).
    config: SchedulerConfig | None = None

    def latency_percentiles(self) -> dict[str, float]:
        if len(self.latencies) < 2:
            return {"median": sum(self.latencies), "p99": sum(self.latencies)}
        return {"median": statistics.median(self.latencies),
                "p99": statistics.quantiles(self.latencies, n=100, method="inclusive")[98]}


def config_at_begin(event: SimulationBegins, options: dict[str, Any], overrides: dict[str, Any]) -> SchedulerConfig:
    """The run's config: Batsim's ``sched-config``, then ``options``, then explicit ``overrides``. A
    classifier without a time zone takes the trace's from the workload file Batsim names, when this
    process can read it, as ``simulate`` takes it from the workload it reads."""
    source = "Batsim's sched-config"
    merged = SchedulerConfig.check_options(
        SchedulerConfig.parse_options(event.config.get("sched-config") or "", source), source)
    merged.update(options)
    merged.update({k: v for k, v in overrides.items() if v is not None})
    config = SchedulerConfig.from_dict(merged, "scheduling options")
    if config.classifier != "none" and config.timezone is None and event.workloads:
        timezone = workload_file_timezone(event.workloads)
        if timezone is not None:
            config = replace(config, timezone=timezone)
    return config


def workload_file_timezone(workloads: dict[str, str]) -> str | float | None:
    """The time zone in the header of the first of ``workloads`` (name -> path) that has one; None when no
    file says (or none can be read here: the temporal features are then in UTC, as the log says)."""
    from batsim_classifier_scheduler.knowledge.features import timezone_from_header
    from batsim_classifier_scheduler.workloads.batsim_json import read_header

    for name, path in workloads.items():
        try:
            timezone = timezone_from_header(read_header(path))
        except SchedulerError as exc:
            log.warning("workload %s: %s; the classifier's temporal features are in UTC (give --timezone)", name, exc)
            continue
        if timezone is not None:
            log.info("workload %s: time zone %s, from %s", name, timezone, path)
            return timezone
    return None


def error_text(error: BaseException) -> str:
    """How an error is told to Batsim (and so in its log): ours as they are, others by type."""
    if isinstance(error, SchedulerError):
        return f"scheduler error: {error}"
    return f"scheduler error: {type(error).__name__}: {error}"


class DecisionServer:
    """Answers one Batsim simulation over a REP socket."""

    def __init__(self, endpoint: str = DEFAULT_ENDPOINT, options: dict[str, Any] | None = None,
                 overrides: dict[str, Any] | None = None, timeout: float | None = None) -> None:
        self.endpoint = endpoint
        self.options = options or {}
        self.overrides = overrides or {}
        self.timeout = timeout

    def run(self) -> ServeStats:
        """Bind the endpoint and serve until SIMULATION_ENDS has been answered. When it returns, the last reply
        has been handed to Batsim's side of the connection (or could not be within a second): the socket's own
        context is terminated, which waits for it."""
        context = zmq.Context()
        socket = context.socket(zmq.REP)
        socket.setsockopt(zmq.LINGER, 1000)  # let the last reply (maybe an error) reach Batsim
        try:
            try:
                socket.bind(self.endpoint)
            except zmq.ZMQError as exc:
                raise ProtocolError(f"cannot bind {self.endpoint}: {exc}") from None
            log.info("listening on %s", self.endpoint)
            with cyclic_gc_paused():  # the decision core keeps what it is told of every job, as a simulation
                return self.serve(socket)
        finally:
            socket.close()
            context.term()

    def serve(self, socket: zmq.Socket) -> ServeStats:
        """Answer the messages of a bound REP ``socket`` until SIMULATION_ENDS has been answered."""
        if self.timeout:
            socket.setsockopt(zmq.RCVTIMEO, int(self.timeout * 1000))
        codec = SchedulerCodec()
        stats = ServeStats()
        latencies = stats.latencies
        core = None
        while True:
            try:
                message = socket.recv()
            except zmq.Again:
                if not stats.messages:
                    raise ProtocolError(f"no Batsim connected to {self.endpoint} within {self.timeout:g} s "
                                        "(--timeout S; 0 waits forever)") from None
                raise ProtocolError(f"no message from Batsim for {self.timeout:g} s "
                                    f"(message {stats.messages + 1}): did it stop?") from None
            started = time.perf_counter()
            try:
                now, events = codec.decode(message)
                if core is None:
                    stats.config = self._config(events, stats.messages)
                    core = stats.core = build_core(stats.config)
                reply = codec.encode(now, core.decide(now, events))
            except BaseException as error:
                socket.send(codec.encode_error(error_text(error), message))
                raise
            latencies.append(time.perf_counter() - started)
            socket.send(reply)
            stats.messages += 1
            if codec.ended:  # (SIMULATION_ENDS answered)
                return stats

    def _config(self, events: list, index: int) -> SchedulerConfig:
        """The run's config, from the first message (it must carry SIMULATION_BEGINS)."""
        begins = next((e for e in events if isinstance(e, SimulationBegins)), None)
        if begins is None:
            raise ProtocolError(f"message {index + 1}: the first message must carry SIMULATION_BEGINS")
        return config_at_begin(begins, self.options, self.overrides)
