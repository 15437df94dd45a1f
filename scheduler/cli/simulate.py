"""``simulate``: run a whole trace on the embedded simulator and print a results table."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from tqdm import tqdm

from scheduler.cli.options import add_scheduling_options, config_from_args, count_flag, seconds_flag
from scheduler.errors import ConfigError
from scheduler.sim.results import run_summary, write_results
from scheduler.sim.simulate import simulate
from scheduler.workloads import load_workload


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "simulate",
        help="simulate a workload (SWF or Batsim JSON) with the embedded Batsim engine",
        description="Simulate a whole workload on the embedded Batsim 4.2.1-compatible engine.",
    )
    parser.add_argument("workload", help="SWF trace (.swf, .swf.gz) or Batsim JSON workload")
    size = parser.add_mutually_exclusive_group()
    size.add_argument("--platform", metavar="XML", help="SimGrid platform: its compute hosts set the machine size")
    size.add_argument("--nb-res", type=count_flag, metavar="N", help="machine size (default: the workload's nb_res)")
    add_scheduling_options(parser)
    parser.add_argument("--tau", type=seconds_flag, default=60.0, metavar="S",
                        help="bounded-slowdown threshold in seconds (default 60)")
    parser.add_argument("--output-prefix", "-e", metavar="P", help="write P_jobs.csv, P_schedule.csv, P_summary.json")
    parser.add_argument("--skip-bad-lines", action="store_true", help="drop (and count) malformed SWF lines")
    parser.add_argument("--save-model", metavar="FILE", help="save the trained classifier (for serve --model FILE)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    config = config_from_args(args)
    started = time.perf_counter()
    workload = load_workload(args.workload, skip_bad_lines=args.skip_bad_lines)
    nb_machines = args.nb_res or workload.nb_res
    if args.platform:
        from scheduler.platforms import read_platform

        nb_machines = read_platform(args.platform).nb_compute_hosts
    show = not args.no_progress and sys.stderr.isatty()
    with tqdm(total=len(workload), unit="job", disable=not show, file=sys.stderr, leave=False) as bar:
        result, core = simulate(workload, config, nb_machines, progress=bar.update)
    wall = time.perf_counter() - started
    outcome = core.outcome()
    summary = run_summary(result, outcome, workload, config, tau=args.tau, wall_time=wall)
    written = write_results(args.output_prefix, result, summary, outcome) if args.output_prefix else []
    if args.save_model:
        if outcome.model is None:
            raise ConfigError("--save-model needs a classifier (--classifier rf or a --variant with one)")
        outcome.model.save(args.save_model)
    print(format_table(summary))
    if written:
        prefix = Path(args.output_prefix).name
        print(f"\nwrote {written[0]}, " + ", ".join(path.name.removeprefix(prefix) for path in written[1:]))
    return 0


def format_table(summary: dict) -> str:
    """A compact, aligned table of the headline results."""
    metrics = summary["metrics"]
    config = summary["config"]
    rows = [
        ("workload", f"{summary['workload']['name']} ({summary['workload']['jobs']} jobs, "
                     f"{summary['nb_machines']} machines)"),
        ("scheduler", _scheduler_line(config)),
        ("jobs", _job_states(summary["accounting"]["final_states"])),
        (f"mean bsld (tau={summary['tau']:g}s)", f"{metrics['mean_bsld']:.2f}"),
        ("mean wait", f"{metrics['mean_wait']:.0f} s"),
        ("max wait", f"{metrics['max_wait']:.0f} s"),
        ("mean response (AF)", f"{metrics['mean_response']:.0f} s"),
        ("makespan", f"{metrics['makespan']:.0f} s"),
        ("utilisation", f"{metrics['utilisation']:.3f}"),
        ("AWF", f"{metrics['awf']:.0f} s"),
        ("P2SF", f"{metrics['p2sf']:.0f} s"),
        ("wall time", f"{summary['wall_time']:.2f} s"),
    ]
    classifier = summary.get("classifier")
    if classifier:
        rows[2:2] = [("classifier", f"{classifier['method']}: precision {classifier['precision']:.3f}, "
                                    f"recall {classifier['recall']:.3f}, false-small "
                                    f"{classifier['false_small_rate']:.2%}, kills {classifier['kills']}")]
    predictions = summary.get("predictions")
    if predictions:
        rows[2:2] = [("predictions", f"{predictions['predictor']}+{predictions['correction']}: MAE "
                                     f"{predictions['mae']:.0f} s, R2 {predictions['r2']:.2f}, under-predicted "
                                     f"{predictions['under']:.1%}, RA {predictions['ra']:.3f}, deadline misses "
                                     f"{predictions['deadline_misses']}")]
    width = max(len(name) for name, _ in rows)
    return "\n".join(f"{name:<{width}}  {value}" for name, value in rows)


def _job_states(states: dict[str, int]) -> str:
    names = {
        "COMPLETED_SUCCESSFULLY": "succeeded",
        "COMPLETED_WALLTIME_REACHED": "reached their walltime",
        "COMPLETED_KILLED": "killed",
        "COMPLETED_FAILED": "failed",
        "REJECTED": "rejected",
    }
    return ", ".join(f"{states[state]} {name}" for state, name in names.items() if states.get(state))


def _scheduler_line(config: dict) -> str:
    parts = [f"{config.get('algorithm', 'easy').upper()}-{config['policy'].upper()}", f"estimates={config['estimates']}"]
    if config.get("predictor", "requested") != "requested":
        parts.append(f"predictor={config['predictor']}+{config['correction']}")
    if config.get("backfill_order"):
        parts.append(f"backfill={config['backfill_order']}")
    parts += [f"classifier={config['classifier']}", f"safeguard={config['safeguard']}"]
    return ", ".join(parts)
