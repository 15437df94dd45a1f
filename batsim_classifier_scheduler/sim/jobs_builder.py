"""The embedded engine's ``_jobs.csv`` table (:mod:`batsim_classifier_scheduler.jobs_columns`: its columns), built column by column
from its job records.

The table of a whole run is kept until its metrics and files are written, so each column is built on its own
(no tuple per row next to it), and every row of a workload shares one string for the workload's name.
"""

from __future__ import annotations

import math
import sys
from operator import attrgetter
from typing import Callable, Iterable, Protocol

import numpy as np

from batsim_classifier_scheduler.core.job import Job
from batsim_classifier_scheduler.core.messages import REJECTED, SUCCESS
from batsim_classifier_scheduler.core.machines import to_interval_string
from batsim_classifier_scheduler.jobs_columns import JOBS_COLUMNS

#: The columns kept as float arrays.
TIME_COLUMNS = frozenset(("submission_time", "requested_time", "starting_time", "execution_time", "finish_time",
                          "waiting_time", "turnaround_time", "stretch", "consumed_energy"))


class JobRecord(Protocol):
    """What a row is made of: the engine's :class:`~batsim_classifier_scheduler.sim.engine_types.SimJob`."""

    job: Job
    start: float
    finish: float
    state: str
    mask: int | str
    metadata: str


def jobs_columns(sims: list[JobRecord]) -> dict[str, list | np.ndarray]:
    """One row per job record, in the order given; rejected jobs have no times (NaN). Times are float arrays (8 bytes a
    value, computed as Python computes each: IEEE doubles alike), the other columns lists.

    ``sims`` is emptied once the records' fields are read: the records (and their numbers) are freed before the table's
    strings are made, which take their place instead of adding to them.
    """
    if not sims:
        return {name: np.empty(0) if name in TIME_COLUMNS else [] for name in JOBS_COLUMNS}
    jobs = _each(sims, "job")
    states, masks, metadata = _each(sims, "state"), _each(sims, "mask"), _each(sims, "metadata")
    start, ends = np.array(_each(sims, "start"), dtype=float), np.array(_each(sims, "finish"), dtype=float)
    sims.clear()
    ids, profiles, res = _each(jobs, "id"), _each(jobs, "profile"), _each(jobs, "res")
    submission, walltime = np.array(_each(jobs, "subtime"), dtype=float), np.array(_each(jobs, "walltime"), dtype=float)
    del jobs
    ran = [state != REJECTED for state in states]
    # Batsim records a null runtime as 1e-5
    runtime = np.where(ran, np.maximum(ends - start, 1e-5), math.nan)
    del ends
    finish = start + runtime
    turnaround = finish - submission
    # allocations repeat: each written once (an ended job's is written already)
    intervals = {mask: mask if isinstance(mask, str) else to_interval_string(mask) for mask in set(masks)}
    allocated = [intervals[mask] if r else "" for mask, r in zip(masks, ran)]
    del masks, intervals
    names = [job_id.partition("!")[2] for job_id in ids]
    workloads = list(map(sys.intern, (job_id.partition("!")[0] for job_id in ids)))
    del ids
    return {
        "job_id": names,
        "workload_name": workloads,
        "profile": profiles,
        "submission_time": submission,
        "requested_number_of_resources": res,
        "requested_time": walltime,
        "success": [int(state == SUCCESS) for state in states],
        "final_state": states,
        "starting_time": start,
        "execution_time": runtime,
        "finish_time": finish,
        "waiting_time": start - submission,
        "turnaround_time": turnaround,
        "stretch": turnaround / runtime,
        "allocated_resources": allocated,
        "consumed_energy": np.full(len(states), -1.0),
        "metadata": metadata,
    }


def _each(records: Iterable, name: str) -> list:
    """Attribute ``name`` of every record."""
    getter: Callable = attrgetter(name)
    return list(map(getter, records))
