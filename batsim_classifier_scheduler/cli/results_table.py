"""``simulate``'s results table, from runs' summaries: one run's headline results, or runs side by side, one
column per variant, each compared with the first; laid out to fit the console (:mod:`batsim_classifier_scheduler.cli.layout`),
values written as :mod:`batsim_classifier_scheduler.cli.formats` says ("–": not applicable; times in s, min, h or d)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from batsim_classifier_scheduler.cli.formats import (NOT_APPLICABLE, change, count, duration, durations, missing, number, ratio,
                                   reduction, share)
from batsim_classifier_scheduler.cli.layout import labelled, side_by_side, wrap
from batsim_classifier_scheduler.config.variants import (CLASSIFIER_OPTIONS, KILL_OPTIONS, PLANNED_TRIAL_OPTIONS,
                                                         PROBING_OPTIONS)
from batsim_classifier_scheduler.metrics import METRICS, Metric

#: What the classifier's scores count, said below the tables.
CLASSIFIER_NOTE = "scores of the jobs classified small; uncertain jobs count as not small"


def format_table(summary: dict, width: int) -> str:
    """A compact, aligned table of one run's headline results, in at most ``width`` columns."""
    metrics = summary["metrics"]
    rows = [("workload", _workload_line(summary)), ("scheduler", _scheduler_line(summary["config"]))]
    predictions = summary.get("predictions")
    if predictions:
        rows.append(("predictions", f"{predictions['predictor']}+{predictions['correction']}: MAE "
                                    f"{duration(predictions['mae'])}, R2 {number(predictions['r2'], '.2f')}, "
                                    f"under-predicted {number(predictions['under'], '.1%')}, RA "
                                    f"{number(predictions['ra'], '.3f')}, deadline misses "
                                    f"{count(predictions['deadline_misses'])}"))
    classifier = summary.get("classifier")
    if classifier:
        rows.append(("classifier", f"{classifier['method']}: precision {number(classifier['precision'], '.3f')}, "
                                   f"recall {number(classifier['recall'], '.3f')}, false-small "
                                   f"{number(classifier['false_small_rate'], '.2%')}, uncertain "
                                   f"{number(classifier.get('uncertain_rate'), '.2%')}, divider "
                                   f"{_divider(classifier)} ({CLASSIFIER_NOTE})"))
    rows.append(("jobs", f"{count(metrics['nb_jobs'])}: " + ", ".join(f"{count(n)} {name}" for name, n in
                                                                       _job_states(metrics) if n)))
    rejected = rejections(summary)
    if rejected:
        rows.append(("rejected", rejected))
    for metric in _shown_metrics():
        value = metrics[metric.key]
        rows.append((_label(metric, summary), duration(value) if metric.unit == "s" else _value(metric, value)))
    killed = f"{count(metrics['nb_jobs_killed'])} ({number(metrics['share_jobs_killed'], '.2%')} of all jobs)"
    if metrics["nb_kills"] != metrics["nb_jobs_killed"]:
        killed += f", in {count(metrics['nb_kills'])} killed attempts"
    rows.append(("jobs killed", killed))
    rows.append(("wasted work", f"{count(metrics['wasted_core_seconds'] / 3600)} processor-hours ("
                                f"{share(metrics['wasted_core_seconds'], metrics['useful_core_seconds'])} of the "
                                "useful work)"))
    rows.append(("wall time", duration(summary["wall_time"])))
    return "\n".join(labelled(rows, width))


