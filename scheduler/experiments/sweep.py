"""Run a sweep: every run of a :class:`~scheduler.experiments.grid.SweepConfig`, in parallel, resumably.

Layout of a results folder::

    RESULTS/
      sweep_config.json            the config as given, and the resolved traces
      sweep_stats.json             timings of the last invocation (wall time, per-run overhead)
      errors.txt                   one line per failed run of the last invocation (absent if none)
      .cache/<trace>-<key>.pkl     each trace parsed and cleaned once (a pickled Workload)
      <trace>/<policy>/<variant>/seed<k>/
        run_jobs.csv, run_schedule.csv, run_summary.json     as ``simulate -e .../run`` writes them
        run_classifier_weeks.csv, run_feature_importances.csv  (runs with a classifier)
        run_done.json              written last: the run's config hash and timings
        run_error.txt              the traceback of a failed run

**Resuming.** A run whose ``run_done.json`` holds the hash of its current configuration (trace file
checksum, cut and machine size, every scheduling option, the checksum of every other file it reads,
tau: :attr:`RunSpec.config_hash`) is skipped;
``force`` reruns everything. A changed parameter changes the hash of the runs it affects only (a run
without a classifier ignores the classifier's options). The hash does not cover the code: after
changing the scheduler itself, rerun with ``force``.

**Execution.** A local process pool (:class:`concurrent.futures.ProcessPoolExecutor`) by default, or a
Dask distributed cluster (``dask_scheduler``; ``RESULTS`` must then be on a file system the workers
share). Traces are resolved (found locally or downloaded) and checksummed in the calling process,
parsed once by a worker into ``.cache``, and each run's worker loads the pickle (once per worker
process). Runs are started longest first.

**Failures.** A run that raises is reported (its error in ``errors.txt``, its traceback in
``run_error.txt``); the other runs go on. :func:`run_sweep` returns the outcome of every run.
"""

from __future__ import annotations

import concurrent.futures
import heapq
import itertools
import json
import os
import pickle
import platform as _platform
import socket
import sys
import threading
import time
import traceback
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable

from scheduler.checksums import data_hash, file_sha256
from scheduler.errors import ConfigError, SchedulerError, WorkloadError
from scheduler.experiments.grid import RunSpec, SweepConfig, TraceSpec, safe_name
from scheduler.outputs import atomic_open, write_text
from scheduler.values import json_ready

RUN_PREFIX = "run"
DONE_FILE = f"{RUN_PREFIX}_done.json"
ERROR_FILE = f"{RUN_PREFIX}_error.txt"
CACHE_DIR = ".cache"


# --- outcomes -------------------------------------------------------------------------------------

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


# --- traces ---------------------------------------------------------------------------------------

def resolve_trace_file(trace: TraceSpec, trace_dirs: Iterable[str | Path] = (), download: bool = True) -> Path:
    """The local file of a trace: its ``path`` if it exists, else its archive file found in
    ``trace_dirs`` or the trace cache, else downloaded (:func:`scheduler.workloads.archive.fetch_trace`;
    with ``download=False``, a :class:`WorkloadError`)."""
    if trace.path and Path(trace.path).is_file():
        return Path(trace.path)
    if trace.archive:
        from scheduler.workloads.archive import default_cache_dir, fetch_trace, find_trace

        entry = find_trace(trace.archive)
        for folder in [*trace_dirs, default_cache_dir()]:
            for name in dict.fromkeys((entry.local_file, entry.file)):
                candidate = Path(folder).expanduser() / name
                if candidate.is_file() and (name == entry.local_file or entry.subset is None):
                    return candidate
        if not download:
            raise WorkloadError(f"trace {trace.name}: {entry.local_file} is not downloaded yet")
        return fetch_trace(trace.archive)
    raise WorkloadError(f"trace {trace.name}: {trace.path}: no such file")


