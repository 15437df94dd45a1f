"""Per-job and aggregate metrics from a jobs table in Batsim's ``_jobs.csv`` schema.

The same functions serve a real Batsim run (:func:`scheduler.sim.output.read_jobs_csv`) and ours
(the engine's table), so the numbers are comparable.

**Lineage.** A job killed by the safeguard is resubmitted as ``<id>#<attempt>``, in its own workload
or in another one (e.g. ``dyn``) with metadata ``parent=w0!7;class=large``. An attempt's parent is
the ``parent`` of its metadata when there is one, else, for ``<id>#<n>``, the job ``<id>`` of the same
workload; chains of parents lead to the original job. :func:`fold_attempts` folds the attempts
(ordered by submission time) into one row per original job:

- submission = the original submission; start, finish, runtime, state = the final attempt's;
- response = finish - submission; wait = response - runtime;
- wasted_core_seconds = sum of execution_time x requested_number_of_resources over the attempts
  before the final one; attempts = number of attempts (kills = attempts - 1).

**Per-job metric.** Bounded slowdown ``bsld = max((wait + p) / max(p, tau), 1)`` with the final
runtime ``p``; tau = 60 s by default, 10 s to compare with Gaussier et al.

**Aggregates** (:func:`summarize`), over original jobs whose final attempt is not ``REJECTED``
(rejected jobs are counted in ``nb_rejected`` only):

- ``mean_bsld``, ``max_bsld``, ``cumulative_bsld`` (sum of bsld; :func:`cumulative_bsld` gives the
  running sum in submission order), ``mean_wait``, ``max_wait``, ``mean_response`` (AF);
- ``makespan`` = the last finish time, from time 0: Batsim's ``makespan`` (``_schedule.csv``);
- ``span`` = last finish - first submission: the time the workload occupied the machine;
- ``utilisation`` = processor-seconds of all attempts (killed ones included) /
  (nb_machines x span). On KTH-SP2 (first submission at 0) this is Batsim's
  time_computing / (nb_machines x makespan);
- ``awf`` and ``p2sf`` from Goponenko et al., "Metrics for Packing Efficiency and Fairness of HPC
  Cluster Batch Job Scheduling", SBAC-PAD 2022 (doi:10.1109/SBAC-PAD55451.2022.00035), as in the
  authors' ``analysis/calculate_metrics.py`` (github.com/algo74/predictsim; ``AWAF`` and
  ``AS2WAS``), with q = requested processors, p = runtime, W = wait, F = W + p (flow, response):

  - AWF (area-weighted average flow) = sum(q p F) / sum(q p);
  - P^aSF (priority-weighted specific flow) = M(a + 1) / M(a) with
    M(k) = sum(q (F^(k+1) - W^(k+1))) / (k + 1). Every processor-second of a job, run t seconds
    after its submission (W <= t <= F), has specific flow t and priority weight t^a, so
    P^aSF = integral(t^a t dA) / integral(t^a dA). ``p2sf`` is a = 2. P^0SF is the area-weighted
    mean of (W + F) / 2.
- ``useful_core_seconds``: processor-seconds of the final attempts of the completed jobs;
- ``nb_kills`` and ``wasted_core_seconds``; the same keys with a ``_<class>`` suffix per class when
  the jobs carry one (a ``class`` column, or ``class=...`` in the metadata; a job's class is the
  first one its attempts carry).
"""

from __future__ import annotations

import math

from typing import TYPE_CHECKING

import numpy as np

from scheduler.core.events import REJECTED, SUCCESS
from scheduler.sim.output import JobsTable, column, numeric_column, text_values

if TYPE_CHECKING:
    import pandas as pd

FOLDED_COLUMNS = [
    "job_id", "workload_name", "submission_time", "start", "finish", "runtime", "wait", "response", "res",
    "requested_time", "final_state", "attempts", "wasted_core_seconds",
]
_TEXT = {"job_id", "workload_name", "final_state"}
_PER_CLASS_KEYS = ["nb_jobs", "mean_bsld", "max_bsld", "cumulative_bsld", "mean_wait", "max_wait",
                   "mean_response", "nb_kills", "wasted_core_seconds"]


