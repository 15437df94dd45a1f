"""``simulate``: run a whole trace on the embedded simulator and print a results table, or compare variants."""

from __future__ import annotations

import argparse
import gc
import sys
import time
from collections import Counter
from contextlib import nullcontext
from pathlib import Path
from typing import Callable

from batsim_classifier_scheduler.cli import workload_argument
from batsim_classifier_scheduler.cli.layout import console_width
from batsim_classifier_scheduler.cli.options import (add_scheduling_options, config_from_args, machines_flag,
                                                     seconds_flag)
from batsim_classifier_scheduler.cli.sacct_options import add_sacct_options, sacct_options
from batsim_classifier_scheduler.cli.results_table import format_comparison, format_table, written_lines
from batsim_classifier_scheduler.compose import input_files, warm_up
from batsim_classifier_scheduler.config import SchedulerConfig
from batsim_classifier_scheduler.config.variants import VARIANTS, label, resolve
from batsim_classifier_scheduler.cli.teardown import skip_teardown
from batsim_classifier_scheduler.util.cyclic_gc import cyclic_gc_paused
from batsim_classifier_scheduler.errors import ConfigError, UsageError
from batsim_classifier_scheduler.util.output_files import check_distinct, check_output, check_outputs, prefixed
from batsim_classifier_scheduler.sim.results import RESULT_SUFFIXES, run_summary, write_results
from batsim_classifier_scheduler.core.decision import Outcome
from batsim_classifier_scheduler.sim.engine import SimulationOptions, SimulationResult
from batsim_classifier_scheduler.sim.simulate import simulate
from batsim_classifier_scheduler.util.values import DEFAULT_TAU
from batsim_classifier_scheduler.workloads import load_workload
from batsim_classifier_scheduler.workloads.model import Workload


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "simulate",
        help="simulate a workload (SWF or Batsim JSON) with the embedded Batsim engine",
        description="Simulate a whole workload on the embedded Batsim 4.2.1-compatible engine; with several "
                    "variants, compare them side by side (every option with its details: docs/options.md).",
        usage="%(prog)s WORKLOAD [options]",
    )
    parser.add_argument("workload", help="SWF trace, Batsim JSON workload, sacct --parsable2 output (docs/slurm.md), "
                                         "or a cached trace's name (fetch-trace)")
    group = add_scheduling_options(parser, several_variants=True)["run"]
    size = group.add_mutually_exclusive_group()
    size.add_argument("--platform", metavar="XML", help="SimGrid platform: its hosts set the machine size")
    size.add_argument("--nb-res", type=machines_flag, metavar="N",
                      help="machine size (default: the workload's nb_res)")
    group.add_argument("--tau", type=seconds_flag, default=DEFAULT_TAU, metavar="S",
                     help=f"bounded-slowdown threshold in seconds (default {DEFAULT_TAU:g})")
    group.add_argument("--output-prefix", "-e", metavar="P",
                     help="write P_jobs.csv, P_schedule.csv, P_summary.json (P_VARIANT_...)")
    group.add_argument("--skip-bad-lines", action="store_true", help="drop (and count) malformed SWF lines")
    group.add_argument("--save-model", metavar="FILE", help="save the trained classifier (for serve --model FILE)")
    group.add_argument("--no-progress", action="store_true", help="no progress bar")
    group.add_argument("--acknowledge-dynamic-jobs", action="store_true",
                     help="as Batsim run with this flag")
    add_sacct_options(group)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    with cyclic_gc_paused():  # the workload and each run's objects are kept until the command ends
        code = _run(args)
    skip_teardown()  # (every file is written and closed: see batsim_classifier_scheduler.cli.teardown)
    return code


def _run(args: argparse.Namespace) -> int:
    variants = variant_names(args.variant)
    args.workload = workload_argument(args.workload)
    if args.save_model and len(variants) > 1:
        raise UsageError("--save-model saves the classifier of one run: give a single --variant")
    configs = {label(name) if name else None: config_from_args(argparse.Namespace(**{**vars(args), "variant": name}))
               for name in variants or [None]}
    prefixes = {name: run_prefix(args.output_prefix, name, len(configs)) for name in configs}
    check_locations(args, configs, prefixes)
    kind, sacct = sacct_options(args, args.workload)
    workload = load_workload(args.workload, skip_bad_lines=args.skip_bad_lines, format=kind, sacct=sacct,
                             nb_res=args.nb_res if sacct else None)
    if workload.cleaning:
        print(workload.cleaning.format(), flush=True)
    nb_machines = args.nb_res or workload.nb_res
    if args.platform:
        from batsim_classifier_scheduler.platforms import read_platform

        nb_machines = read_platform(args.platform).nb_compute_hosts
    summaries, written = {}, []
    try:
        for name, config in configs.items():
            summaries[name], paths = run_one(workload, config, nb_machines, args, prefixes[name], label=name)
            written.append(paths)
    except KeyboardInterrupt as stop:
        if len(configs) > 1:
            raise KeyboardInterrupt(interrupted(list(configs), list(summaries), args.output_prefix, stop)) from None
        raise
    width = console_width()
    print(format_table(*summaries.values(), width) if len(summaries) == 1 else format_comparison(summaries, width))
    wrote = written_lines(written, width)
    if wrote:
        print("\n" + "\n".join(wrote))
    return 0


def interrupted(variants: list[str], finished: list[str], prefix: str | None, stop: KeyboardInterrupt) -> str:
    """What an interrupted run of several variants leaves: which variants' files are whole, and that the
    interrupted one's are not there (:func:`write_whole`)."""
    current = variants[len(finished)]
    said = f"during variant {current} ({len(finished) + 1} of {len(variants)})"
    if not prefix:
        return f"{said}; no file written (no --output-prefix)"
    whole = (f"the files of {', '.join(finished)} are complete ({prefix}_VARIANT_jobs.csv, ...)" if finished
             else "no variant's files were written")
    return f"{said}: {whole}; {str(stop) or f'those of {current} were not written'}"


