"""Whether the command may end its process without the interpreter's teardown.

At exit, the interpreter frees every object still alive one by one (a simulation's job records, its workload, its
tables): 5 to 8% of the CPU of a ``simulate`` command on KTH-SP2, which a sweep pays again in every child. A
command whose every output is written and closed when it returns says so with :func:`skip_teardown`; then
``python -m batsim_classifier_scheduler`` flushes the standard streams and ends the process at once (``os._exit``). ``serve`` does
once its socket's context is terminated (which waits for the last reply to leave); commands that still hold a socket
(``batsim-peer``: a last reply may still be queued) or a pool of processes do not.
"""

from __future__ import annotations

_skip = False


def skip_teardown() -> None:
    """The command running leaves nothing to do at exit but freeing memory."""
    global _skip
    _skip = True


def teardown_skipped() -> bool:
    """Whether :func:`skip_teardown` was called."""
    return _skip
