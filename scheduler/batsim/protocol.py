"""Batsim 4.2.1's JSON protocol: its two codecs, by the names the rest of the package imports.

- :class:`SchedulerCodec` (:mod:`scheduler.batsim.scheduler_codec`): our decision process's side;
- :class:`BatsimCodec` (:mod:`scheduler.batsim.batsim_codec`): our embedded Batsim peer's side;
- what both check, and the messages of each direction: :mod:`scheduler.batsim.rules`.
"""

from scheduler.batsim.batsim_codec import BatsimCodec
from scheduler.batsim.scheduler_codec import SchedulerCodec

__all__ = ["BatsimCodec", "SchedulerCodec"]
