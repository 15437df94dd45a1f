"""Batsim's side of the world: the JSON protocol (:mod:`.protocol`, its wire format in :mod:`.wire`)
and the ZeroMQ server (:mod:`.server`)."""

from scheduler.batsim.protocol import BatsimCodec, SchedulerCodec

__all__ = ["BatsimCodec", "SchedulerCodec"]
