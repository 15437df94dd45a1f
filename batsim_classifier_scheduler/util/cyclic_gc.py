"""Pausing Python's cyclic garbage collector while a run builds objects that it keeps."""

from __future__ import annotations

import gc
from contextlib import contextmanager
from typing import Iterator


@contextmanager
def cyclic_gc_paused() -> Iterator[None]:
    """Pause Python's cyclic garbage collector (reference counting still frees what is no longer used).

    A simulation makes a few objects per job (the job, its events and decisions, its queue and profile
    entries) that mostly live until the end of the run; the collector scans them again and again,
    which costs about a tenth of the run, and finds next to nothing to free (a classifier run leaves
    about a thousand cycles, collected when it ends).
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
