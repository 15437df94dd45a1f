"""Batsim 4 JSON workloads: read and write.

A workload file holds ``nb_res``, a ``jobs`` list (``id``, ``subtime``, ``res``,
``walltime``, ``profile`` and any extra fields) and a ``profiles`` map. We write one
shared ``delay`` profile per distinct runtime, named ``delay_<runtime>``, one job per
line, as the reference workloads of ``../shared/reference-schedules`` are. Only ``delay``
profiles can be read: the embedded simulator needs a runtime per job.
"""

from __future__ import annotations

import gzip
import json
import math
from pathlib import Path

import numpy as np
import pandas as pd

from scheduler.errors import WorkloadError
from scheduler.values import is_number, plain
from scheduler.workloads.model import REQUIRED_COLUMNS, Workload
from scheduler.workloads.swf import open_text

_JOB_FIELDS = ("id", "subtime", "res", "walltime", "profile")
#: SWF header fields kept at the top of a converted workload (Batsim ignores them): the
#: classifier rebuilds local submission times from them.
HEADER_KEYS = ("UnixStartTime", "TimeZoneString", "TimeZone")


def read_batsim_json(path: str | Path, *, nb_res: int | None = None) -> Workload:
    """Read a Batsim JSON workload (plain or gzip); job runtimes come from delay profiles.

    ``nb_res`` overrides the file's machine size (every job must still fit).
    A missing or null walltime becomes -1 (no limit), as in Batsim.
    """
    path = Path(path)
    data = _load_json(path)
    if not isinstance(data, dict) or not isinstance(data.get("jobs"), list):
        raise WorkloadError(f"{path}: not a Batsim workload (no 'jobs' list)")
    nb_res = nb_res if nb_res is not None else data.get("nb_res")
    if not isinstance(nb_res, int) or isinstance(nb_res, bool) or nb_res <= 0:
        raise WorkloadError(f"{path}: 'nb_res' must be a positive integer, got {nb_res!r}")
    if not data["jobs"]:
        raise WorkloadError(f"{path}: no jobs")
    if not all(isinstance(job, dict) for job in data["jobs"]):
        raise WorkloadError(f"{path}: every job must be a JSON object")
    jobs = pd.DataFrame.from_records(data["jobs"])
    for name in ("id", "subtime", "res", "profile"):
        _require(path, jobs, name)
    jobs["walltime"] = _numbers(path, jobs, "walltime", default=-1.0, minimum=-1.0)
    jobs["subtime"] = _numbers(path, jobs, "subtime")
    jobs["res"] = _integers(path, jobs, "res", nb_res)
    jobs["id"] = jobs["id"].astype(str)
    jobs["profile"] = jobs["profile"].astype(str)
    jobs["runtime"] = _delays(path, jobs, data.get("profiles"))
    duplicated = jobs["id"][jobs["id"].duplicated()]
    if len(duplicated):
        raise WorkloadError(f"{path}: duplicate job ids {duplicated.unique()[:5].tolist()}")
    extras = [c for c in jobs.columns if c not in REQUIRED_COLUMNS]
    jobs = jobs[list(REQUIRED_COLUMNS) + extras].sort_values("subtime", kind="stable", ignore_index=True)
    header = {key: data[key] for key in HEADER_KEYS if data.get(key) is not None}
    return Workload(jobs=jobs, nb_res=nb_res, source=str(path), header=header)


def write_batsim_json(workload: Workload, path: str | Path, *, description: str | None = None) -> Path:
    """Write ``workload`` as a Batsim JSON file (gzip-compressed if the name ends in ``.gz``)."""
    path = Path(path)
    text = workload_json(workload, description=description)
    opener = gzip.open if path.name.endswith(".gz") else open
    with opener(path, "wt", encoding="utf-8") as out:
        out.write(text)
    return path


def workload_json(workload: Workload, *, description: str | None = None) -> str:
    """The Batsim JSON text of ``workload``: one job per line, shared delay profiles."""
    jobs = workload.jobs
    profiles = _profiles(jobs)
    names = list(_JOB_FIELDS) + workload.extra_columns
    columns = [_ids(jobs["id"])] + [_compact(jobs[name]) for name in names[1:]]
    records = [dict(zip(names, row)) for row in zip(*columns)]
    if jobs[names].isna().to_numpy().any():
        records = [{k: v for k, v in r.items() if not _is_missing(v)} for r in records]
    dumps = json.JSONEncoder(separators=(",", ":"), default=plain).encode
    head = {"nb_res": int(workload.nb_res)}
    if description:
        head["description"] = description
    head.update({key: workload.header[key] for key in HEADER_KEYS if workload.header.get(key) is not None})
    return ("{\n" + "".join(f"{json.dumps(k)}: {json.dumps(v)},\n" for k, v in head.items())
            + '"jobs": [\n' + ",\n".join(map(dumps, records)) + "\n],\n"
            + '"profiles": {\n'
            + ",\n".join(f"{json.dumps(name)}:{dumps({'type': 'delay', 'delay': delay})}"
                         for name, delay in profiles.items())
            + "\n}\n}\n")


