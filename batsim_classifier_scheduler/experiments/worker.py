"""One run of a sweep, on the worker side: simulate, write its files and its done-marker, report its timings."""

from __future__ import annotations

import json
import os
import socket
import threading
import time
import traceback
from pathlib import Path

from batsim_classifier_scheduler.experiments.traces import cached_workload
from batsim_classifier_scheduler.util.output_files import write_text

RUN_PREFIX = "run"
DONE_FILE = f"{RUN_PREFIX}_done.json"
ERROR_FILE = f"{RUN_PREFIX}_error.txt"


def execute_run(task: dict) -> dict:
    """Run one simulation of a sweep and write its files; never raises (errors are returned).

    ``task`` holds ``directory``, ``workload`` (the pickled workload), ``nb_machines``, ``config``,
    ``tau``, ``hash`` and ``labels``."""
    started_wall = time.time()
    started = time.perf_counter()
    directory = Path(task["directory"])
    where = {"host": socket.gethostname(), "pid": os.getpid(), "thread": threading.get_ident()}
    try:
        from batsim_classifier_scheduler.config import SchedulerConfig
        from batsim_classifier_scheduler.sim.results import run_summary, write_results
        from batsim_classifier_scheduler.sim.simulate import simulate

        directory.mkdir(parents=True, exist_ok=True)
        for stale in directory.glob(f"{RUN_PREFIX}_*"):
            stale.unlink()
        workload, reused = cached_workload(task["workload"])
        loaded = time.perf_counter()
        config = SchedulerConfig.from_dict(dict(task["config"]), f"run {task['labels']['label']}")
        result, core = simulate(workload, config, task["nb_machines"])
        simulated = time.perf_counter()
        outcome = core.outcome()
        summary = run_summary(result, outcome, workload, config, tau=task["tau"], wall_time=simulated - loaded,
                              variant=task["labels"]["variant"])
        summary["sweep"] = {**task["labels"], "hash": task["hash"]}
        write_results(directory / RUN_PREFIX, result, summary, outcome)
        written = time.perf_counter()
        timings = {"load": loaded - started, "load_reused": reused, "simulate": simulated - loaded,
                   "write": written - simulated, "start": started_wall, **where}
        marker = {"hash": task["hash"], **task["labels"], "timings": timings}
        write_text(directory / DONE_FILE, json.dumps(marker, indent=2) + "\n")
        timings["total"] = time.perf_counter() - started
        timings["end"] = started_wall + timings["total"]
        return {"ok": True, "timings": timings}
    except BaseException as exc:  # noqa: BLE001 - a run's failure must not stop the sweep
        if isinstance(exc, KeyboardInterrupt):
            raise
        message = f"{type(exc).__name__}: {exc}".splitlines()[0] if str(exc) else type(exc).__name__
        try:
            directory.mkdir(parents=True, exist_ok=True)
            (directory / ERROR_FILE).write_text(traceback.format_exc())
        except OSError:
            pass
        total = time.perf_counter() - started
        return {"ok": False, "error": message,
                "timings": {"total": total, "start": started_wall, "end": started_wall + total, **where}}


def run_is_done(directory: Path, config_hash: str) -> bool:
    """True when ``directory`` holds a finished run of the configuration ``config_hash``."""
    try:
        marker = json.loads((directory / DONE_FILE).read_text())
    except (OSError, json.JSONDecodeError):
        return False
    return marker.get("hash") == config_hash and (directory / f"{RUN_PREFIX}_jobs.csv").is_file()


def write_error(directory: Path, error: str) -> None:
    """Leave ``error`` in the run folder ``directory`` (as a failed run does), if it can be written."""
    try:
        directory.mkdir(parents=True, exist_ok=True)
        (directory / ERROR_FILE).write_text(error + "\n")
    except OSError:
        pass