def bounded_slowdown(wait, runtime, tau: float = 60.0):
    """``max((wait + runtime) / max(runtime, tau), 1)``, element-wise (numbers, arrays or Series)."""
    return np.maximum((wait + runtime) / np.maximum(runtime, tau), 1.0)


def awf(wait, runtime, res) -> float:
    """Area-weighted average flow: ``sum(q p F) / sum(q p)`` with F = wait + runtime (Goponenko et al.)."""
    wait, runtime, res = (np.asarray(v, dtype=np.float64) for v in (wait, runtime, res))
    area = res * runtime
    total = area.sum()
    return float((area * (wait + runtime)).sum() / total) if total > 0 else math.nan


def p_alpha_sf(wait, runtime, res, alpha: float = 2.0) -> float:
    """Priority-weighted specific flow P^aSF = M(a + 1) / M(a) (Goponenko et al.); see the module doc."""
    wait, runtime, res = (np.asarray(v, dtype=np.float64) for v in (wait, runtime, res))
    denominator = _moment(wait, runtime, res, alpha)
    return float(_moment(wait, runtime, res, alpha + 1) / denominator) if denominator > 0 else math.nan


def _moment(wait: np.ndarray, runtime: np.ndarray, res: np.ndarray, k: float) -> float:
    """M(k) = sum(q (F^(k+1) - W^(k+1))) / (k + 1), F = W + p, without cancellation for integer k."""
    flow = wait + runtime
    if float(k).is_integer() and k >= 0:  # F^n - W^n = p * sum_i F^(n-1-i) W^i
        n = int(k) + 1
        difference = runtime * sum(flow ** (n - 1 - i) * wait ** i for i in range(n))
    else:
        difference = flow ** (k + 1) - wait ** (k + 1)
    return float((res * difference).sum() / (k + 1))


def fold_attempts(jobs: JobsTable) -> pd.DataFrame:
    """One row per original job (columns :data:`FOLDED_COLUMNS`, plus ``class`` when known).

    ``jobs`` is a ``_jobs.csv`` table with one row per attempt. Rows are ordered by submission time.
    Start, finish, runtime and wait are NaN for a job whose final attempt was rejected.
    """
    import pandas as pd

    if not len(column(jobs, "job_id")):
        return pd.DataFrame({c: pd.Series(dtype=object if c in _TEXT else np.float64) for c in FOLDED_COLUMNS})
    return pd.DataFrame(_fold(jobs))


def _fold(jobs: JobsTable) -> dict[str, np.ndarray]:
    """:func:`fold_attempts`' columns as numpy arrays (``jobs`` has at least one row)."""
    n = len(column(jobs, "job_id"))
    metadata = text_values(jobs["metadata"]) if "metadata" in jobs else [""] * n
    workloads = text_values(jobs["workload_name"]) if "workload_name" in jobs else [""] * n
    ids = [j if "!" in j else f"{w}!{j}" for j, w in zip(text_values(jobs["job_id"]), workloads)]
    # Without resubmissions (no "#" in the ids, no parent in the metadata) each attempt is an original job.
    lineage = any("#" in full_id for full_id in ids) or any("parent" in meta for meta in metadata)
    roots = _roots(ids, metadata) if lineage else ids
    root_workload = np.array([r.partition("!")[0] for r in roots], dtype=object)
    root_name = np.array([r.partition("!")[2] for r in roots], dtype=object)
    attempt = np.array([_attempt_number(i) for i in ids], dtype=np.float64) if lineage else np.zeros(n)
    state = np.array(text_values(jobs["final_state"]), dtype=object)
    rejected = state == REJECTED
    submission = numeric_column(jobs, "submission_time")
    start = np.where(rejected, np.nan, numeric_column(jobs, "starting_time"))
    runtime = np.where(rejected, np.nan, numeric_column(jobs, "execution_time"))
    res = np.asarray(jobs["requested_number_of_resources"])
    area = np.nan_to_num(runtime * res)
    row = np.arange(n)

    # Sort attempts by original job, then in the order they ran; the last of each group is the final one.
    codes: dict[str, int] = {}
    codes = np.array([codes.setdefault(root, len(codes)) for root in roots])  # in order of first appearance
    order = np.lexsort((row, start + runtime, attempt, submission, codes))
    codes = codes[order]
    first = np.flatnonzero(np.r_[True, codes[1:] != codes[:-1]])
    last = np.r_[first[1:], n] - 1
    head, tail = order[first], order[last]
    folded = {
        "job_id": root_name[head], "workload_name": root_workload[head],
        "submission_time": np.minimum.reduceat(submission[order], first),
        "start": start[tail], "finish": start[tail] + runtime[tail], "runtime": runtime[tail],
    }
    folded["response"] = folded["finish"] - folded["submission_time"]
    folded["wait"] = folded["response"] - folded["runtime"]
    folded["res"] = res[tail]
    folded["requested_time"] = numeric_column(jobs, "requested_time")[head]
    folded["final_state"] = state[tail]
    folded["attempts"] = last - first + 1
    folded["wasted_core_seconds"] = np.add.reduceat(area[order], first) - area[tail]
    job_class = _classes(jobs, metadata)
    if job_class is not None:  # the first class carried by the attempts, in order
        labelled = np.array([c != "" for c in job_class])[order]
        position = np.where(labelled, np.arange(n), n)
        found = np.minimum.reduceat(position, first)
        folded["class"] = np.array(job_class + [""], dtype=object)[np.r_[order, n][found]]
    rank = np.lexsort((np.minimum.reduceat(order, first), folded["submission_time"]))
    names = FOLDED_COLUMNS + (["class"] if job_class is not None else [])
    return {name: folded[name][rank] for name in names}