def delay_profile_names(runtimes: np.ndarray | pd.Series) -> np.ndarray:
    """``delay_<runtime>`` for each runtime (``delay_3477``, ``delay_12.5``)."""
    unique, inverse = np.unique(np.asarray(runtimes, dtype=float), return_inverse=True)
    names = np.array([f"delay_{int(v)}" if v == int(v) else f"delay_{v!r}" for v in unique.tolist()])
    return names[inverse] if len(unique) else np.array([], dtype=str)


def _load_json(path: Path):
    try:
        with open_text(path) as text:
            return json.load(text)
    except json.JSONDecodeError as exc:
        raise WorkloadError(f"{path}:{exc.lineno}:{exc.colno}: invalid JSON ({exc.msg})") from None
    except (EOFError, OSError) as exc:
        raise WorkloadError(f"{path}: truncated or corrupt gzip data ({exc})") from None


def _require(path: Path, jobs: pd.DataFrame, name: str) -> None:
    if name not in jobs:
        raise WorkloadError(f"{path}: jobs have no '{name}' field")
    missing = jobs[name].isna().to_numpy()
    if missing.any():
        raise WorkloadError(f"{path}: {_job(jobs, missing)} has no '{name}'")


def _numbers(path: Path, jobs: pd.DataFrame, name: str, default: float | None = None,
             minimum: float = 0.0) -> pd.Series:
    if name not in jobs:
        return pd.Series(default, index=jobs.index, dtype=float)
    column = jobs[name]
    if default is not None:
        column = column.where(column.notna(), default)
    values = pd.to_numeric(column, errors="coerce")
    bad = values.isna().to_numpy() | (values.to_numpy(dtype=float, na_value=np.nan) < minimum)
    if bad.any():
        value = column[bad].iloc[0]
        raise WorkloadError(f"{path}: {_job(jobs, bad)} has an invalid '{name}': "
                            f"{value.item() if isinstance(value, np.generic) else value!r}")
    return values.astype(float)


def _integers(path: Path, jobs: pd.DataFrame, name: str, nb_res: int) -> pd.Series:
    values = _numbers(path, jobs, name, minimum=-np.inf)
    bad = (values <= 0) | (values != np.round(values)) | (values > nb_res)
    if bad.any():
        raise WorkloadError(f"{path}: {_job(jobs, bad.to_numpy())} has '{name}' = "
                            f"{values[bad].iloc[0]:g} (must be a whole number in 1..{nb_res})")
    return values.astype(np.int64)


def _delays(path: Path, jobs: pd.DataFrame, profiles) -> np.ndarray:
    if not isinstance(profiles, dict):
        raise WorkloadError(f"{path}: no 'profiles' map")
    delays = {}
    for name in jobs["profile"].unique():
        profile = profiles.get(name)
        if not isinstance(profile, dict):
            first = (jobs["profile"] == name).to_numpy()
            raise WorkloadError(f"{path}: {_job(jobs, first)} uses the unknown profile '{name}'")
        if profile.get("type") != "delay" or not (is_number(delay := profile.get("delay")) and math.isfinite(delay)):
            first = (jobs["profile"] == name).to_numpy()
            raise WorkloadError(f"{path}: {_job(jobs, first)} uses profile '{name}' of type "
                                f"'{profile.get('type')}': only 'delay' profiles with a numeric "
                                "'delay' are supported")
        delays[name] = float(profile["delay"])
    return jobs["profile"].map(delays).to_numpy(dtype=float)


def _profiles(jobs: pd.DataFrame) -> dict[str, float]:
    pairs = jobs[["profile", "runtime"]].drop_duplicates()
    clash = pairs["profile"][pairs["profile"].duplicated()]
    if len(clash):
        raise WorkloadError(f"profile '{clash.iloc[0]}' is used with several runtimes")
    return dict(zip(pairs["profile"], _compact(pairs["runtime"])))


def _ids(ids: pd.Series) -> list:
    """Numeric ids are written as JSON integers (as Batsim's own workloads do)."""
    text = ids.astype(str)
    numeric = text.str.fullmatch(r"0|[1-9][0-9]{0,17}").all()
    return text.astype(np.int64).tolist() if numeric else text.tolist()


def _compact(column: pd.Series) -> list:
    """Python values, with floats that are all whole numbers written as integers."""
    if column.dtype.kind == "f":
        values = column.to_numpy()
        finite = np.isfinite(values)
        if (values[finite] == np.round(values[finite])).all():
            return [int(v) if f else None for v, f in zip(values, finite)] if not finite.all() \
                else values.astype(np.int64).tolist()
    return column.tolist()


def _job(jobs: pd.DataFrame, mask: np.ndarray) -> str:
    index = int(np.flatnonzero(mask)[0])
    job_id = jobs["id"].iloc[index] if "id" in jobs else None
    return f"job #{index}" + (f" (id {job_id})" if job_id is not None and not _is_missing(job_id) else "")


def _is_missing(value) -> bool:
    return value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value))

