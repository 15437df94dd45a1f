"""The sweep's trace cache: each trace found or downloaded, keyed by what its runs depend on, parsed once."""

from __future__ import annotations

import functools
import json
import pickle
import time
from pathlib import Path
from typing import Iterable

from batsim_classifier_scheduler.util.checksums import data_hash, file_sha256
from batsim_classifier_scheduler.errors import WorkloadError
from batsim_classifier_scheduler.experiments.grid import TraceSpec, safe_name
from batsim_classifier_scheduler.util.output_files import atomic_open, write_text

#: The folder of a results folder that holds the parsed traces.
CACHE_DIR = ".cache"


def resolve_trace_file(trace: TraceSpec, trace_dirs: Iterable[str | Path] = (), download: bool = True) -> Path:
    """The local file of a trace: its ``path`` if it exists, else its archive file (or, without one, its
    path's file name) found in ``trace_dirs`` or the trace cache, else downloaded
    (:func:`batsim_classifier_scheduler.workloads.archive.fetch_trace`; with ``download=False``, a :class:`WorkloadError`)."""
    if trace.path and Path(trace.path).is_file():
        return Path(trace.path)
    from batsim_classifier_scheduler.workloads.archive import cached_file, fetch_trace, find_trace

    if trace.archive:
        entry = find_trace(trace.archive)
        found = cached_file(entry.local_file, trace_dirs)
        if found:
            return found
        if not download:
            raise WorkloadError(f"trace {trace.name}: {entry.local_file} is not downloaded yet")
        return fetch_trace(trace.archive)
    found = cached_file(Path(trace.path).name, trace_dirs) if trace.path else None
    if found:
        return found
    raise WorkloadError(f"trace {trace.name}: {trace.path}: no such file")


def trace_key(trace: TraceSpec, path: Path) -> dict:
    """Everything about a trace that its runs' results depend on."""
    platform_size = None
    if trace.platform:
        from batsim_classifier_scheduler.platforms import read_platform

        platform_size = read_platform(trace.platform).nb_compute_hosts
    key = {"name": trace.name, "file": path.name, "sha256": file_sha256(path), "nb_res": trace.nb_res,
           "platform_hosts": platform_size, "max_jobs": trace.max_jobs}
    return {**key, "sacct": trace.sacct} if trace.sacct else key  # a key without it is as before


def cache_file(cache_dir: Path, key: dict) -> Path:
    """Where the trace of ``key`` is cached in ``cache_dir``."""
    return cache_dir / f"{safe_name(key['name'])}-{data_hash(key)}.pkl"


def prepare_trace(path: str, key: dict, target: str) -> dict:
    """Parse and clean a trace once and pickle the :class:`Workload` into ``target`` (worker side).

    Returns ``{"jobs", "nb_machines", "cleaning", "seconds"}`` (``cleaning``: the SWF cleaning report, as a
    dict); a sidecar ``target.json`` holds the same."""
    started = time.perf_counter()
    from batsim_classifier_scheduler.workloads import load_workload

    sacct = None
    if key.get("sacct"):
        import msgspec

        from batsim_classifier_scheduler.workloads.sacct_fields import SacctOptions

        sacct = msgspec.convert(key["sacct"], SacctOptions)
    workload = load_workload(path, nb_res=key.get("nb_res"), sacct=sacct)
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


def cached_info(target: Path, key: dict) -> dict | None:
    """What :func:`prepare_trace` returned for ``key`` into ``target``, if the cache holds it, else None."""
    sidecar = target.with_suffix(".json")
    if not (target.is_file() and sidecar.is_file()):
        return None
    try:
        info = json.loads(sidecar.read_text())
    except (OSError, json.JSONDecodeError):
        return None
    return info if info.get("key") == key else None


def cached_workload(path: str):
    """The pickled workload at ``path`` and whether its file was read before: the file is read once per
    process (two kept at most), and each run gets its own copy, so no run can see another's changes (runs
    may share a process or a thread)."""
    hits = _workload_bytes.cache_info().hits
    data = _workload_bytes(path)
    return pickle.loads(data), _workload_bytes.cache_info().hits > hits


@functools.lru_cache(maxsize=2)
def _workload_bytes(path: str) -> bytes:
    return Path(path).read_bytes()