def cumulative_bsld(jobs: JobsTable, tau: float = 60.0) -> pd.Series:
    """Running sum of bsld over completed original jobs in submission order, indexed by submission time."""
    import pandas as pd

    done = _rows(_folded(jobs), "completed")
    values = bounded_slowdown(done["wait"], done["runtime"], tau)
    return pd.Series(np.cumsum(values), index=pd.Index(done["submission_time"], name="submission_time"),
                     name="cumulative_bsld")


def summarize(jobs: JobsTable, nb_machines: int | None = None, tau: float = 60.0) -> dict[str, float | int]:
    """The aggregate metrics of a run, as a flat dict with stable keys (see the module doc).

    ``jobs`` is a ``_jobs.csv`` table (one row per attempt) or the result of :func:`fold_attempts`.
    ``utilisation`` is NaN when ``nb_machines`` is not given.
    """
    folded = _folded(jobs)
    done = _rows(folded, "completed")
    nb_jobs, nb_done = len(folded["final_state"]), len(done["final_state"])
    summary: dict[str, float | int] = {
        "tau": float(tau),
        "nb_jobs": nb_jobs,
        "nb_attempts": int(folded["attempts"].sum()),
        "nb_completed": nb_done,
        "nb_success": int((folded["final_state"] == SUCCESS).sum()),
        "nb_rejected": nb_jobs - nb_done,
    }
    summary.update(_aggregates(done, tau))
    summary["nb_kills"] = int((folded["attempts"] - 1).sum())
    summary["wasted_core_seconds"] = float(np.nansum(folded["wasted_core_seconds"]))
    makespan = float(np.nanmax(done["finish"])) if nb_done else 0.0
    span = makespan - float(np.nanmin(folded["submission_time"])) if nb_done else 0.0
    summary["useful_core_seconds"] = float(np.nansum(done["runtime"] * done["res"]))
    used = summary["useful_core_seconds"] + summary["wasted_core_seconds"]
    summary["makespan"] = makespan
    summary["span"] = span
    summary["utilisation"] = used / (nb_machines * span) if nb_machines and span > 0 else math.nan
    summary["awf"] = awf(done["wait"], done["runtime"], done["res"])
    summary["p2sf"] = p_alpha_sf(done["wait"], done["runtime"], done["res"], 2.0)
    if "class" in folded:
        for name in sorted(c for c in set(folded["class"].tolist()) if c):
            members = _rows(folded, folded["class"] == name)
            part = _aggregates(_rows(members, "completed"), tau)
            part["nb_jobs"] = len(members["class"])
            part["nb_kills"] = int((members["attempts"] - 1).sum())
            part["wasted_core_seconds"] = float(np.nansum(members["wasted_core_seconds"]))
            summary.update({f"{key}_{name}": part[key] for key in _PER_CLASS_KEYS})
    return summary


