"""The options of Slurm accounting input (``sacct --parsable2``), shared by ``convert`` and ``simulate``."""

from __future__ import annotations

import argparse

from batsim_classifier_scheduler.cli.options import flag_type
from batsim_classifier_scheduler.errors import UsageError
from batsim_classifier_scheduler.workloads import FORMATS, workload_format
from batsim_classifier_scheduler.workloads.sacct_fields import SacctOptions, parse_field_list

#: The flags of this group, as ``--help`` names them, with their defaults.
DEFAULTS = {"sacct_fields": None, "sacct_submit": "submit", "unit": "cpus", "partition": None,
            "keep_user_names": False}


def add_sacct_options(group: argparse.ArgumentParser | argparse._ArgumentGroup) -> None:
    """Add ``--format`` and sacct's options (docs/slurm.md) to a parser or one of its groups."""
    group.add_argument("--format", choices=FORMATS,
                       help="the workload's format (default: by its name, or sacct's by its header)")
    group.add_argument("--sacct-fields", type=flag_type(parse_field_list), metavar="F,F...",
                       help="the fields of a sacct file without a header (sacct -n), as sacct's --format takes them")
    group.add_argument("--sacct-submit", choices=("submit", "eligible"), default="submit",
                       help="a job's submission: its Submit or its Eligible time (default submit)")
    group.add_argument("--unit", choices=("cpus", "nodes"), default="cpus",
                       help="jobs and the machine in processors or nodes (default cpus)")
    group.add_argument("--partition", type=flag_type(_names), metavar="NAME[,NAME...]",
                       help="keep only these partitions' jobs")
    group.add_argument("--keep-user-names", action="store_true",
                       help="write users and groups by name (default: numbered)")


def sacct_options(args: argparse.Namespace, workload: str) -> tuple[str, SacctOptions | None]:
    """The workload's format and, for sacct output, how to read it. sacct's options given for another
    format are a :class:`UsageError`."""
    options = SacctOptions(fields=args.sacct_fields, submit=args.sacct_submit, unit=args.unit,
                           partitions=args.partition, keep_names=args.keep_user_names)
    kind = args.format or workload_format(workload, options)
    if kind == "sacct" and getattr(args, "skip_bad_lines", False):
        raise UsageError("--skip-bad-lines drops malformed SWF lines; a sacct file's bad line is always an error")
    if kind != "sacct":
        given = [name for name, default in DEFAULTS.items() if getattr(args, name) != default]
        if given:
            flag = "--" + given[0].replace("_", "-")
            raise UsageError(f"{flag} reads Slurm accounting (sacct) output; {workload} is read as {kind}")
        return kind, None
    return kind, options


def _names(text: str) -> tuple[str, ...]:
    names = tuple(name.strip() for name in text.split(","))
    if not all(names):
        raise ValueError(f"expected partition names separated by commas, got {text!r}")
    return names