def format_comparison(summaries: dict[str, dict], width: int) -> str:
    """The runs of one workload side by side, one column per variant, each compared with the first, in at most
    ``width`` columns (the columns split into blocks when they do not fit)."""
    names, runs = list(summaries), list(summaries.values())
    first, metrics = names[0], [run["metrics"] for run in runs]
    configs = [run["config"] for run in runs]
    differing = [key for key in configs[0] if len({repr(config[key]) for config in configs}) > 1]
    rows: list[tuple[str, list[str]]] = [(key, [_setting(config, key) for config in configs]) for key in differing]
    rows.append(("jobs", [count(m["nb_jobs"]) for m in metrics]))
    states = [dict(_job_states(m)) for m in metrics]
    for name in states[0]:
        if name == "succeeded" or any(state[name] for state in states):
            rows.append((f"  {name}", [count(state[name]) for state in states]))
    for metric in _shown_metrics():
        values = [m[metric.key] for m in metrics]
        rows.append((_label(metric, runs[0]), durations(values) if metric.unit == "s"
                     else [_value(metric, value) for value in values]))
        if metric.key == "mean_bsld":
            rows.append((f"  reduction vs {first}", [NOT_APPLICABLE] + [reduction(v, values[0]) for v in values[1:]]))
            large = [m.get("mean_bsld_actual_large") for m in metrics]
            rows.append((f"  large jobs vs {first}", [NOT_APPLICABLE] + [change(v, large[0]) for v in large[1:]]))
        if metric.key == "max_wait":
            rows.append((f"  vs {first}", [NOT_APPLICABLE] + [ratio(value, values[0]) for value in values[1:]]))
    classified = [run.get("classifier") or {} for run in runs]
    for label, key, spec in [("precision", "precision", ".3f"), ("recall", "recall", ".3f"),
                             ("false-small", "false_small_rate", ".2%"), ("uncertain", "uncertain_rate", ".2%")]:
        rows.append((f"classifier {label}", [number(classifier.get(key), spec) for classifier in classified]))
    rows.append(("divider", [_divider(classifier) if classifier else NOT_APPLICABLE for classifier in classified]))
    rows.append(("jobs killed", [count(m["nb_jobs_killed"]) for m in metrics]))
    rows.append(("  share of all jobs", [number(m["share_jobs_killed"], ".2%") for m in metrics]))
    if any(m["nb_kills"] != m["nb_jobs_killed"] for m in metrics):  # a job killed more than once
        rows.append(("killed attempts", [count(m["nb_kills"]) for m in metrics]))
    rows.append(("wasted processor-hours", [count(m["wasted_core_seconds"] / 3600) for m in metrics]))
    rows.append(("  share of the work", [share(m["wasted_core_seconds"], m["useful_core_seconds"])
                                         for m in metrics]))
    rows.append(("wall time", durations([run["wall_time"] for run in runs])))
    lines = wrap(f"workload  {_workload_line(runs[0])}", width, "          ")
    lines += wrap(f"scheduler {_scheduler_line(configs[0], omit=differing)}", width, "          ") + [""]
    lines += side_by_side(names, rows, width)
    lines.append("")
    divider = metrics[0].get("class_divider")
    lines += wrap(f"large jobs: those that ran at least the median runtime ({first}: {duration(divider)}); the "
                  f"change of their mean bsld. \"{NOT_APPLICABLE}\": not applicable.", width)
    if any(classified):
        lines += wrap(f"classifier: {CLASSIFIER_NOTE} (uncertain: probing's trial runs; share of the jobs "
                      "scored); divider: the smallest and largest of the weeks' dividers.", width)
    said = {variant: rejections(run) for variant, run in summaries.items()}
    if len(set(said.values())) == 1:
        said = {"every variant": next(iter(said.values()))}
    for variant, line in said.items():
        if line:
            lines += wrap(f"rejected ({variant}): {line}", width)
    return "\n".join(lines)


def written_lines(written: list[list[Path]], width: int) -> list[str]:
    """What each run wrote: its first file, then the others by their suffix, wrapped to ``width``."""
    lines = []
    for paths in filter(None, written):
        stem = paths[0].name.removesuffix("_jobs.csv")
        lines += wrap(f"wrote {paths[0]}, " + ", ".join(p.name.removeprefix(stem) for p in paths[1:]), width)
    return lines


def rejections(summary: dict, shown: int = 3) -> str | None:
    """The jobs the scheduler rejected: their number, then by reason (the ``shown`` most frequent), or None."""
    reasons = Counter(summary["accounting"]["reject_reasons"].values())
    total = sum(reasons.values())
    if not total:
        return None
    listed = reasons.most_common(shown)
    parts = [f"{reason} ({count(n)} job{'s' if n > 1 else ''})" for reason, n in listed]
    rest = reasons.most_common()[shown:]
    if rest:
        parts.append(f"{count(len(rest))} other reasons ({count(sum(n for _, n in rest))} jobs)")
    return f"{count(total)} job{'s' if total > 1 else ''}: " + "; ".join(parts)


def _shown_metrics() -> list[Metric]:
    """The metrics with a row (``Metric.label``), in the registry's order."""
    return [metric for metric in METRICS.values() if metric.label and metric.summary]


def _label(metric: Metric, summary: dict) -> str:
    return metric.label.format(tau=summary["tau"])


def _value(metric: Metric, value: float | None) -> str:
    return number(value, f".{metric.digits}f") + (f" {metric.unit}" if metric.unit and not missing(value) else "")


def _divider(classifier: dict) -> str:
    """The divider the classifier used: its fixed length, or the range of the weeks' medians."""
    lowest, highest = classifier.get("divider_range") or (None, None)
    if missing(lowest) or missing(highest):
        return NOT_APPLICABLE
    if lowest == highest:
        return duration(lowest)
    low, high = durations([lowest, highest])
    return f"{low.rsplit(' ', 1)[0]}–{high}"


def _setting(config: dict, key: str) -> str:
    """A config value in the comparison: "–" for an option that does not act in this config (and for none),
    "never" for a ``promote_after`` of 0."""
    inactive = (key in PROBING_OPTIONS and config.get("probe_threshold") is None
                or key in KILL_OPTIONS and config.get("safeguard") != "kill"
                or key == "head_slack" and config.get("kill_on") != "blocking"
                or key in CLASSIFIER_OPTIONS and config.get("classifier") == "none"
                or key in PLANNED_TRIAL_OPTIONS and config.get("divider_estimates") != "all")
    if inactive or config[key] is None:
        return NOT_APPLICABLE
    return "never" if key == "promote_after" and config[key] == 0 else str(config[key])


def _workload_line(summary: dict) -> str:
    return (f"{summary['workload']['name']} ({count(summary['workload']['jobs'])} jobs, "
            f"{count(summary['nb_machines'])} machines)")


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