def _aggregates(done: dict[str, np.ndarray], tau: float) -> dict[str, float]:
    """bsld, wait and response statistics of completed jobs (NaN when there are none). Waits and responses
    skip NaN (as pandas did), bsld does not."""
    if len(done["wait"]) == 0:
        return {"mean_bsld": math.nan, "max_bsld": math.nan, "cumulative_bsld": 0.0, "mean_wait": math.nan,
                "max_wait": math.nan, "mean_response": math.nan}
    bsld = bounded_slowdown(done["wait"], done["runtime"], tau)
    return {
        "mean_bsld": float(bsld.mean()), "max_bsld": float(bsld.max()), "cumulative_bsld": float(bsld.sum()),
        "mean_wait": float(np.nanmean(done["wait"])), "max_wait": float(np.nanmax(done["wait"])),
        "mean_response": float(np.nanmean(done["response"])),
    }


def _folded(jobs: JobsTable) -> dict[str, np.ndarray]:
    """The folded jobs' columns as arrays: those of ``jobs`` if it is folded already, else :func:`_fold`'s."""
    if all(name in jobs for name in ("attempts", "runtime", "wait")):
        names = FOLDED_COLUMNS + (["class"] if "class" in jobs else [])
        return {name: np.asarray(jobs[name], dtype=object if name in _TEXT or name == "class" else None)
                for name in names}
    if not len(column(jobs, "job_id")):
        return {name: np.array([], dtype=object if name in _TEXT else np.float64) for name in FOLDED_COLUMNS}
    return _fold(jobs)


def _rows(table: dict[str, np.ndarray], which: np.ndarray | str) -> dict[str, np.ndarray]:
    """The rows of ``table`` selected by a boolean mask, or the ``"completed"`` ones (not REJECTED)."""
    mask = table["final_state"] != REJECTED if isinstance(which, str) else which
    return {name: values[mask] for name, values in table.items()}


def completed_jobs(folded: pd.DataFrame) -> pd.DataFrame:
    """The folded jobs that ran (their final attempt is not REJECTED)."""
    return folded[(folded["final_state"] != REJECTED).to_numpy()]


def _roots(ids: list[str], metadata: list[str]) -> list[str]:
    """The full id (``workload!name``) of the original job of each attempt.

    An attempt's parent is its metadata's ``parent`` (in the attempt's workload when it has no
    ``workload!``), else, for a name ``<id>#<n>``, the job ``<id>`` of the same workload; chains of
    parents are followed up to a job without one.
    """
    declared = {}
    for full_id, meta in zip(ids, metadata):
        parent = _metadata_field(meta, "parent")
        if parent:
            parent = parent if "!" in parent else f"{full_id.partition('!')[0]}!{parent}"
            if parent != full_id:
                declared[full_id] = parent

    def parent_of(full_id: str) -> str | None:
        if full_id in declared:
            return declared[full_id]
        workload, _, name = full_id.partition("!")
        base, hash_sign, _ = name.partition("#")
        return f"{workload}!{base}" if hash_sign else None

    roots = []
    for full_id in ids:
        parent, steps = parent_of(full_id), 0
        while parent is not None and steps < 1000:  # guards against cycles
            full_id, parent, steps = parent, parent_of(parent), steps + 1
        roots.append(full_id)
    return roots


def _attempt_number(full_id: str) -> float:
    """``n`` for ``w0!7#n``, else 0."""
    suffix = full_id.rpartition("#")[2] if "#" in full_id else ""
    return float(suffix) if suffix.isdigit() else 0.0


def _metadata_field(metadata: str, key: str) -> str:
    """The value of ``key`` in ``k1=v1;k2=v2`` metadata, or ``""``."""
    if key not in metadata:
        return ""
    for item in metadata.split(";"):
        name, _, value = item.partition("=")
        if name.strip() == key:
            return value.strip()
    return ""


def _classes(jobs: JobsTable, metadata: list[str]) -> list[str] | None:
    """Each attempt's class: the ``class`` column, else ``class=...`` in the metadata; None if neither."""
    from_metadata = [_metadata_field(m, "class") for m in metadata]
    if "class" in jobs:
        return [c.strip() or m for c, m in zip(text_values(jobs["class"]), from_metadata)]
    return from_metadata if any(from_metadata) else None