def trace_key(trace: TraceSpec, path: Path) -> dict:
    """Everything about a trace that its runs' results depend on."""
    platform_size = None
    if trace.platform:
        from scheduler.platforms import read_platform

        platform_size = read_platform(trace.platform).nb_compute_hosts
    return {"name": trace.name, "file": path.name, "sha256": file_sha256(path), "nb_res": trace.nb_res,
            "platform_hosts": platform_size, "max_jobs": trace.max_jobs}


def input_checksums(config: dict, known: dict[str, str] | None = None) -> dict[str, str]:
    """The SHA-256 of each file a run with ``config`` reads besides its trace (θ files, a saved
    classifier), by path; ``known`` caches them across runs."""
    from scheduler.compose import input_files
    from scheduler.config import SchedulerConfig

    known = {} if known is None else known
    checksums = {}
    for path in input_files(SchedulerConfig(**config)):
        if path not in known:
            try:
                known[path] = file_sha256(path)
            except OSError as exc:
                raise ConfigError(f"{path}: cannot read ({exc.strerror})") from None
        checksums[path] = known[path]
    return checksums


def cache_file(cache_dir: Path, key: dict) -> Path:
    return cache_dir / f"{safe_name(key['name'])}-{data_hash(key)}.pkl"


def prepare_trace(path: str, key: dict, target: str) -> dict:
    """Parse and clean a trace once and pickle the :class:`Workload` into ``target`` (worker side).

    Returns ``{"jobs", "nb_machines", "cleaning", "seconds"}`` (``cleaning``: the SWF cleaning report, as a
    dict); a sidecar ``target.json`` holds the same."""
    started = time.perf_counter()
    from scheduler.workloads import load_workload

    workload = load_workload(path, nb_res=key.get("nb_res"))
    if key.get("max_jobs"):
        workload.jobs = workload.jobs.iloc[: key["max_jobs"]].reset_index(drop=True)
    nb_machines = key.get("platform_hosts") or workload.nb_res
    target = Path(target)
    with atomic_open(target, "wb") as stream:
        pickle.dump(workload, stream, protocol=pickle.HIGHEST_PROTOCOL)
    info = {"jobs": len(workload), "nb_machines": int(nb_machines), "key": key,
            "cleaning": workload.cleaning.to_dict() if workload.cleaning else None,
            "seconds": time.perf_counter() - started}
    write_text(target.with_suffix(".json"), json.dumps(info, indent=2) + "\n")
    return info


def _cached_info(target: Path, key: dict) -> dict | None:
    sidecar = target.with_suffix(".json")
    if not (target.is_file() and sidecar.is_file()):
        return None
    try:
        info = json.loads(sidecar.read_text())
    except (OSError, json.JSONDecodeError):
        return None
    return info if info.get("key") == key else None


_WORKLOADS: dict[str, bytes] = {}
_WORKLOADS_LOCK = threading.Lock()


def _load_workload(path: str):
    """The pickled workload at ``path``: the file is read once per process (two kept at most), and each
    run gets its own copy, so no run can see another's changes (runs may share a process or a thread)."""
    with _WORKLOADS_LOCK:
        data = _WORKLOADS.get(path)
    reused = data is not None
    if data is None:
        data = Path(path).read_bytes()
        with _WORKLOADS_LOCK:
            while len(_WORKLOADS) >= 2:
                _WORKLOADS.pop(next(iter(_WORKLOADS)))
            _WORKLOADS[path] = data
    return pickle.loads(data), reused


# --- one run (worker side) ------------------------------------------------------------------------

def execute_run(task: dict) -> dict:
    """Run one simulation of a sweep and write its files; never raises (errors are returned).

    ``task`` holds ``directory``, ``workload`` (the pickled workload), ``nb_machines``, ``config``,
    ``tau``, ``hash`` and ``labels``."""
    started_wall = time.time()
    started = time.perf_counter()
    directory = Path(task["directory"])
    where = {"host": socket.gethostname(), "pid": os.getpid(), "thread": threading.get_ident()}
    try:
        from scheduler.config import SchedulerConfig
        from scheduler.sim.results import run_summary, write_results
        from scheduler.sim.simulate import simulate

        directory.mkdir(parents=True, exist_ok=True)
        for stale in directory.glob(f"{RUN_PREFIX}_*"):
            stale.unlink()
        workload, reused = _load_workload(task["workload"])
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


