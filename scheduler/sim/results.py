"""A run's results: metrics, accounting and provenance, and the files written next to them."""

from __future__ import annotations

import hashlib
import json
import math
import platform
from pathlib import Path
from typing import Any

from scheduler import __version__
from scheduler.config import SchedulerConfig
from scheduler.core.scheduler import DecisionCore
from scheduler.metrics import summarize
from scheduler.sim.engine import SimulationResult
from scheduler.sim.output import schedule_summary, write_jobs_csv, write_schedule_csv
from scheduler.workloads.model import Workload


def file_checksum(path: str | Path | None) -> str | None:
    """The sha256 of an input file, or None when there is no file."""
    if not path or not Path(path).is_file():
        return None
    digest = hashlib.sha256()
    with open(path, "rb") as stream:
        for block in iter(lambda: stream.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def run_summary(result: SimulationResult, core: DecisionCore, workload: Workload, config: SchedulerConfig,
                tau: float = 60.0, wall_time: float | None = None) -> dict[str, Any]:
    """Everything needed to read, compare and reproduce a run."""
    accounting = core.accounting()
    return {
        "version": __version__,
        "python": platform.python_version(),
        "config": config.to_dict(),
        "seed": config.seed,
        "tau": tau,
        "nb_machines": result.nb_machines,
        "workload": {
            "name": Path(workload.source).name if workload.source else workload.name,
            "path": str(workload.source) if workload.source else None,
            "sha256": file_checksum(workload.source),
            "jobs": len(workload),
            "cleaning": workload.cleaning.to_dict() if workload.cleaning else None,
        },
        "accounting": {
            "submitted": len(core.states),
            "completed": accounting.get("completed", 0),
            "killed": accounting.get("killed", 0),
            "rejected": accounting.get("rejected", 0),
            "reject_reasons": dict(sorted(core.reject_reasons.items())),
            "final_states": {state: int(n) for state, n in result.jobs["final_state"].value_counts().items()},
        },
        "metrics": summarize(result.jobs, nb_machines=result.nb_machines, tau=tau),
        "classifier": _classifier_summary(core),
        "predictions": _predictions_summary(core),
        "messages": result.nb_messages,
        "scheduling_time": result.scheduling_time,
        "wall_time": wall_time,
    }


def _classifier_summary(core: DecisionCore) -> dict[str, Any] | None:
    classifier = core.classifier
    if classifier is None:
        return None
    return {
        "method": core.config.classifier,
        "features": core.config.features,
        "divider": core.config.divider,
        "nb_small": len(core.small),
        "kills": core.safeguard.kills if core.safeguard else 0,
        **classifier.summary(),
    }


def _predictions_summary(core: DecisionCore) -> dict[str, Any] | None:
    if core.predictions is None:
        return None
    from scheduler.knowledge.accuracy import accuracy_summary

    return {"predictor": core.config.predictor, "correction": core.config.correction,
            **accuracy_summary(core.predictions.accuracy_table())}


def write_results(prefix: str | Path, result: SimulationResult, summary: dict[str, Any],
                  core: DecisionCore | None = None) -> list[Path]:
    """Write ``PREFIX_jobs.csv``, ``PREFIX_schedule.csv`` (Batsim's formats), ``PREFIX_summary.json``
    and the knowledge reports of :func:`write_knowledge_reports`."""
    prefix = Path(prefix)
    prefix.parent.mkdir(parents=True, exist_ok=True)
    paths = [Path(f"{prefix}_jobs.csv"), Path(f"{prefix}_schedule.csv"), Path(f"{prefix}_summary.json")]
    write_jobs_csv(paths[0], result.jobs)
    write_schedule_csv(paths[1], schedule_summary(result.jobs, result.nb_machines,
                                                  scheduling_time=result.scheduling_time,
                                                  simulation_time=summary.get("wall_time") or 0.0))
    paths[2].write_text(json.dumps(json_ready(summary), indent=2, allow_nan=False) + "\n")
    if core is not None:
        paths += write_knowledge_reports(prefix, core)
    return paths


def write_knowledge_reports(prefix: str | Path, core: DecisionCore) -> list[Path]:
    """What the scheduler learnt, beside a run's ``PREFIX_jobs.csv`` (``report`` reads them): with a
    classifier, ``PREFIX_classifier_weeks.csv`` (quality and divider per week) and
    ``PREFIX_feature_importances.csv`` (Gini importances per week); with a runtime predictor,
    ``PREFIX_predictions.csv`` (per terminated job: first and last prediction, deadline misses, RA, AI)."""
    paths = []
    Path(prefix).parent.mkdir(parents=True, exist_ok=True)
    if core.classifier is not None:
        paths.append(Path(f"{prefix}_classifier_weeks.csv"))
        core.classifier.weekly_report().to_csv(paths[-1], index=False)
        paths.append(Path(f"{prefix}_feature_importances.csv"))
        core.classifier.feature_importances().to_csv(paths[-1])
    if core.predictions is not None:
        paths.append(Path(f"{prefix}_predictions.csv"))
        core.predictions.accuracy_table().to_csv(paths[-1], index=False)
    return paths



def json_ready(value: Any) -> Any:
    """``value`` with numpy scalars made plain and NaN made None (JSON has no NaN)."""
    if isinstance(value, dict):
        return {key: json_ready(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_ready(item) for item in value]
    if hasattr(value, "item"):
        value = value.item()
    if isinstance(value, float) and math.isnan(value):
        return None
    return value
