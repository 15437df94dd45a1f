"""Run a sweep: every run of a :class:`~batsim_classifier_scheduler.experiments.grid.SweepConfig`, in parallel, resumably.

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

This module is the runner (:class:`SweepRunner`); the trace cache is :mod:`~batsim_classifier_scheduler.experiments.traces`,
one run on a worker :mod:`~batsim_classifier_scheduler.experiments.worker`, the pool and Dask
:mod:`~batsim_classifier_scheduler.experiments.backends`, the outcomes and timings :mod:`~batsim_classifier_scheduler.experiments.outcomes`.
"""

from __future__ import annotations

import heapq
import itertools
import json
import sys
import time
from pathlib import Path
from typing import Any, Callable, Iterable

from batsim_classifier_scheduler.util.checksums import file_sha256
from batsim_classifier_scheduler.errors import ConfigError, SchedulerError, WorkloadError
from batsim_classifier_scheduler.experiments.backends import DaskBackend, LocalBackend
from batsim_classifier_scheduler.experiments.grid import RunSpec, SweepConfig
from batsim_classifier_scheduler.experiments.outcomes import RunOutcome, SweepOutcome, format_outcome, sweep_stats
from batsim_classifier_scheduler.experiments.traces import (
    CACHE_DIR, cache_file, cached_info, prepare_trace, resolve_trace_file, trace_key,
)
from batsim_classifier_scheduler.experiments.worker import execute_run, run_is_done, write_error
from batsim_classifier_scheduler.util.output_files import write_text
from batsim_classifier_scheduler.util.values import json_ready

__all__ = ["SweepRunner", "format_outcome", "input_checksums", "run_sweep"]


def run_sweep(config: SweepConfig, results_dir: str | Path, *, workers: int | None = None,
              dask_scheduler: str | None = None, dask_client: Any = None, force: bool = False,
              trace_dirs: Iterable[str | Path] = (), progress: bool = False,
              log: Callable[[str], None] | None = None) -> SweepOutcome:
    """Run every unfinished run of ``config`` into ``results_dir`` (see the module doc)."""
    return SweepRunner(config, results_dir, workers=workers, dask_scheduler=dask_scheduler, dask_client=dask_client,
                       force=force, trace_dirs=trace_dirs, progress=progress, log=log).run()


def input_checksums(config: dict, known: dict[str, str] | None = None) -> dict[str, str]:
    """The SHA-256 of each file a run with ``config`` reads besides its trace (θ files, a saved
    classifier), by path; ``known`` caches them across runs."""
    from batsim_classifier_scheduler.compose import input_files
    from batsim_classifier_scheduler.config import SchedulerConfig

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


