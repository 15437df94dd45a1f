"""Workload and platform subcommands: ``convert``, ``platform``, ``fetch-trace``, ``generate``."""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

from batsim_classifier_scheduler import __version__
from batsim_classifier_scheduler.cli import workload_argument
from batsim_classifier_scheduler.cli.sacct_options import add_sacct_options, sacct_options
from batsim_classifier_scheduler.cli.options import (
    count_flag,
    flag_type,
    integer_text,
    machines_flag,
    number_flag,
    number_text,
    positive_integer,
    positive_number,
    seed_flag,
)
from batsim_classifier_scheduler.errors import WorkloadError
from batsim_classifier_scheduler.util.output_files import check_distinct, check_output
from batsim_classifier_scheduler.platforms import write_platform
from batsim_classifier_scheduler.workloads import CleaningRules, convert_swf, write_batsim_json
from batsim_classifier_scheduler.workloads.archive import CACHE_ENV, TRACES, fetch_trace
from batsim_classifier_scheduler.workloads.synthetic import MAX_JOBS, MAX_LOAD, generate


def register(subparsers: argparse._SubParsersAction) -> None:
    convert = subparsers.add_parser(
        "convert", help="convert an SWF trace or Slurm accounting into a Batsim JSON workload",
        description="Read, clean and convert an SWF trace (.swf or .swf.gz) or a cluster's Slurm accounting "
                    "(sacct --parsable2 output, docs/slurm.md) into a Batsim JSON workload, and print what the "
                    "cleaning rules did.")
    convert.add_argument("trace", help="SWF trace (.swf, .swf.gz), sacct --parsable2 output, or a trace's name or "
                                        "file name in the trace cache (see fetch-trace)")
    convert.add_argument("-o", "--output", required=True, metavar="JSON",
                         help="Batsim workload to write (.json, or .json.gz to compress)")
    convert.add_argument("--platform-out", metavar="XML", help="also write a matching SimGrid platform")
    convert.add_argument("--nb-res", type=machines_flag, metavar="N",
                         help="machine size (default: the paper's for a known trace, else MaxProcs)")
    convert.add_argument("--skip-bad-lines", action="store_true", help="drop (and count) malformed lines")
    convert.add_argument("--missing-walltime", default="trace-max", type=_missing_walltime, metavar="RULE",
                         help="walltime of jobs without a requested time: 'trace-max' (default: the "
                              "largest request or runtime, rounded up to the hour), 'none' (-1), or seconds")
    convert.add_argument("--over-request", choices=("raise", "drop"), default="raise",
                         help="jobs that ran past their request: raise the walltime to the runtime "
                              "(default) or drop them")
    convert.add_argument("--walltime-pad", type=pad_flag, default=0.0, metavar="S",
                         help="seconds added to a walltime raised to the runtime (default 0)")
    add_sacct_options(convert)
    convert.set_defaults(func=run_convert)

    platform = subparsers.add_parser(
        "platform", help="write a homogeneous SimGrid platform",
        description="Write a SimGrid 4.1 platform: N compute hosts plus a master host.")
    platform.add_argument("--nb-res", type=machines_flag, required=True, metavar="N",
                          help="number of compute hosts")
    platform.add_argument("-o", "--output", required=True, metavar="XML", help="platform file to write")
    platform.add_argument("--name", help="machine name, in the file's comment")
    platform.set_defaults(func=run_platform)

    fetch = subparsers.add_parser(
        "fetch-trace", help="download a trace of the paper from the Parallel Workloads Archive",
        description="Download a trace of the paper (once) into the cache and print its path.")
    fetch.add_argument("name", nargs="?", help=f"trace name: {', '.join(TRACES)}")
    fetch.add_argument("--list", action="store_true", help="list the known traces")
    fetch.add_argument("--cache-dir", metavar="DIR",
                       help=f"cache directory (default: ${CACHE_ENV}, else $XDG_CACHE_HOME/batsim-classifier-scheduler, "
                            "else ~/.cache/batsim-classifier-scheduler)")
    fetch.add_argument("--force", action="store_true", help="download again even if cached")
    fetch.add_argument("--no-verify", action="store_true", help="do not check size and SHA-256")
    fetch.add_argument("--partition", type=flag_type(integer_text), metavar="P",
                       help="MetaCentrum2-zegox: the SWF partition number of zegox (default: from "
                            "the header, else 9)")
    fetch.set_defaults(func=run_fetch)

    gen = subparsers.add_parser(
        "generate", help="generate a synthetic Batsim workload",
        description="Generate a seeded synthetic workload: users with habits, over-estimated "
                    "requests, daily and weekly rhythms.")
    gen.add_argument("--jobs", type=jobs_flag, default=3000,
                     help=f"number of jobs, at most {MAX_JOBS:,} (default 3000)")
    gen.add_argument("--weeks", type=number_flag, default=4.0, help="submission period in weeks (default 4)")
    gen.add_argument("--nb-res", type=machines_flag, default=128, help="machine size (default 128)")
    gen.add_argument("--seed", type=seed_flag, default=0, help="random seed, in [0, 2**32) (default 0)")
    gen.add_argument("--users", type=count_flag, help="number of users (default: sqrt(jobs))")
    gen.add_argument("--load", type=load_flag, default=0.7,
                     help=f"offered load: total work / (machine size x period), in (0, {MAX_LOAD:g}] (default 0.7)")
    gen.add_argument("-o", "--output", required=True, metavar="JSON", help="Batsim workload to write")
    gen.add_argument("--platform-out", metavar="XML", help="also write a matching SimGrid platform")
    gen.set_defaults(func=run_generate)


