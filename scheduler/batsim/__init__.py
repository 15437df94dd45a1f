"""Batsim's side of the world: the JSON protocol (:mod:`.protocol`) and the ZeroMQ server."""

from scheduler.batsim.protocol import BatsimCodec, SchedulerCodec

__all__ = ["BatsimCodec", "SchedulerCodec"]