class SweepRunner:
    """One invocation of a sweep; :meth:`run` takes its steps in order."""

    def __init__(self, config: SweepConfig, results_dir: str | Path, *, workers: int | None = None,
                 dask_scheduler: str | None = None, dask_client: Any = None, force: bool = False,
                 trace_dirs: Iterable[str | Path] = (), progress: bool = False,
                 log: Callable[[str], None] | None = None) -> None:
        self.config = config
        self.results = Path(results_dir).absolute()  # the workers' working directory may be another
        self.cache_dir = self.results / CACHE_DIR
        self.trace_dirs = [*trace_dirs, *config.trace_dirs]
        self.workers, self.dask_scheduler, self.dask_client = workers, dask_scheduler, dask_client
        self.force, self.progress, self.log = force, progress, log
        self.runs: list[RunSpec] = []
        self.outcomes: dict[str, RunOutcome] = {}
        self.traces: dict[str, dict] = {}  # by name: its path, key and cache file, or the error that stops its runs
        self.pending_runs: dict[str, list[RunSpec]] = {}  # by trace: the runs to execute
        self.prepare_seconds: dict[str, float] = {}
        self.backend: LocalBackend | DaskBackend | None = None
        self.bar: Any = None
        self.pending: dict[Any, tuple[str, Any]] = {}  # submitted futures: ("trace", name) or ("run", RunSpec)
        self.ready: list[tuple[float, int, dict, RunSpec]] = []  # a heap: the longest runs first
        self.order = itertools.count()

    def run(self) -> SweepOutcome:
        started_wall = time.time()
        started = time.perf_counter()
        self.results.mkdir(parents=True, exist_ok=True)
        self.runs = self.config.runs()
        self.resolve_traces()
        self.write_config()
        self.sort_runs()
        self.open_backend()
        runs_started = time.perf_counter()
        self.execute()
        runs_wall = time.perf_counter() - runs_started
        if self.backend:
            self.backend.close()
        return self.finish(wall=time.perf_counter() - started, runs_wall=runs_wall, started=started_wall)

    def resolve_traces(self) -> None:
        """Find (or download) and checksum every trace here: it decides what is already done."""
        for trace in self.config.traces:
            try:
                try:
                    path = resolve_trace_file(trace, self.trace_dirs, download=False)
                except WorkloadError:
                    if not trace.archive:
                        raise
                    if self.log:
                        self.log(f"trace {trace.name}: downloading {trace.archive} from the Parallel Workloads Archive")
                    path = resolve_trace_file(trace, self.trace_dirs)
                key = trace_key(trace, path)
                self.traces[trace.name] = {"path": str(path.absolute()), "key": key,
                                           "cache": str(cache_file(self.cache_dir, key))}
            except SchedulerError as exc:
                self.traces[trace.name] = {"error": f"{type(exc).__name__}: {exc}"}
            except OSError as exc:
                self.traces[trace.name] = {"error": f"{type(exc).__name__}: {trace.name}: {exc}"}

    def write_config(self) -> None:
        config = self.config
        _write_json(self.results / "sweep_config.json", {
            "name": config.name, "source": config.source, "policies": config.policies,
            "variants": [{"name": v.name, "variant": v.base, **v.options} for v in config.variants],
            "seeds": config.seeds, "tau": config.tau, "options": config.options,
            "traces": [{**t.describe(), **{k: v for k, v in self.traces[t.name].items() if k != "cache"}}
                       for t in config.traces],
        })

    def sort_runs(self) -> None:
        """Each run fails (no trace, an unreadable input), is skipped (done already) or waits for execution."""
        checksums: dict[str, str] = {}
        for run in self.runs:
            directory = self.results / run.relative_dir
            info = self.traces[run.trace.name]
            if "error" in info:
                self._fail(run, info["error"])
                continue
            run.trace_key = info["key"]
            try:
                run.inputs = input_checksums(run.config, checksums)
            except ConfigError as exc:
                self._fail(run, f"ConfigError: {exc}")
                continue
            if not self.force and run_is_done(directory, run.config_hash):
                self.outcomes[run.label] = RunOutcome(run.label, str(directory), "skipped")
                continue
            self.pending_runs.setdefault(run.trace.name, []).append(run)

    def open_backend(self) -> None:
        """Start the backend (when there is something to run) and say what is to be done."""
        to_run = sum(len(v) for v in self.pending_runs.values())
        if to_run:
            self.backend = (DaskBackend(self.dask_scheduler, self.dask_client)
                            if self.dask_scheduler or self.dask_client else LocalBackend(self.workers))
        if self.log:
            outcomes = self.outcomes.values()
            failed = sum(o.status == "failed" for o in outcomes)
            self.log(f"sweep {self.config.name}: {len(self.runs)} runs, {to_run} to run, "
                     f"{sum(o.status == 'skipped' for o in outcomes)} already done"
                     + (f", {failed} without a trace" if failed else "")
                     + (f" ({self.backend.description})" if self.backend else ""))
        from tqdm import tqdm

        self.bar = tqdm(total=to_run, unit="run", disable=not self.progress or not to_run, file=sys.stderr,
                        dynamic_ncols=True)

    def execute(self) -> None:
        """Prepare the traces not cached yet, then execute every pending run, longest first."""
        try:
            for name in self.pending_runs:
                trace = self.traces[name]
                info = cached_info(Path(trace["cache"]), trace["key"])
                if info is not None:
                    self.prepare_seconds[name] = 0.0
                    self._queue_runs(name, info)
                else:
                    future = self.backend.submit(prepare_trace, trace["path"], trace["key"], trace["cache"])
                    self.pending[future] = ("trace", name)
            self._submit_ready()
            while self.pending:
                for future in self.backend.wait_any(set(self.pending)):
                    kind, item = self.pending.pop(future)
                    if kind == "trace":
                        self._trace_prepared(item, future)
                    else:
                        self._run_finished(item, future)
                self._submit_ready()
        except BaseException:
            if self.backend:
                self.backend.close(cancel=True)
            self.bar.close()
            raise
        self.bar.close()

    def finish(self, *, wall: float, runs_wall: float, started: float) -> SweepOutcome:
        """Write the invocation's statistics and the list of failed runs."""
        ordered = [self.outcomes[run.label] for run in self.runs]
        backend = self.backend
        stats = sweep_stats(ordered, wall=wall, runs_wall=runs_wall, workers=backend.workers if backend else 0,
                            prepare=self.prepare_seconds, backend=backend.description if backend else None,
                            started=started)
        _write_json(self.results / "sweep_stats.json", stats)
        errors = self.results / "errors.txt"
        failed = [o for o in ordered if o.status == "failed"]
        if failed:
            write_text(errors, "".join(f"{o.label}: {o.error}\n" for o in failed))
        elif errors.exists():
            errors.unlink()
        return SweepOutcome(self.results, ordered, stats)

    # --- the steps' parts -----------------------------------------------------------------------------

    def _fail(self, run: RunSpec, error: str) -> None:
        directory = self.results / run.relative_dir
        self.outcomes[run.label] = RunOutcome(run.label, str(directory), "failed", error)
        write_error(directory, error)

    def _queue_runs(self, name: str, info: dict) -> None:
        """Make the tasks of trace ``name``'s runs, now that it is cached (``info``: what its preparation said)."""
        if self.log and info.get("cleaning"):
            from tqdm import tqdm

            from batsim_classifier_scheduler.workloads.cleaning_report import CleaningReport

            with tqdm.external_write_mode(file=sys.stderr):
                self.log(f"trace {name}: {CleaningReport(**info['cleaning']).format()}")
        trace = self.traces[name]
        for run in self.pending_runs[name]:
            task = {"directory": str(self.results / run.relative_dir), "workload": trace["cache"],
                    "nb_machines": info["nb_machines"], "config": run.config, "tau": run.tau,
                    "hash": run.config_hash,
                    "labels": {"label": run.label, "trace": run.trace.name, "policy": run.policy,
                               "variant": run.variant, "seed": run.seed, "trace_file": trace["path"],
                               "max_jobs": run.trace.max_jobs}}
            heapq.heappush(self.ready, (-run.cost(info["jobs"]), next(self.order), task, run))

    def _submit_ready(self) -> None:
        """Submit ready runs: the local pool gets one per free worker, so that the longest ready run always
        goes next; Dask gets them all, by priority."""
        backend = self.backend
        if backend is None:
            return
        capacity = backend.capacity
        while self.ready and (capacity is None or sum(k == "run" for k, _ in self.pending.values()) < capacity):
            cost, _, task, run = heapq.heappop(self.ready)
            self.pending[backend.submit(execute_run, task, priority=-cost)] = ("run", run)

    def _trace_prepared(self, name: str, future: Any) -> None:
        try:
            info = future.result()
        except Exception as exc:  # noqa: BLE001 - the trace's runs fail, the others go on
            error = f"{type(exc).__name__}: {exc}".splitlines()[0]
            for run in self.pending_runs[name]:
                self._fail(run, error)
                self.bar.update(1)
            return
        self.prepare_seconds[name] = info["seconds"]
        self._queue_runs(name, info)

    def _run_finished(self, run: RunSpec, future: Any) -> None:
        directory = str(self.results / run.relative_dir)
        try:
            answer = future.result()
        except Exception as exc:  # noqa: BLE001 - e.g. a worker process died
            answer = {"ok": False, "error": f"{type(exc).__name__}: {exc}".splitlines()[0], "timings": {}}
        if answer["ok"]:
            self.outcomes[run.label] = RunOutcome(run.label, directory, "done", timings=answer["timings"])
        else:
            self.outcomes[run.label] = RunOutcome(run.label, directory, "failed", answer["error"],
                                                  timings=answer.get("timings", {}))
            self.bar.write(f"failed: {run.label}: {answer['error']}", file=sys.stderr)
        self.bar.update(1)


def _write_json(path: Path, data: dict) -> None:
    write_text(path, json.dumps(json_ready(data), indent=2, default=str) + "\n")