def run_convert(args: argparse.Namespace) -> int:
    args.trace = workload_argument(args.trace)
    kind, sacct = sacct_options(args, args.trace)
    if kind == "json":
        raise WorkloadError(f"{args.trace}: expected an SWF trace (.swf or .swf.gz) or sacct --parsable2 output")
    check_output(args.output, "--output")
    if args.platform_out:
        check_output(args.platform_out, "--platform-out")
    check_distinct([("--output", args.output), ("--platform-out", args.platform_out)], [("the trace", args.trace)])
    rules = CleaningRules(missing_walltime=args.missing_walltime, over_request=args.over_request,
                          walltime_pad=args.walltime_pad)
    if sacct is not None:
        from batsim_classifier_scheduler.workloads.sacct import convert_sacct

        workload, report = convert_sacct(args.trace, options=sacct, nb_res=args.nb_res, cleaning=rules)
    else:
        workload, report = convert_swf(args.trace, nb_res=args.nb_res, cleaning=rules,
                                       skip_bad_lines=args.skip_bad_lines)
    description = (f"Converted from {Path(args.trace).name} by batsim-classifier-scheduler "
                   f"{__version__} ({rules}{f', {sacct}' if sacct else ''})")
    print(report.format())
    print(f"wrote {write_batsim_json(workload, args.output, description=description)}")
    if args.platform_out:
        print(f"wrote {write_platform(args.platform_out, workload.nb_res, name=Path(args.trace).name)}")
    return 0


def run_platform(args: argparse.Namespace) -> int:
    check_output(args.output, "--output")
    print(f"wrote {write_platform(args.output, args.nb_res, name=args.name)}")
    return 0


def run_fetch(args: argparse.Namespace) -> int:
    if args.list:
        print(trace_list(TRACES.values()))
        return 0
    if not args.name:
        raise WorkloadError("fetch-trace: give a trace name, or --list")
    print(fetch_trace(args.name, cache_dir=args.cache_dir, force=args.force,
                      verify=not args.no_verify, partition=args.partition))
    return 0


def trace_list(traces) -> str:
    """The catalogue as a table: name, processors, archive file, download size ("–": unknown), note."""
    rows = [("trace", "processors", "file", "size", "note")]
    for trace in traces:
        size = (f"{trace.size / 1e6:.1f} MB" if trace.size else
                f"about {trace.approx_size / 1e6:.0f} MB" if trace.approx_size else "–")
        rows.append((trace.name, str(trace.nb_res), trace.file, size, trace.note or "–"))
    widths = [max(len(row[i]) for row in rows) for i in range(4)]
    return "\n".join(f"{name:<{widths[0]}}  {procs:>{widths[1]}}  {file:<{widths[2]}}  {size:>{widths[3]}}  {note}"
                     for name, procs, file, size, note in rows)


def run_generate(args: argparse.Namespace) -> int:
    check_output(args.output, "--output")
    if args.platform_out:
        check_output(args.platform_out, "--platform-out")
    check_distinct([("--output", args.output), ("--platform-out", args.platform_out)], [])
    if args.jobs >= 100_000:  # a million take about 20 s: say what is going on
        print(f"generating {args.jobs:,} jobs, then writing {args.output}", file=sys.stderr, flush=True)
    workload = generate(args.jobs, args.weeks, args.nb_res, seed=args.seed, n_users=args.users,
                        load=args.load)
    print(f"wrote {write_batsim_json(workload, args.output, description=workload.source)}")
    if args.platform_out:
        print(f"wrote {write_platform(args.platform_out, workload.nb_res, name='synthetic')}")
    return 0


pad_flag = flag_type(lambda text: _non_negative(number_text(text)))
jobs_flag = flag_type(lambda text: _at_most(positive_integer(integer_text(text)), MAX_JOBS, "positive integer"))
load_flag = flag_type(lambda text: _at_most(positive_number(number_text(text)), MAX_LOAD, "positive number"))


def _at_most(value: float, bound: float, what: str) -> float:
    if value > bound:
        raise ValueError(f"expected a {what} up to {bound:,}, got {value!r}")
    return value


def _non_negative(value: float) -> float:
    if not 0 <= value < math.inf:
        raise ValueError(f"expected a number of seconds >= 0, got {value!r}")
    return value


def _missing_walltime(text: str) -> str | float:
    if text in ("trace-max", "none"):
        return text
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected 'trace-max', 'none' or seconds, got {text!r}") from None
    if not 0 < value < math.inf:
        raise argparse.ArgumentTypeError(f"expected 'trace-max', 'none' or positive seconds, got {text}")
    return value
