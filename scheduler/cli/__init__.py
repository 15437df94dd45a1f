"""Command-line entry point: ``python -m scheduler <subcommand>``.

Each module of this package registers its subcommands with ``register(subparsers)``
and sets ``func(args) -> int`` on its parser. Errors of the project's own types are
printed as one line, without a traceback.
"""

from __future__ import annotations

import argparse
import importlib
import sys

from scheduler import __version__
from scheduler.errors import SchedulerError

#: Subcommand modules, in the order ``--help`` lists them.
COMMAND_MODULES = ("simulate", "batsim", "workloads", "experiments")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m scheduler",
        description="Batsim-compatible batch scheduler with online job runtime classification.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        importlib.import_module(f"scheduler.cli.{name}").register(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except SchedulerError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # e.g. piped into `head`
        sys.stderr.close()
        return 0