# --- backends -------------------------------------------------------------------------------------

class LocalBackend:
    """A process pool on this machine (``workers=0``: everything in the calling process)."""

    def __init__(self, workers: int | None = None) -> None:
        self.workers = (os.cpu_count() or 1) if workers is None else workers
        if self.workers < 0:
            raise ConfigError(f"--workers must be 0 (in-process) or more, got {self.workers}")
        if self.workers == 0:
            self.pool = _InlineExecutor()
        else:
            # workers forked from this process inherit the modules imported here
            import scheduler.knowledge.classifier  # noqa: F401
            import scheduler.sim.results  # noqa: F401
            import scheduler.sim.simulate  # noqa: F401

            self.pool = concurrent.futures.ProcessPoolExecutor(max_workers=self.workers)
        self.description = f"local, {self.workers} worker(s)" if self.workers else "local, in-process"
        self.capacity = max(self.workers, 1)

    def submit(self, fn: Callable, *args: Any, priority: float = 0.0):
        return self.pool.submit(fn, *args)

    def wait_any(self, pending: set) -> set:
        done, _ = concurrent.futures.wait(pending, return_when=concurrent.futures.FIRST_COMPLETED)
        return done

    def close(self, cancel: bool = False) -> None:
        self.pool.shutdown(wait=not cancel, cancel_futures=cancel)


class _InlineExecutor(concurrent.futures.Executor):
    """Runs each submitted call at once, in the calling process."""

    def submit(self, fn, /, *args, **kwargs):
        future = concurrent.futures.Future()
        try:
            future.set_result(fn(*args, **kwargs))
        except BaseException as exc:  # noqa: BLE001
            future.set_exception(exc)
        return future


class DaskBackend:
    """A Dask distributed cluster, by scheduler address (``tcp://host:8786``) or an existing client."""

    def __init__(self, address: str | None = None, client: Any = None) -> None:
        try:
            import distributed
        except ImportError:
            raise ConfigError("--dask-scheduler needs Dask distributed: pip install 'dask[distributed]' "
                              "(on this machine and on the workers)") from None
        self.distributed = distributed
        self.own_client = client is None
        try:
            self.client = client or distributed.Client(address, timeout="30s")
        except (OSError, TimeoutError) as exc:
            raise ConfigError(f"cannot connect to the Dask scheduler at {address} ({exc})") from None
        workers = self.client.scheduler_info().get("workers", {})
        self.workers = sum(w.get("nthreads", 1) for w in workers.values()) or 1
        self.description = f"dask {self.client.scheduler.address}, {len(workers)} worker(s), {self.workers} thread(s)"
        self.capacity = None  # everything at once: the Dask scheduler balances, by priority

    def submit(self, fn: Callable, *args: Any, priority: float = 0.0):
        return self.client.submit(fn, *args, pure=False, priority=priority, key=f"{fn.__name__}-{uuid.uuid4().hex}")

    def wait_any(self, pending: set) -> set:
        done, _ = self.distributed.wait(list(pending), return_when="FIRST_COMPLETED")
        return set(done)

    def close(self, cancel: bool = False) -> None:
        if self.own_client:
            self.client.close()


# --- the sweep ------------------------------------------------------------------------------------

