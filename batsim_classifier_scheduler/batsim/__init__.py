"""Batsim's side of the world: the JSON protocol (:mod:`.protocol`, its wire format in :mod:`.wire`)
and the ZeroMQ server (:mod:`.server`)."""

from batsim_classifier_scheduler.batsim.batsim_codec import BatsimCodec
from batsim_classifier_scheduler.batsim.scheduler_codec import SchedulerCodec

__all__ = ["BatsimCodec", "SchedulerCodec"]
