"""A run's results: metrics, accounting and provenance, and the files written next to them."""

from __future__ import annotations

import json
import platform
from collections import Counter
from pathlib import Path
from typing import Any

from batsim_classifier_scheduler import __version__
from batsim_classifier_scheduler.util.checksums import file_sha256
from batsim_classifier_scheduler.compose import input_files
from batsim_classifier_scheduler.config import SchedulerConfig
from batsim_classifier_scheduler.core.decision import Outcome
from batsim_classifier_scheduler.metrics import summarize
from batsim_classifier_scheduler.util.output_files import atomic_open, prefixed, write_text
from batsim_classifier_scheduler.sim.engine import SimulationResult
from batsim_classifier_scheduler.sim.batsim_files import schedule_summary, write_jobs_csv, write_schedule_csv
from batsim_classifier_scheduler.util.values import DEFAULT_TAU, json_ready
from batsim_classifier_scheduler.workloads.model import Workload


#: The files :func:`write_results` writes for every run (the knowledge reports come beside them).
RESULT_SUFFIXES = ("_jobs.csv", "_schedule.csv", "_summary.json")


def run_summary(result: SimulationResult, outcome: Outcome, workload: Workload, config: SchedulerConfig,
                tau: float = DEFAULT_TAU, wall_time: float | None = None, variant: str | None = None) -> dict[str, Any]:
    """Everything needed to read, compare and reproduce a run. ``variant`` is the name of the variant the run
    was asked for (``simulate --variant``), which ``report`` labels it with."""
    # (the table first: the run's job records are freed before the rest of the summary is made)
    metrics = summarize(result.columns, nb_machines=result.nb_machines, tau=tau)
    return {
        "version": __version__,
        "python": platform.python_version(),
        "variant": variant,
        "config": config.to_dict(),
        "seed": config.seed,
        "tau": tau,
        "nb_machines": result.nb_machines,
        "workload": {
            "name": Path(workload.source).name if workload.source else workload.name,
            "path": str(workload.source) if workload.source else None,
            "sha256": _checksum(workload.source),
            "jobs": len(workload),
            "cleaning": workload.cleaning.to_dict() if workload.cleaning else None,
        },
        "inputs": {path: _checksum(path) for path in input_files(config)},
        "accounting": {
            **outcome.accounting,
            "final_states": dict(Counter(result.columns["final_state"]).most_common()),
        },
        "metrics": metrics,
        "classifier": _classifier(outcome),
        "predictions": outcome.predictions,
        "messages": result.nb_messages,
        "batsim_flags": result.batsim_flags,
        "scheduling_time": result.scheduling_time,
        "wall_time": wall_time,
    }


def _classifier(outcome: Outcome) -> dict[str, Any] | None:
    """The classifier's summary, with ``divider_range``: the smallest and largest of the weeks' dividers in
    seconds (None before any job completed)."""
    if outcome.classifier is None:
        return None
    dividers = outcome.reports["classifier_weeks"]["divider"].dropna()
    return {**outcome.classifier,
            "divider_range": [float(dividers.min()), float(dividers.max())] if len(dividers) else None}


def _checksum(path: str | Path | None) -> str | None:
    """The SHA-256 of an input file, None when there is no such file."""
    return file_sha256(path) if path and Path(path).is_file() else None


def write_results(prefix: str | Path, result: SimulationResult, summary: dict[str, Any],
                  outcome: Outcome | None = None) -> list[Path]:
    """Write ``PREFIX_jobs.csv``, ``PREFIX_schedule.csv`` (Batsim's formats), the knowledge reports of
    :func:`write_knowledge_reports`, then ``PREFIX_summary.json``, each file atomically. ``PREFIX`` is a
    string prefix, as Batsim's ``-e``: ``out/`` writes ``out/_jobs.csv``."""
    paths = [prefixed(prefix, suffix) for suffix in RESULT_SUFFIXES]
    write_jobs_csv(paths[0], result.columns)
    write_schedule_csv(paths[1], schedule_summary(result.columns, result.nb_machines,
                                                  scheduling_time=result.scheduling_time,
                                                  simulation_time=summary.get("wall_time") or 0.0))
    reports = write_knowledge_reports(prefix, outcome) if outcome is not None else []
    write_text(paths[2], json.dumps(json_ready(summary), indent=2, allow_nan=False) + "\n")
    return paths + reports


def write_knowledge_reports(prefix: str | Path, outcome: Outcome) -> list[Path]:
    """What the scheduler learnt (:attr:`Outcome.reports`), beside a run's ``PREFIX_jobs.csv`` (``report``
    reads them): with a classifier, ``PREFIX_classifier_weeks.csv`` (quality and divider per week) and
    ``PREFIX_feature_importances.csv`` (Gini importances per week); with a runtime predictor,
    ``PREFIX_predictions.csv`` (per terminated job: first and last prediction, deadline misses, RA, AI)."""
    paths = []
    for suffix, table in outcome.reports.items():
        paths.append(prefixed(prefix, f"_{suffix}.csv"))
        with atomic_open(paths[-1], newline="") as stream:
            table.to_csv(stream, index=False)
    return paths
