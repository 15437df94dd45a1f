"""What a job is in sacct's records, and which of them a simulation can replay.

One record per job allocation is a job. Its steps (``123.batch``, ``123.extern``, ``123.0``) are not; an
array's elements (``123_4``) are jobs of their own, and its elements still pending (``123_[5-9]``, one
record for the range) are dropped; the components of a heterogeneous job (``123+0``, ``123+1``) start
together and are one job here (``123``: its sizes summed, the longest runtime and limit, the first
component's state); a requeued job's records (``sacct --duplicates``, one per attempt) are one job, its last
attempt. Each of these is counted for the report (:data:`RECORD_LABELS`).

States map to the SWF's status codes (:data:`STATUS`); jobs never started, still running or pending, and
cancelled before they started are dropped, each counted (:data:`SACCT_DROPS`).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from batsim_classifier_scheduler.workloads.cleaning_report import RECORD_LABELS, SACCT_DROPS

__all__ = ["JOB_ID", "RECORD_LABELS", "SACCT_DROPS", "STATUS", "drop_masks", "fold_records", "merge_components",
           "numbered", "peak_usage"]

#: Slurm's job states and the SWF status each becomes: 1 completed, 0 failed (ended by the system or its
#: own error), 5 cancelled; None: not finished (the job is dropped).
STATUS = {
    "COMPLETED": 1, "FAILED": 0, "TIMEOUT": 0, "OUT_OF_MEMORY": 0, "NODE_FAIL": 0, "BOOT_FAIL": 0,
    "DEADLINE": 0, "PREEMPTED": 0, "SPECIAL_EXIT": 0, "LAUNCH_FAILED": 0, "RECONFIG_FAIL": 0, "CANCELLED": 5,
    "REVOKED": None, "RUNNING": None, "PENDING": None, "REQUEUED": None, "REQUEUE_FED": None,
    "REQUEUE_HOLD": None, "RESIZING": None, "SUSPENDED": None, "STOPPED": None, "SIGNALING": None,
    "COMPLETING": None, "CONFIGURING": None, "STAGE_OUT": None, "POWER_UP_NODE": None, "RESV_DEL_HOLD": None,
    "UPDATE_DB": None,
}
#: A job id as sacct writes it: ``N``, an array's ``N_K`` or pending ``N_[A-B]``, a component ``N+K``, and a
#: step's ``.STEP`` after any of them.
JOB_ID = r"\d+(?:_(?:\d+|\[[^\]]*\]))?(?:\+\d+)?(?:\.[A-Za-z0-9_-]+)?"


def fold_records(ids: pd.Series) -> tuple[np.ndarray, dict[str, int]]:
    """Which records are jobs (a boolean mask over ``ids``: no step, the last of a job's attempts) and
    the counts of :data:`RECORD_LABELS`."""
    text = ids.to_numpy(dtype=str)
    step = np.strings.find(text, ".") >= 0
    earlier = ids.duplicated(keep="last").to_numpy() & ~step
    keep = ~step & ~earlier
    element = (np.strings.find(text, "_") >= 0) & (np.strings.find(text, "[") < 0)
    counts = {"records": len(ids), "steps": int(step.sum()), "requeue_attempts": int(earlier.sum()),
              "het_components": int((keep & (np.strings.find(text, "+") >= 0)).sum()),
              "array_elements": int((keep & element).sum())}
    return keep, counts


def merge_components(jobs: pd.DataFrame) -> pd.DataFrame:
    """The table with each heterogeneous job's components (``id`` ``N+K``) as one row ``N`` (in the place
    of its first component)."""
    het = np.strings.find(jobs["id"].to_numpy(dtype=str), "+") >= 0
    if not het.any():
        return jobs
    parts = jobs[het]
    first = {column: "first" for column in jobs.columns}
    rules = {**first, "submit": "min", "start": "min", "runtime": "max", "limit": "max",
             "alloc": _sum_known, "req": _sum_known}
    merged = parts.groupby(parts["id"].str.replace(r"\+\d+$", "", regex=True), sort=False).agg(rules)
    merged["id"] = merged.index.to_numpy()
    merged = merged.set_index(parts.index[~parts["id"].str.replace(r"\+\d+$", "", regex=True).duplicated()])
    return pd.concat([jobs[~het], merged]).sort_index(kind="stable")


def _sum_known(values: pd.Series) -> float:
    known = values[values > 0]
    return float(known.sum()) if len(known) else -1.0


def drop_masks(jobs: pd.DataFrame, partitions: tuple[str, ...] | None) -> dict[str, np.ndarray]:
    """Each sacct drop rule's mask over ``jobs`` (columns ``id``, ``state``, ``start``, ``runtime``,
    ``alloc``, ``partition``), in :data:`SACCT_DROPS`'s order; a job counts under the first it breaks."""
    state = jobs["state"]
    started = jobs["start"].notna().to_numpy()
    cancelled = (state == "CANCELLED").to_numpy()
    empty = (jobs["runtime"].fillna(0) <= 0).to_numpy() & (jobs["alloc"] <= 0).to_numpy()
    masks = {
        "array-pending": np.strings.find(jobs["id"].to_numpy(dtype=str), "[") >= 0,
        "not-finished": state.map(STATUS).isna().to_numpy(),
        "cancelled-before-start": cancelled & (~started | empty),
        "never-started": ~started,
        "other-partition": (~jobs["partition"].isin(partitions).to_numpy() if partitions
                            else np.zeros(len(jobs), dtype=bool)),
    }
    return masks


def numbered(values: pd.Series) -> np.ndarray:
    """A number per distinct value, 1, 2, ... in order of first appearance (-1 for an empty value), as the
    SWF numbers users and groups."""
    codes, _ = pd.factorize(values.where(values != "", None), use_na_sentinel=True)
    return np.where(codes >= 0, codes + 1, -1)


def peak_usage(start: np.ndarray, runtime: np.ndarray, size: np.ndarray) -> int:
    """The most units in use at once: the peak of the jobs' sizes summed over their runs (a job ending at
    an instant frees its units before one starting then takes them)."""
    if not len(start):
        return 0
    instants = np.concatenate([start + runtime, start])
    deltas = np.concatenate([-size, size])
    order = np.lexsort((deltas, instants))  # at one instant, the ends (negative) first
    return int(np.cumsum(deltas[order]).max(initial=0))
