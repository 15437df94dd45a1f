"""``batsim-peer``: the embedded engine playing Batsim's side of the socket.

It connects a ZeroMQ REQ socket to a decision process (ours, batsched, pybatsim...),
sends it the engine's messages encoded exactly as Batsim 4.2.1 does, and applies its
decoded replies with the engine's rules. The outputs are Batsim's ``_jobs.csv`` and
``_schedule.csv``.
"""

from __future__ import annotations

from typing import Callable, Sequence

import zmq

from batsim_classifier_scheduler.batsim.batsim_codec import BatsimCodec
from batsim_classifier_scheduler.core.messages import KILLED, Event
from batsim_classifier_scheduler.errors import ProtocolError
from batsim_classifier_scheduler.sim.engine import BatsimEngine, SimulationOptions, SimulationResult, TimedReply
from batsim_classifier_scheduler.workloads.model import Workload


class RemoteDecisionProcess:
    """``decide(now, events)`` answered by a decision process over a REQ socket, with Batsim's
    clock (the reply's ``now`` and each decision's timestamp)."""

    def __init__(self, endpoint: str, codec: BatsimCodec, timeout: float | None = None) -> None:
        self.endpoint = endpoint
        self.codec = codec
        self.timeout = timeout
        self.socket = zmq.Context.instance().socket(zmq.REQ)
        self.socket.setsockopt(zmq.LINGER, 0)
        if timeout:
            self.socket.setsockopt(zmq.RCVTIMEO, int(timeout * 1000))
        self.socket.connect(endpoint)

    def __call__(self, now: float, events: Sequence[Event]) -> TimedReply:
        self.socket.send(self.codec.encode(now, events))
        try:
            reply = self.socket.recv()
        except zmq.Again:
            hint = ": is a scheduler listening there? (--timeout S; 0 waits forever)" if self.codec.messages == 1 else ""
            raise ProtocolError(f"no reply from the scheduler at {self.endpoint} within {self.timeout:g} s "
                                f"(message {self.codec.messages}){hint}") from None
        return TimedReply(*self.codec.decode_timed(reply))

    def close(self) -> None:
        self.socket.close()


def run_peer(workload: Workload, endpoint: str, nb_machines: int | None = None,
             host_names: Sequence[str] | None = None, options: SimulationOptions | None = None,
             timeout: float | None = None, progress: Callable[[int], None] | None = None) -> SimulationResult:
    """Simulate ``workload`` with the decision process listening at ``endpoint``."""
    engine = BatsimEngine(workload, nb_machines, options)
    remote = RemoteDecisionProcess(endpoint, batsim_codec(engine, host_names), timeout)
    try:
        return engine.run(remote, progress)
    finally:
        remote.close()


def batsim_codec(engine: BatsimEngine, host_names: Sequence[str] | None = None) -> BatsimCodec:
    """Batsim's side of the protocol for ``engine``'s simulation: its workload, profiles, allocations and
    the progress of killed jobs."""
    workload = engine.workload
    return BatsimCodec(
        host_names=list(host_names)[: engine.nb_machines] if host_names is not None else None,
        workloads={workload.name: str(workload.source or "")},
        profiles={workload.name: workload_profiles(workload)},
        alloc_of=lambda job_id: engine.jobs[job_id].mask,
        progress_of=lambda job_id: _progress(engine, job_id),
    )


def workload_profiles(workload: Workload) -> dict[str, dict]:
    """The ``delay`` profiles of a workload, as Batsim lists them in SIMULATION_BEGINS."""
    table = workload.jobs[["profile", "runtime"]].drop_duplicates("profile")
    return {str(name): {"type": "delay", "delay": float(delay)} for name, delay in zip(table.profile, table.runtime)}


def _progress(engine: BatsimEngine, job_id: str) -> float | None:
    sim = engine.jobs[job_id]
    if sim.state != KILLED or sim.runtime <= 0:
        return None
    return min((sim.finish - sim.start) / sim.runtime, 1.0)
