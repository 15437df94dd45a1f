"""``sweep`` and ``report``: run a grid of simulations, and turn results into tables and plots."""

from __future__ import annotations

import argparse
import sys

from batsim_classifier_scheduler.cli.options import count_flag, flag_type, integer_text, seconds_flag
from batsim_classifier_scheduler.util.values import DEFAULT_TAU


def register(subparsers: argparse._SubParsersAction) -> None:
    sweep = subparsers.add_parser(
        "sweep",
        help="run a grid traces x policies x variants x seeds (resumable, parallel)",
        description="Run every simulation of a sweep config (JSON, or YAML with PyYAML) into RESULTS, "
                    "one directory per run: RESULTS/<trace>/<policy>/<variant>/seed<k>/run_*. Finished runs "
                    "whose configuration is unchanged are skipped. Exits 1 if any run failed.",
    )
    sweep.add_argument("config", help="sweep config file (see experiments/*.json)")
    sweep.add_argument("-o", "--output", "--results", dest="results", metavar="RESULTS",
                       help="results folder (default: results/<config name>)")
    sweep.add_argument("--workers", "-j", type=workers_flag, metavar="N",
                       help="local worker processes (default: the number of CPUs; 0 runs in this process)")
    sweep.add_argument("--dask-scheduler", metavar="ADDRESS",
                       help="run on a Dask distributed cluster (e.g. tcp://head:8786); RESULTS must be on a "
                            "file system the workers share")
    sweep.add_argument("--force", action="store_true", help="rerun finished runs too")
    sweep.add_argument("--trace-dir", action="append", default=[], metavar="DIR",
                       help="look for archive traces in DIR (by their archive file name) before the trace "
                            "cache and downloading; repeatable")
    sweep.add_argument("--dry-run", action="store_true", help="list the runs and whether they are done, run nothing")
    sweep.add_argument("--no-progress", action="store_true", help="no progress bar")
    sweep.set_defaults(func=run_sweep_command)

    report = subparsers.add_parser(
        "report",
        help="tables and plots (REPORT.md, PNG) from sweep results or Batsim _jobs.csv files",
        description="Read every run under RESULTS (sweep output, simulate -e output, or Batsim NAME_jobs.csv "
                    "files with a NAME_config.json, or with the NAME_schedule.csv that Batsim and batsim-peer "
                    "write) and write REPORT.md, REPORT.html, tables as CSV and PNG plots into DIR. Metrics are "
                    "recomputed from the _jobs.csv files.",
    )
    report.add_argument("results", nargs="+", help="results folder(s)")
    report.add_argument("-o", "--output", required=True, metavar="DIR", help="report folder")
    report.add_argument("--tau", type=seconds_flag, metavar="S",
                        help=f"bounded-slowdown threshold (default: each run's, else {DEFAULT_TAU:g})")
    report.add_argument("--reference-policy", metavar="NAME",
                        help="policy of the reference run of the reduction table, one of the runs' (default fcfs)")
    report.add_argument("--reference-variant", metavar="NAME",
                        help="variant of the reference run of the reduction table, one of the runs' (default base)")
    report.add_argument("--compare", metavar="VARIANT",
                        help="the variant compared with base in Figures 4, 6 and 7, one of the runs' (default "
                             "classification-idempotent)")
    report.add_argument("--no-plots", action="store_true", help="tables only")
    report.add_argument("--workers", "-j", type=count_flag, default=1, metavar="N",
                        help="processes reading the runs (default 1)")
    report.set_defaults(func=run_report_command)


def _natural(value: int) -> int:
    if value < 0:
        raise ValueError(f"expected 0 (in this process) or more, got {value}")
    return value


workers_flag = flag_type(lambda text: _natural(integer_text(text)))


def run_sweep_command(args: argparse.Namespace) -> int:
    from pathlib import Path

    from batsim_classifier_scheduler.experiments.grid import load_config_file
    from batsim_classifier_scheduler.experiments.sweep import format_outcome, run_sweep
    from batsim_classifier_scheduler.util.output_files import check_distinct, check_output

    config = load_config_file(args.config)
    results = Path(args.results) if args.results else Path("results") / config.name
    check_output(results / "sweep_config.json", "--output")
    check_distinct([("--output", results / "sweep_config.json")], [("the sweep config", args.config)])
    if args.dry_run:
        return _dry_run(config, results, args.trace_dir)
    outcome = run_sweep(config, results, workers=args.workers, dask_scheduler=args.dask_scheduler,
                        force=args.force, trace_dirs=args.trace_dir,
                        progress=not args.no_progress and sys.stderr.isatty(),
                        log=lambda line: print(line, file=sys.stderr))
    print(format_outcome(outcome))
    return 1 if outcome.failed else 0


def _dry_run(config, results, trace_dirs) -> int:
    """Print each run and whether it is done; downloads nothing."""
    from batsim_classifier_scheduler.errors import SchedulerError
    from batsim_classifier_scheduler.experiments.sweep import input_checksums
    from batsim_classifier_scheduler.experiments.traces import resolve_trace_file, trace_key
    from batsim_classifier_scheduler.experiments.worker import run_is_done

    keys = {}
    for trace in config.traces:
        try:
            path = resolve_trace_file(trace, [*trace_dirs, *config.trace_dirs], download=False)
            keys[trace.name] = trace_key(trace, path)
            print(f"trace {trace.name}: {path}")
        except SchedulerError as exc:
            keys[trace.name] = None
            print(f"trace {trace.name}: {exc}")
    checksums: dict[str, str] = {}
    for run in config.runs():
        run.trace_key = keys[run.trace.name]
        try:
            run.inputs = input_checksums(run.config, checksums)
        except SchedulerError as exc:
            print(f"fails   {run.label}: {exc}")
            continue
        done = run.trace_key is not None and run_is_done(results / run.relative_dir, run.config_hash)
        print(f"{'done  ' if done else 'to run'}  {run.label}")
    return 0


def run_report_command(args: argparse.Namespace) -> int:
    from pathlib import Path

    from batsim_classifier_scheduler.experiments.report import write_report
    from batsim_classifier_scheduler.util.output_files import check_output

    check_output(Path(args.output) / "REPORT.md", "--output")
    written = write_report(args.results, args.output, tau=args.tau, reference_policy=args.reference_policy,
                           reference_variant=args.reference_variant, compare=args.compare,
                           plots=not args.no_plots, workers=args.workers,
                           log=lambda line: print(line, file=sys.stderr))
    print(f"wrote {written['report']}" + (f" and {len(written['plots'])} plot(s)" if written["plots"] else ""))
    return 0
