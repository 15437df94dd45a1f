"""What a sweep invocation did: each run's outcome, the timings and overhead made of them, the printed summary."""

from __future__ import annotations

import platform as _platform
import socket
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class RunOutcome:
    """What became of one run."""

    label: str
    directory: str
    status: str  # "done", "skipped" or "failed"
    error: str | None = None
    timings: dict = field(default_factory=dict)


@dataclass
class SweepOutcome:
    """Every run's outcome and the invocation's timings."""

    results_dir: Path
    runs: list[RunOutcome]
    stats: dict

    @property
    def failed(self) -> list[RunOutcome]:
        return [r for r in self.runs if r.status == "failed"]

    @property
    def done(self) -> list[RunOutcome]:
        return [r for r in self.runs if r.status == "done"]

    @property
    def skipped(self) -> list[RunOutcome]:
        return [r for r in self.runs if r.status == "skipped"]


def sweep_stats(outcomes: list[RunOutcome], *, wall: float, runs_wall: float, workers: int,
                prepare: dict[str, float], backend: str | None, started: float) -> dict:
    """Timings of a sweep invocation and the overhead of the sweep machinery.

    A run's own time is the simulation plus writing its result files (``simulate`` + ``write``).
    The machinery's overhead is everything else the workers spend: loading the cached trace,
    bookkeeping in the worker, and the gaps between a worker's consecutive runs (dispatch, and
    process start-up before its first run), plus the one-off parsing of the traces."""
    done = [o for o in outcomes if o.status == "done"]
    run_seconds = sum(o.timings.get("simulate", 0.0) + o.timings.get("write", 0.0) for o in done)
    load = sum(o.timings.get("load", 0.0) for o in done)
    in_worker = sum(o.timings.get("total", 0.0) for o in done) - run_seconds
    executed = [o for o in outcomes if o.timings.get("start") is not None]
    by_worker: dict[tuple, list[RunOutcome]] = {}
    for o in executed:
        by_worker.setdefault((o.timings.get("host"), o.timings.get("pid"), o.timings.get("thread")), []).append(o)
    gaps, startup = 0.0, 0.0
    for items in by_worker.values():
        items.sort(key=lambda o: o.timings["start"])
        startup += max(0.0, items[0].timings["start"] - started)
        for previous, current in zip(items, items[1:]):
            gaps += max(0.0, current.timings["start"] - previous.timings["end"])
    prepare_total = sum(prepare.values())
    overhead = in_worker + gaps + prepare_total
    per_run = [{"label": o.label, "simulate": o.timings.get("simulate"), "write": o.timings.get("write"),
                "load": o.timings.get("load"), "total": o.timings.get("total")} for o in done]
    return {
        "backend": backend,
        "workers": workers,
        "runs": len(outcomes),
        "done": len(done),
        "skipped": sum(o.status == "skipped" for o in outcomes),
        "failed": sum(o.status == "failed" for o in outcomes),
        "wall_seconds": wall,
        "runs_wall_seconds": runs_wall,
        "run_seconds": run_seconds,
        "trace_prepare_seconds": prepare,
        "load_seconds": load,
        "in_worker_overhead_seconds": in_worker,
        "dispatch_gap_seconds": gaps,
        "worker_startup_seconds": startup,
        "overhead_seconds": overhead,
        "overhead_ratio": overhead / run_seconds if run_seconds > 0 else None,
        "mean_run_seconds": run_seconds / len(done) if done else None,
        "mean_overhead_seconds_per_run": overhead / len(done) if done else None,
        "parallel_efficiency": (run_seconds / (runs_wall * workers)) if runs_wall > 0 and workers else None,
        "python": _platform.python_version(),
        "host": socket.gethostname(),
        "per_run": per_run,
    }


def format_outcome(outcome: SweepOutcome) -> str:
    """The summary ``sweep`` prints: counts, timings, then one line per failed run."""
    s = outcome.stats
    lines = [f"{s['runs']} runs: {s['done']} done, {s['skipped']} skipped (already done), {s['failed']} failed"]
    if s["done"]:
        ratio = s["overhead_ratio"]
        lines.append(
            f"wall time {s['wall_seconds']:.1f} s ({s['backend']}); run time {s['run_seconds']:.1f} s in total, "
            f"{s['mean_run_seconds']:.2f} s per run")
        lines.append(
            f"sweep overhead {s['overhead_seconds']:.2f} s = {s['mean_overhead_seconds_per_run']:.3f} s per run "
            f"({ratio:.1%} of run time): trace parsing {sum(s['trace_prepare_seconds'].values()):.2f} s, "
            f"loading cached traces {s['load_seconds']:.2f} s, dispatch gaps {s['dispatch_gap_seconds']:.2f} s")
    lines.append(f"results in {outcome.results_dir}")
    failures: dict[str, list[str]] = {}  # runs failing for one reason (a trace that cannot be had) are told once
    for o in outcome.failed:
        failures.setdefault(o.error, []).append(o.label)
    for error, labels in failures.items():
        runs = labels[0] if len(labels) == 1 else f"{len(labels)} runs ({labels[0]}, ...)"
        lines.append(f"FAILED {runs}: {error}")
    if outcome.failed:
        lines.append(f"errors listed in {outcome.results_dir / 'errors.txt'}")
    return "\n".join(lines)