def run_sweep(config: SweepConfig, results_dir: str | Path, *, workers: int | None = None,
              dask_scheduler: str | None = None, dask_client: Any = None, force: bool = False,
              trace_dirs: Iterable[str | Path] = (), progress: bool = False,
              log: Callable[[str], None] | None = None) -> SweepOutcome:
    """Run every unfinished run of ``config`` into ``results_dir`` (see the module doc)."""
    from tqdm import tqdm

    from scheduler.workloads.cleaning import CleaningReport

    started_wall = time.time()
    started = time.perf_counter()
    results = Path(results_dir).absolute()  # the workers' working directory may be another
    results.mkdir(parents=True, exist_ok=True)
    cache_dir = results / CACHE_DIR
    trace_dirs = [*trace_dirs, *config.trace_dirs]
    runs = config.runs()
    outcomes: dict[str, RunOutcome] = {}

    # Resolve and checksum every trace here: it decides what is already done.
    traces: dict[str, dict] = {}
    for trace in config.traces:
        try:
            try:
                path = resolve_trace_file(trace, trace_dirs, download=False)
            except WorkloadError:
                if not trace.archive:
                    raise
                if log:
                    log(f"trace {trace.name}: downloading {trace.archive} from the Parallel Workloads Archive")
                path = resolve_trace_file(trace, trace_dirs)
            key = trace_key(trace, path)
            traces[trace.name] = {"path": str(path.absolute()), "key": key, "cache": str(cache_file(cache_dir, key))}
        except SchedulerError as exc:
            traces[trace.name] = {"error": f"{type(exc).__name__}: {exc}"}
        except OSError as exc:
            traces[trace.name] = {"error": f"{type(exc).__name__}: {trace.name}: {exc}"}
    _write_json(results / "sweep_config.json", {
        "name": config.name, "source": config.source, "policies": config.policies,
        "variants": [{"name": v.name, "variant": v.base, **v.options} for v in config.variants],
        "seeds": config.seeds, "tau": config.tau, "options": config.options,
        "traces": [{**t.describe(), **{k: v for k, v in traces[t.name].items() if k != "cache"}}
                   for t in config.traces],
    })

    pending_runs: dict[str, list[RunSpec]] = {}
    checksums: dict[str, str] = {}
    for run in runs:
        directory = results / run.relative_dir
        info = traces[run.trace.name]
        if "error" in info:
            outcomes[run.label] = RunOutcome(run.label, str(directory), "failed", info["error"])
            _write_error(directory, info["error"])
            continue
        run.trace_key = info["key"]
        try:
            run.inputs = input_checksums(run.config, checksums)
        except ConfigError as exc:
            outcomes[run.label] = RunOutcome(run.label, str(directory), "failed", f"ConfigError: {exc}")
            _write_error(directory, f"ConfigError: {exc}")
            continue
        if not force and run_is_done(directory, run.config_hash):
            outcomes[run.label] = RunOutcome(run.label, str(directory), "skipped")
            continue
        pending_runs.setdefault(run.trace.name, []).append(run)

    backend = None
    prepare_seconds: dict[str, float] = {}
    to_run = sum(len(v) for v in pending_runs.values())
    if to_run:
        backend = (DaskBackend(dask_scheduler, dask_client) if dask_scheduler or dask_client
                   else LocalBackend(workers))
    if log:
        failed = sum(o.status == "failed" for o in outcomes.values())
        log(f"sweep {config.name}: {len(runs)} runs, {to_run} to run, "
            f"{sum(o.status == 'skipped' for o in outcomes.values())} already done"
            + (f", {failed} without a trace" if failed else "")
            + (f" ({backend.description})" if backend else ""))
    bar = tqdm(total=to_run, unit="run", disable=not progress or not to_run, file=sys.stderr, dynamic_ncols=True)
    pending: dict[Any, tuple[str, Any]] = {}
    ready: list[tuple[float, int, dict, RunSpec]] = []  # a heap: the longest runs first
    order = itertools.count()
    runs_started = time.perf_counter()
    try:
        def queue_runs(name: str, info: dict) -> None:
            if log and info.get("cleaning"):
                with tqdm.external_write_mode(file=sys.stderr):
                    log(f"trace {name}: {CleaningReport(**info['cleaning']).format()}")
            for run in pending_runs[name]:
                task = {"directory": str(results / run.relative_dir), "workload": traces[name]["cache"],
                        "nb_machines": info["nb_machines"], "config": run.config, "tau": run.tau,
                        "hash": run.config_hash,
                        "labels": {"label": run.label, "trace": run.trace.name, "policy": run.policy,
                                   "variant": run.variant, "seed": run.seed, "trace_file": traces[name]["path"]}}
                heapq.heappush(ready, (-run.cost(info["jobs"]), next(order), task, run))

        def submit_ready() -> None:
            # the local pool gets one run per free worker, so that the longest ready run always goes next
            if backend is None:
                return
            capacity = backend.capacity
            while ready and (capacity is None or sum(k == "run" for k, _ in pending.values()) < capacity):
                cost, _, task, run = heapq.heappop(ready)
                pending[backend.submit(execute_run, task, priority=-cost)] = ("run", run)

        for name in pending_runs:
            info = _cached_info(Path(traces[name]["cache"]), traces[name]["key"])
            if info is not None:
                prepare_seconds[name] = 0.0
                queue_runs(name, info)
            else:
                future = backend.submit(prepare_trace, traces[name]["path"], traces[name]["key"],
                                        traces[name]["cache"])
                pending[future] = ("trace", name)
        submit_ready()
        while pending:
            for future in backend.wait_any(set(pending)):
                kind, item = pending.pop(future)
                if kind == "trace":
                    try:
                        info = future.result()
                    except Exception as exc:  # noqa: BLE001 - the trace's runs fail, the others go on
                        error = f"{type(exc).__name__}: {exc}".splitlines()[0]
                        for run in pending_runs[item]:
                            directory = results / run.relative_dir
                            outcomes[run.label] = RunOutcome(run.label, str(directory), "failed", error)
                            _write_error(directory, error)
                            bar.update(1)
                        continue
                    prepare_seconds[item] = info["seconds"]
                    queue_runs(item, info)
                    continue
                run = item
                directory = str(results / run.relative_dir)
                try:
                    answer = future.result()
                except Exception as exc:  # noqa: BLE001 - e.g. a worker process died
                    answer = {"ok": False, "error": f"{type(exc).__name__}: {exc}".splitlines()[0], "timings": {}}
                if answer["ok"]:
                    outcomes[run.label] = RunOutcome(run.label, directory, "done", timings=answer["timings"])
                else:
                    outcomes[run.label] = RunOutcome(run.label, directory, "failed", answer["error"],
                                                     timings=answer.get("timings", {}))
                    bar.write(f"failed: {run.label}: {answer['error']}", file=sys.stderr)
                bar.update(1)
            submit_ready()
    except BaseException:
        if backend:
            backend.close(cancel=True)
        bar.close()
        raise
    bar.close()
    runs_wall = time.perf_counter() - runs_started
    if backend:
        backend.close()

    ordered = [outcomes[run.label] for run in runs]
    stats = sweep_stats(ordered, wall=time.perf_counter() - started, runs_wall=runs_wall,
                        workers=backend.workers if backend else 0, prepare=prepare_seconds,
                        backend=backend.description if backend else None, started=started_wall)
    _write_json(results / "sweep_stats.json", stats)
    errors = results / "errors.txt"
    failed = [o for o in ordered if o.status == "failed"]
    if failed:
        write_text(errors, "".join(f"{o.label}: {o.error}\n" for o in failed))
    elif errors.exists():
        errors.unlink()
    return SweepOutcome(results, ordered, stats)


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


def _write_error(directory: Path, error: str) -> None:
    try:
        directory.mkdir(parents=True, exist_ok=True)
        (directory / ERROR_FILE).write_text(error + "\n")
    except OSError:
        pass


def _write_json(path: Path, data: dict) -> None:
    write_text(path, json.dumps(json_ready(data), indent=2, default=str) + "\n")