def write_whole(prefix: str, result: SimulationResult, summary: dict, outcome: Outcome) -> list[Path]:
    """:func:`write_results`, all or nothing: stopped or failed once it has replaced a file, it removes the
    run's files (those of an earlier run with the same prefix too: that set is half replaced)."""
    paths = [prefixed(prefix, suffix) for suffix in RESULT_SUFFIXES]
    paths += [prefixed(prefix, f"_{name}.csv") for name in outcome.reports]
    before = {path: _identity(path) for path in paths}
    try:
        return write_results(prefix, result, summary, outcome)
    except BaseException as stop:
        replaced = any(_identity(path) != before[path] for path in paths)
        if replaced:
            for path in paths:
                path.unlink(missing_ok=True)
        if isinstance(stop, KeyboardInterrupt) and replaced:
            raise KeyboardInterrupt(f"the half-written files of {prefix} were removed") from None
        raise


def _identity(path: Path) -> tuple[int, int] | None:
    """A file's inode and modification time (a file written atomically gets a new one), or None."""
    try:
        status = path.stat()
    except OSError:
        return None
    return status.st_ino, status.st_mtime_ns


def run_prefix(prefix: str | None, variant: str | None, runs: int) -> str | None:
    """The output prefix of one run: ``P``, or ``P_VARIANT`` when several variants run."""
    return f"{prefix}_{variant}" if prefix and runs > 1 else prefix


def check_locations(args: argparse.Namespace, configs: dict[str | None, SchedulerConfig],
                    prefixes: dict[str | None, str | None]) -> None:
    """Fail before any work when an output cannot be written or a classifier cannot be saved."""
    for prefix in filter(None, prefixes.values()):
        check_outputs([prefixed(prefix, suffix) for suffix in RESULT_SUFFIXES], "--output-prefix")
    if args.save_model:
        if all(config.classifier == "none" for config in configs.values()):
            raise UsageError("--save-model needs a classifier (--classifier rf or a --variant with one)")
        check_output(args.save_model, "--save-model")
    outputs = [("--output-prefix", prefixed(prefix, suffix)) for prefix in filter(None, prefixes.values())
               for suffix in RESULT_SUFFIXES]
    inputs = [("the workload", args.workload), ("--platform", args.platform), ("--config", args.config)]
    inputs += [("the scheduler's input", path) for config in configs.values() for path in input_files(config)]
    check_distinct([*outputs, ("--save-model", args.save_model)], inputs)


def variant_names(text: str | None) -> list[str]:
    """The variants named by ``--variant`` (comma-separated, or ``all``); none when the option is absent."""
    if text is None:
        return []
    names = list(VARIANTS) if text.strip() == "all" else [name.strip() for name in text.split(",") if name.strip()]
    if not names:
        raise UsageError(f"argument --variant: empty variant list; give one or more of {', '.join(VARIANTS)}, or 'all'")
    for name in names:
        try:
            resolve(name)
        except ConfigError as exc:
            raise UsageError(f"argument --variant: {exc}") from None
    twice = [name for name, count in Counter(map(label, names)).items() if count > 1]
    if twice:
        raise UsageError(f"argument --variant: {twice[0]} is listed twice")
    return names


def run_one(workload: Workload, config: SchedulerConfig, nb_machines: int, args: argparse.Namespace,
            prefix: str | None, label: str | None) -> tuple[dict, list[Path]]:
    """Simulate one config; write its files under ``prefix`` (if any); return its summary and the files.
    The wall time is the run's own: the one-time start-up of its kind is paid before (:func:`warm_up`)."""
    warm_up(config)
    started = time.perf_counter()
    show = not args.no_progress and sys.stderr.isatty()
    with progress_bar(len(workload), label) if show else nullcontext() as bar:
        options = SimulationOptions(acknowledge_dynamic_jobs=args.acknowledge_dynamic_jobs)
        result, outcome = simulate_outcome(workload, config, nb_machines, options, bar.update if bar else None)
    summary = run_summary(result, outcome, workload, config, tau=args.tau, wall_time=time.perf_counter() - started,
                          variant=label)
    written = write_whole(prefix, result, summary, outcome) if prefix else []
    if args.save_model:
        outcome.model.save(args.save_model)
    return summary, written


def simulate_outcome(workload: Workload, config: SchedulerConfig, nb_machines: int, options: SimulationOptions,
                     progress: Callable[[int], None] | None) -> tuple[SimulationResult, Outcome]:
    """:func:`simulate`, then the decision core's outcome; the core itself is dropped at once.

    The core holds every job it was told of, in cycles (its parts call back into it) that the paused collector
    (:func:`cyclic_gc_paused`) would keep until the command ends: :meth:`DecisionCore.close` breaks them, so that
    reference counting frees them at once and their memory serves the metrics and the output files instead of
    adding to the run's peak (on SDSC-SP2 it leaves 24 objects in cycles instead of 108,000, the collection
    below costing 3 ms instead of 20). What cycles remain (a classifier's) are collected here: made while the
    collector was paused, they are all in its youngest generation, collected alone without walking every object
    of the process.
    """
    result, core = simulate(workload, config, nb_machines, options, progress=progress)
    outcome = core.outcome()
    core.close()
    del core
    gc.collect(0)
    return result, outcome


def progress_bar(total: int, label: str | None):
    """A progress bar on stderr (tqdm is imported only to show one)."""
    from tqdm import tqdm

    return tqdm(total=total, unit="job", desc=label, file=sys.stderr, leave=False, ncols=console_width())
