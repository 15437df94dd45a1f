"""Write an SWF job table as ``sacct --parsable2`` output: the round trip of the tests and the benchmark.

Every SWF job becomes the record its Slurm would have kept: a job with a runtime started at submit + wait
and ran it; one without (runtime -1) was cancelled before it started; status 1 is ``COMPLETED``, 0
``FAILED``, 5 ``CANCELLED``. Read back by :func:`~batsim_classifier_scheduler.workloads.sacct.convert_sacct`, the jobs the
SWF's cleaning keeps are kept with the same times, sizes and requests.
"""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import pandas as pd

#: The fields written, in order (``sacct -P --format`` of docs/slurm.md, less Eligible's twin).
FIELDS = ("JobID", "Submit", "Eligible", "Start", "End", "ElapsedRaw", "Timelimit", "AllocCPUS", "ReqCPUS",
          "NNodes", "User", "Group", "Partition", "State")
_STATES = {1: "COMPLETED", 0: "FAILED", 5: "CANCELLED by 0"}


def write_sacct(path: str | Path, jobs: pd.DataFrame, *, unix_start: int = 1_700_000_000,
                header: bool = True, steps: bool = False, offset: str = "") -> Path:
    """Write the SWF job table ``jobs`` (:data:`~batsim_classifier_scheduler.workloads.swf.COLUMNS`) as sacct records.

    ``unix_start``: the epoch of SWF time 0; ``header``: a first line naming the fields (as sacct prints
    without ``--noheader``); ``steps``: a ``.batch`` and an ``.extern`` step after each job that ran (as
    sacct prints without ``-X``); ``offset``: a UTC offset written after every time (``+0000``; times are
    in UTC either way). Gzip when the name ends with ``.gz``.
    """
    path = Path(path)
    submit, wait, runtime = (jobs[name].to_numpy(dtype=float) for name in ("submit", "wait", "runtime"))
    ran = runtime >= 0
    start = submit + np.maximum(wait, 0)
    columns = {
        "JobID": jobs["job"].astype(np.int64).astype(str).to_numpy(),
        "Submit": _times(unix_start + submit, submit >= 0, offset),
        "Start": _times(unix_start + start, ran & (submit >= 0), offset),
        "End": _times(unix_start + start + runtime, ran & (submit >= 0), offset),
        "ElapsedRaw": np.where(ran, runtime, 0).astype(np.int64).astype(str),
        "Timelimit": _durations(jobs["time_req"].to_numpy(dtype=float)),
        "AllocCPUS": _counts(jobs["procs_alloc"]), "ReqCPUS": _counts(jobs["procs_req"]),
        "NNodes": _counts(jobs["procs_alloc"]),
        "User": np.where(jobs["user"] > 0, "user" + jobs["user"].astype(np.int64).astype(str), ""),
        "Group": np.where(jobs["group"] > 0, "group" + jobs["group"].astype(np.int64).astype(str), ""),
        "Partition": np.where(jobs["partition"] >= 0, "p" + jobs["partition"].astype(np.int64).astype(str), "batch"),
        "State": np.where(ran, jobs["status"].map(_STATES).fillna("COMPLETED").to_numpy(), "CANCELLED by 0"),
    }
    columns["Eligible"] = columns["Submit"]
    table = pd.DataFrame({name: columns[name] for name in FIELDS})
    if steps:
        table = _with_steps(table, ran)
    text = table.to_csv(sep="|", header=header, index=False, lineterminator="\n")
    opener = gzip.open if path.name.endswith(".gz") else open
    with opener(path, "wt", encoding="utf-8") as out:
        out.write(text)
    return path


def _times(seconds: np.ndarray, known: np.ndarray, offset: str) -> np.ndarray:
    text = np.datetime_as_string(np.where(known, seconds, 0).astype("datetime64[s]"), unit="s")
    return np.where(known, np.char.add(text.astype(str), offset), "Unknown")


def _durations(seconds: np.ndarray) -> np.ndarray:
    whole = np.where(seconds > 0, seconds, 0).astype(np.int64)
    days, rest = np.divmod(whole, 86400)
    hours, rest = np.divmod(rest, 3600)
    minutes, secs = np.divmod(rest, 60)
    text = pd.Series(hours).map("{:02d}".format) + ":" + pd.Series(minutes).map("{:02d}".format) + ":" \
        + pd.Series(secs).map("{:02d}".format)
    text = np.where(days > 0, pd.Series(days).astype(str) + "-" + text, text)
    return np.where(seconds > 0, text, "UNLIMITED")


def _counts(values: pd.Series) -> np.ndarray:
    return np.maximum(values.to_numpy(), 0).astype(np.int64).astype(str)


def _with_steps(table: pd.DataFrame, ran: np.ndarray) -> pd.DataFrame:
    """Each job that ran followed by its ``.batch`` and ``.extern`` steps (their fields as the job's)."""
    parts = [table.assign(_order=np.arange(len(table)) * 3)]
    for k, step in enumerate((".batch", ".extern"), start=1):
        steps = table[ran].assign(_order=np.flatnonzero(ran) * 3 + k)
        parts.append(steps.assign(JobID=steps["JobID"] + step, Partition="", User="", Group=""))
    return pd.concat(parts).sort_values("_order", kind="stable").drop(columns="_order")
