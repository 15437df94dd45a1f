"""One exception type per layer. Messages name the input (file, line, message, field)."""

import inspect
from typing import Any


class SchedulerError(Exception):
    """Base class: the CLI prints these as one line, without a traceback, and exits non-zero."""

    def __str__(self) -> str:
        """The message on one line: a control character from the input (a newline in a job id) escaped."""
        text = super().__str__()
        return text if text.isprintable() else "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


class WorkloadError(SchedulerError):
    """A trace or workload file is missing, malformed or inconsistent."""


class PlatformError(SchedulerError):
    """A SimGrid platform file is missing or malformed."""


class ConfigError(SchedulerError):
    """A scheduling option or configuration file is invalid."""


class UsageError(ConfigError):
    """A mistake on the command line: a flag's value, or flags that do not go together. The CLI exits 2 on
    it, as on argparse's own errors; every other error exits 1 (README, "Exit codes")."""


class InputFormatError(UsageError, WorkloadError):
    """A workload not in the format the command line says it is: sacct output whose header, fields or times are
    not sacct's. One line naming the file, the line and the field; exit 2, as a command-line mistake, since the mend
    is to say how to read it (``--format``, ``--sacct-fields``, ``SLURM_TIME_FORMAT``)."""


class PluginError(ConfigError):
    """A plug-in's file or module, named by an option, cannot be found or loaded: an input problem (exit 1)
    even when the option came from the command line."""


class ProtocolError(SchedulerError):
    """A Batsim message breaks the protocol."""


class SimulationError(SchedulerError):
    """A decision cannot be applied (impossible allocation, unknown job, ...)."""


class OutputError(SchedulerError):
    """A result cannot be written where it was asked to go."""


def error_text(exc: BaseException) -> str:
    """An exception on one line, with the file and line of a syntax error."""
    if isinstance(exc, SyntaxError):
        return f"SyntaxError: {exc.msg}, line {exc.lineno}"
    return f"{type(exc).__name__}: {exc}"


def describe(target: Any) -> str:
    """What ``target`` is, for an error: ``class X``, ``function f``, ``a float``."""
    if inspect.isclass(target):
        return f"class {target.__name__}"
    if inspect.isfunction(target):
        return f"function {target.__name__}"
    return f"a {type(target).__name__}"
