"""Command-line entry point: ``python -m batsim_classifier_scheduler <subcommand>``.

Each module of this package registers its subcommands with ``register(subparsers)``
and sets ``func(args) -> int`` on its parser. Only the module of the command being run is
imported (``serve`` needs none of what ``simulate`` or ``report`` import). Every error is one
line, without a traceback: a mistake on the command line names the option and what it accepts,
and exits 2 (argparse's own errors, and :class:`~batsim_classifier_scheduler.errors.UsageError` from the checks that
need more than one flag); any other error of the project's own types exits 1 (README, "Exit codes").
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from typing import Callable, NoReturn

from batsim_classifier_scheduler import __version__
from batsim_classifier_scheduler.errors import SchedulerError, UsageError

#: Subcommand modules and the commands each registers, in the order ``--help`` lists them.
COMMANDS = {
    "simulate": ("simulate",),
    "batsim": ("serve", "batsim-peer"),
    "workloads": ("convert", "platform", "fetch-trace", "generate"),
    "experiments": ("sweep", "report"),
}


class Parser(argparse.ArgumentParser):
    """argparse, with its errors in the CLI's style: one line, ``error: COMMAND: argument --OPTION: why``,
    without the usage (``--help`` shows it); exit code 2. Subcommands' parsers are of this class too.
    ``help_extra``, when set, gives what ``--help`` adds after the usual text, from the command line's
    arguments (the options of the plug-ins they name)."""

    help_extra: Callable[[list[str]], str] | None = None
    _given: list[str] = []

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        # an option without a type takes text, but never empty text: `-e ''` and `-o ''` name no file
        # (an option that means something by '' says type=str)
        self.register("type", None, non_empty)

    def parse_known_args(self, args=None, namespace=None):
        self._given = list(sys.argv[1:] if args is None else args)
        return super().parse_known_args(args, namespace)

    def format_help(self) -> str:
        text = super().format_help()
        return text + self.help_extra(self._given) if self.help_extra else text

    def error(self, message: str) -> NoReturn:
        command = self.prog.removeprefix(PROG).strip()
        self.exit(2, f"error: {command + ': ' if command else ''}{message} (see {self.prog} --help)\n")


#: The console script's name (pyproject.toml's [project.scripts]).
CONSOLE_SCRIPT = "batsim-classifier-scheduler"


def program_name() -> str:
    """How the user calls the program: the console script by its name, else ``python -m`` the package."""
    script = os.path.basename(sys.argv[0]) if sys.argv and sys.argv[0] else ""
    return CONSOLE_SCRIPT if script == CONSOLE_SCRIPT else f"python -m {__name__.partition('.')[0]}"


PROG = program_name()


def non_empty(text: str) -> str:
    """The ``type`` of text options: any text but the empty one."""
    if not text:
        raise argparse.ArgumentTypeError("expected a value, got ''")
    return text


def workload_argument(given: str) -> str:
    """The file a command's workload argument names (:func:`batsim_classifier_scheduler.workloads.workload_path`: a path, or a
    trace's name or file name found in the trace cache); said on stderr when it is not the path given."""
    from batsim_classifier_scheduler.workloads import workload_path

    path = str(workload_path(given))
    if path != given:
        print(f"{given}: reading {path}", file=sys.stderr, flush=True)
    return path


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser of every subcommand, or of the module that registers ``command`` only."""
    parser = Parser(
        prog=PROG,
        description="Batsim-compatible batch scheduler with online job runtime classification.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    subparsers.type = str  # it sees the command's arguments too: the command's parser checks them
    modules = [module for module, commands in COMMANDS.items() if command in commands] or list(COMMANDS)
    for module in modules:
        importlib.import_module(f"batsim_classifier_scheduler.cli.{module}").register(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    # The scheduler does no linear algebra: numpy's OpenBLAS need not start a thread per core when it is
    # imported (40 to 60 ms of CPU per command on two cores). The environment may still ask for more.
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    argv = sys.argv[1:] if argv is None else argv
    parser = build_parser(next((arg for arg in argv if not arg.startswith("-")), None))
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except UsageError as exc:  # a command-line mistake found after parsing: as argparse's own errors
        print(f"error: {args.command}: {exc} (see {PROG} {args.command} --help)", file=sys.stderr)
        return 2
    except SchedulerError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt as stop:  # a command may say what it leaves behind
        print(f"interrupted: {stop}" if str(stop) else "interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # e.g. piped into `head`
        sys.stderr.close()
        return 0
