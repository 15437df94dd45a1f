"""A run's results: metrics, accounting and provenance, and the files written next to them."""

from __future__ import annotations

import hashlib
import json
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
        "messages": result.nb_messages,
        "scheduling_time": result.scheduling_time,
        "wall_time": wall_time,
    }


def write_results(prefix: str | Path, result: SimulationResult, summary: dict[str, Any]) -> list[Path]:
    """Write ``PREFIX_jobs.csv``, ``PREFIX_schedule.csv`` (Batsim's formats) and ``PREFIX_summary.json``."""
    prefix = Path(prefix)
    prefix.parent.mkdir(parents=True, exist_ok=True)
    paths = [Path(f"{prefix}_jobs.csv"), Path(f"{prefix}_schedule.csv"), Path(f"{prefix}_summary.json")]
    write_jobs_csv(paths[0], result.jobs)
    write_schedule_csv(paths[1], schedule_summary(result.jobs, result.nb_machines,
                                                  scheduling_time=result.scheduling_time,
                                                  simulation_time=summary.get("wall_time") or 0.0))
    paths[2].write_text(json.dumps(summary, indent=2, default=_json_default) + "\n")
    return paths


def _json_default(value: Any) -> Any:
    if hasattr(value, "item"):  # numpy scalars
        return value.item()
    raise TypeError(f"cannot serialise {type(value).__name__}")
