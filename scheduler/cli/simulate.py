"""``simulate``: run a whole trace on the embedded simulator and print a results table, or compare variants."""

from __future__ import annotations

import argparse
import gc
import json
import sys
import time
from collections import Counter
from contextlib import nullcontext
from pathlib import Path
from typing import Callable

from scheduler.cli.options import add_scheduling_options, config_from_args, machines_flag, seconds_flag
from scheduler.compose import warm_up
from scheduler.config import SchedulerConfig
from scheduler.variants import CLASSIFIER_OPTIONS, KILL_OPTIONS, PLANNED_TRIAL_OPTIONS, PROBING_OPTIONS, VARIANTS
from scheduler.cyclic_gc import cyclic_gc_paused
from scheduler.errors import UsageError
from scheduler.metrics import METRICS
from scheduler.outputs import check_output, check_outputs, prefixed
from scheduler.sim.results import RESULT_SUFFIXES, run_summary, write_results
from scheduler.decision import Outcome
from scheduler.sim.engine import SimulationOptions, SimulationResult
from scheduler.sim.simulate import simulate
from scheduler.values import DEFAULT_TAU
from scheduler.workloads import load_workload
from scheduler.workloads.model import Workload


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "simulate",
        help="simulate a workload (SWF or Batsim JSON) with the embedded Batsim engine",
        description="Simulate a whole workload on the embedded Batsim 4.2.1-compatible engine. With several "
                    "variants (--variant base,classification-idempotent), run each and print them side by side.",
        usage="%(prog)s WORKLOAD [options]",
    )
    parser.add_argument("workload", help="SWF trace (.swf, .swf.gz) or Batsim JSON workload")
    group = add_scheduling_options(parser, several_variants=True)["run"]
    size = group.add_mutually_exclusive_group()
    size.add_argument("--platform", metavar="XML", help="SimGrid platform: its compute hosts set the machine size")
    size.add_argument("--nb-res", type=machines_flag, metavar="N",
                      help="machine size (default: the workload's nb_res)")
    group.add_argument("--tau", type=seconds_flag, default=DEFAULT_TAU, metavar="S",
                     help=f"bounded-slowdown threshold in seconds (default {DEFAULT_TAU:g})")
    group.add_argument("--output-prefix", "-e", metavar="P",
                     help="write P_jobs.csv, P_schedule.csv, P_summary.json (with several variants: "
                          "P_VARIANT_jobs.csv, ...)")
    group.add_argument("--skip-bad-lines", action="store_true", help="drop (and count) malformed SWF lines")
    group.add_argument("--save-model", metavar="FILE", help="save the trained classifier (for serve --model FILE)")
    group.add_argument("--no-progress", action="store_true", help="no progress bar")
    group.add_argument("--acknowledge-dynamic-jobs", action="store_true",
                     help="model a Batsim run with this flag (it echoes JOB_SUBMITTED for each job the safeguard "
                          "resubmits; the extra messages change which events of one instant arrive together)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    with cyclic_gc_paused():  # the workload and each run's objects are kept until the command ends
        return _run(args)


def _run(args: argparse.Namespace) -> int:
    variants = variant_names(args.variant)
    if args.save_model and len(variants) > 1:
        raise UsageError("--save-model saves the classifier of one run: give a single --variant")
    configs = {name: config_from_args(argparse.Namespace(**{**vars(args), "variant": name}))
               for name in variants or [None]}
    prefixes = {name: run_prefix(args.output_prefix, name, len(configs)) for name in configs}
    check_locations(args, configs, prefixes)
    workload = load_workload(args.workload, skip_bad_lines=args.skip_bad_lines)
    if workload.cleaning:
        print(workload.cleaning.format(), flush=True)
    nb_machines = args.nb_res or workload.nb_res
    if args.platform:
        from scheduler.platforms import read_platform

        nb_machines = read_platform(args.platform).nb_compute_hosts
    summaries, written = {}, []
    for name, config in configs.items():
        summaries[name], paths = run_one(workload, config, nb_machines, args, prefixes[name], label=name)
        written.append(paths)
    if len(summaries) == 1:
        print(format_table(*summaries.values()))
    else:
        print(format_comparison(summaries))
    for i, paths in enumerate(filter(None, written)):
        stem = paths[0].name.removesuffix("_jobs.csv")
        print(("\n" if i == 0 else "") + f"wrote {paths[0]}, " + ", ".join(p.name.removeprefix(stem) for p in paths[1:]))
    return 0


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


def variant_names(text: str | None) -> list[str]:
    """The variants named by ``--variant`` (comma-separated, or ``all``); none when the option is absent."""
    if text is None:
        return []
    names = list(VARIANTS) if text.strip() == "all" else [name.strip() for name in text.split(",") if name.strip()]
    if not names:
        raise UsageError(f"argument --variant: empty variant list; give one or more of {', '.join(VARIANTS)}, or 'all'")
    for name in names:
        if name not in VARIANTS:
            raise UsageError(f"argument --variant: unknown variant {name!r}; known: {', '.join(VARIANTS)}")
    twice = [name for name, count in Counter(names).items() if count > 1]
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
    written = write_results(prefix, result, summary, outcome) if prefix else []
    if args.save_model:
        outcome.model.save(args.save_model)
    return summary, written


def simulate_outcome(workload: Workload, config: SchedulerConfig, nb_machines: int, options: SimulationOptions,
                     progress: Callable[[int], None] | None) -> tuple[SimulationResult, Outcome]:
    """:func:`simulate`, then the decision core's outcome; the core itself is dropped at once.

    The core holds every job it was told of, in cycles (its parts call back into it) that the paused collector
    (:func:`cyclic_gc_paused`) would keep until the command ends: collected here, their memory serves the
    metrics and the output files instead of adding to the run's peak.
    """
    result, core = simulate(workload, config, nb_machines, options, progress=progress)
    outcome = core.outcome()
    del core
    gc.collect()
    return result, outcome


def progress_bar(total: int, label: str | None):
    """A progress bar on stderr (tqdm is imported only to show one)."""
    from tqdm import tqdm

    return tqdm(total=total, unit="job", desc=label, file=sys.stderr, leave=False)


def format_table(summary: dict) -> str:
    """A compact, aligned table of the headline results."""
    metrics = summary["metrics"]
    rows = [("workload", _workload_line(summary)), ("scheduler", _scheduler_line(summary["config"]))]
    predictions = summary.get("predictions")
    if predictions:
        rows.append(("predictions", f"{predictions['predictor']}+{predictions['correction']}: MAE "
                                    f"{predictions['mae']:.0f} s, R2 {predictions['r2']:.2f}, under-predicted "
                                    f"{predictions['under']:.1%}, RA {predictions['ra']:.3f}, deadline misses "
                                    f"{predictions['deadline_misses']}"))
    classifier = summary.get("classifier")
    if classifier:
        rows.append(("classifier", f"{classifier['method']}: precision {classifier['precision']:.3f}, "
                                   f"recall {classifier['recall']:.3f}, false-small "
                                   f"{classifier['false_small_rate']:.2%}, uncertain "
                                   f"{_rate(classifier.get('uncertain_rate'))} ({CLASSIFIER_NOTE})"))
    rows.append(("jobs", f"{metrics['nb_jobs']:,}: " + ", ".join(f"{count:,} {name}" for name, count in
                                                                 _job_states(metrics) if count)))
    rejected = rejections(summary)
    if rejected:
        rows.append(("rejected", rejected))
    rows += _metric_rows(summary)
    rows.append(("jobs killed", f"{metrics['nb_jobs_killed']:,} ({_rate(metrics['share_jobs_killed'])} of all jobs), "
                                f"in {metrics['nb_kills']:,} killed attempts"))
    rows.append(("wasted work", f"{metrics['wasted_core_seconds'] / 3600:,.0f} processor-hours ("
                                f"{_share(metrics['wasted_core_seconds'], metrics['useful_core_seconds'])} of the "
                                "useful work)"))
    rows.append(("wall time", f"{summary['wall_time']:.2f} s"))
    width = max(len(name) for name, _ in rows)
    return "\n".join(f"{name:<{width}}  {value}" for name, value in rows)


#: What the classifier's scores count, said below the tables.
CLASSIFIER_NOTE = "scores of the jobs classified small; uncertain jobs count as not small"


def format_comparison(summaries: dict[str, dict]) -> str:
    """The runs of one workload side by side, one column per variant, each compared with the first."""
    names, runs = list(summaries), list(summaries.values())
    reference = runs[0]["metrics"]["mean_bsld"]
    configs = [run["config"] for run in runs]
    differing = [key for key in configs[0] if len({repr(config[key]) for config in configs}) > 1]
    rows: list[tuple[str, list[str]]] = [("", names)]
    rows += [(key, [_setting(config, key) for config in configs]) for key in differing]
    rows.append(("jobs", [f"{run['metrics']['nb_jobs']:,}" for run in runs]))
    states = [dict(_job_states(run["metrics"])) for run in runs]
    for name in states[0]:
        if name == "succeeded" or any(state[name] for state in states):
            rows.append((f"  {name}", [f"{state[name]:,}" for state in states]))
    for metric in zip(*map(_metric_rows, runs)):  # one metric of every run
        rows.append((metric[0][0], [value for _, value in metric]))
        if metric[0][0].startswith("mean bsld"):
            rows.append((f"  reduction vs {names[0]}",
                         ["–"] + [f"{1 - run['metrics']['mean_bsld'] / reference:.1%}" for run in runs[1:]]))
    classified = [run.get("classifier") for run in runs]
    for label, key, spec in [("precision", "precision", ".3f"), ("recall", "recall", ".3f"),
                             ("false-small", "false_small_rate", ".2%"), ("uncertain", "uncertain_rate", ".2%")]:
        rows.append((f"classifier {label}", [_rate(classifier.get(key), spec) if classifier else "–"
                                             for classifier in classified]))
    rows.append(("jobs killed", [f"{run['metrics']['nb_jobs_killed']:,}" for run in runs]))
    rows.append(("  share of all jobs", [_rate(run["metrics"]["share_jobs_killed"]) for run in runs]))
    rows.append(("killed attempts", [f"{run['metrics']['nb_kills']:,}" for run in runs]))
    rows.append(("wasted processor-hours", [f"{run['metrics']['wasted_core_seconds'] / 3600:,.0f}" for run in runs]))
    rows.append(("  share of the work", [_share(run["metrics"]["wasted_core_seconds"],
                                                run["metrics"]["useful_core_seconds"]) for run in runs]))
    rows.append(("wall time", [f"{run['wall_time']:.2f} s" for run in runs]))
    columns = list(zip(*(values for _, values in rows)))
    widths = [max(len(label) for label, _ in rows)] + [max(map(len, column)) for column in columns]
    lines = [f"workload  {_workload_line(runs[0])}",
             f"scheduler {_scheduler_line(configs[0], omit=differing)}", ""]
    lines += ["  ".join([f"{label:<{widths[0]}}", *(f"{value:>{width}}" for value, width in zip(values, widths[1:]))])
              for label, values in rows]
    if any(classified):
        lines.append(f"\nclassifier: {CLASSIFIER_NOTE} (uncertain: probing's trial runs; share of the jobs scored)")
    said = {variant: rejections(run) for variant, run in summaries.items()}
    if len(set(said.values())) == 1:
        said = {"every variant": next(iter(said.values()))}
    lines += [f"rejected ({variant}): {line}" for variant, line in said.items() if line]
    return "\n".join(lines)


def rejections(summary: dict, shown: int = 3) -> str | None:
    """The jobs the scheduler rejected: their number, then by reason (the ``shown`` most frequent), or None."""
    reasons = Counter(summary["accounting"]["reject_reasons"].values())
    total = sum(reasons.values())
    if not total:
        return None
    listed = reasons.most_common(shown)
    parts = [f"{reason} ({count:,} job{'s' if count > 1 else ''})" for reason, count in listed]
    rest = reasons.most_common()[shown:]
    if rest:
        parts.append(f"{len(rest):,} other reasons ({sum(count for _, count in rest):,} jobs)")
    return f"{total:,} job{'s' if total > 1 else ''}: " + "; ".join(parts)


def _setting(config: dict, key: str) -> str:
    """A config value in the comparison; "–" for none, and for an option that does not act in this config."""
    inactive = (key in PROBING_OPTIONS and config.get("probe_threshold") is None
                or key in KILL_OPTIONS and config.get("safeguard") != "kill"
                or key in CLASSIFIER_OPTIONS and config.get("classifier") == "none"
                or key in PLANNED_TRIAL_OPTIONS and config.get("divider_estimates") != "all")
    return "–" if inactive or config[key] is None else str(config[key])


def _rate(value: float | None, spec: str = ".2%") -> str:
    return "–" if value is None or value != value else format(value, spec)


def _metric_rows(summary: dict) -> list[tuple[str, str]]:
    """The rows of the metrics that have one (``Metric.label``), in the registry's order."""
    return [metric.show(summary["metrics"][metric.key], summary["tau"])
            for metric in METRICS.values() if metric.label and metric.summary]


def _share(part: float, whole: float) -> str:
    return f"{part / whole:.2%}" if whole > 0 else "–"


def _workload_line(summary: dict) -> str:
    return f"{summary['workload']['name']} ({summary['workload']['jobs']} jobs, {summary['nb_machines']} machines)"


def _job_states(metrics: dict) -> list[tuple[str, int]]:
    """The original jobs (attempts folded) by final state; a killed attempt's job counts by its last attempt."""
    known = metrics["nb_success"] + metrics.get("nb_walltime", 0) + metrics["nb_rejected"]
    return [("succeeded", metrics["nb_success"]), ("reached their walltime", metrics.get("nb_walltime", 0)),
            ("rejected", metrics["nb_rejected"]), ("failed or killed", metrics["nb_jobs"] - known)]


def _shown(name: str) -> str:
    """A built-in algorithm's or policy's name in capitals (EASY-FCFS); a plug-in's spec as given."""
    return name if ":" in name else name.upper()


def _scheduler_line(config: dict, omit: list[str] = ()) -> str:
    """The scheduler's settings in one line, without those in ``omit``."""
    parts = {"policy": f"{_shown(config.get('algorithm', 'easy'))}-{_shown(config['policy'])}"}
    for kind in ("algorithm", "policy"):
        if config.get(f"{kind}_options"):
            parts[f"{kind}_options"] = f"{kind} options={json.dumps(config[f'{kind}_options'], separators=(',', ':'))}"
    parts["estimates"] = f"estimates={config['estimates']}"
    if config.get("predictor", "requested") != "requested":
        parts["predictor"] = f"predictor={config['predictor']}+{config['correction']}"
    if config.get("backfill_order"):
        parts["backfill_order"] = f"backfill={config['backfill_order']}"
    parts["classifier"] = f"classifier={config['classifier']}"
    if config.get("estimator", "forest") != "forest" or config.get("estimator_options"):
        options = json.dumps(config["estimator_options"], separators=(",", ":")) if config.get("estimator_options") else ""
        parts["estimator"] = f"estimator={config['estimator']}{options}"
    parts["safeguard"] = f"safeguard={config['safeguard']}"
    return ", ".join(part for key, part in parts.items() if key not in omit)
