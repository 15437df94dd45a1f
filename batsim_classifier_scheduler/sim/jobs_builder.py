"""The embedded engine's ``_jobs.csv`` table (:mod:`batsim_classifier_scheduler.jobs_columns`: its columns), built column by column
from its job records.

The table of a whole run is kept until its metrics and files are written, so each column is built on its own
(no tuple per row next to it), and every row of a workload shares one string for the workload's name.
"""

from __future__ import annotations

import math
import sys
from operator import attrgetter
from typing import Callable, Iterable

from batsim_classifier_scheduler.core.messages import REJECTED, SUCCESS
from batsim_classifier_scheduler.core.machines import to_interval_string
from batsim_classifier_scheduler.jobs_columns import JOBS_COLUMNS
from batsim_classifier_scheduler.sim.engine_types import SimJob


def jobs_columns(sims: list[SimJob]) -> dict[str, list]:
    """One row per job record, in the order given; rejected jobs have no times (NaN)."""
    if not sims:
        return {name: [] for name in JOBS_COLUMNS}
    jobs = _each(sims, "job")
    states, start, ends, masks = _each(sims, "state"), _each(sims, "start"), _each(sims, "finish"), _each(sims, "mask")
    ids, submission = _each(jobs, "id"), _each(jobs, "subtime")
    ran = [state != REJECTED for state in states]
    # Batsim records a null runtime as 1e-5
    runtime = [max(end - begin, 1e-5) if r else math.nan for begin, end, r in zip(start, ends, ran)]
    del ends
    finish = [s + r for s, r in zip(start, runtime)]
    turnaround = [f - s for f, s in zip(finish, submission)]
    # allocations repeat: each written once (an ended job's is written already)
    intervals = {mask: mask if isinstance(mask, str) else to_interval_string(mask) for mask in set(masks)}
    return {
        "job_id": [job_id.partition("!")[2] for job_id in ids],
        "workload_name": list(map(sys.intern, (job_id.partition("!")[0] for job_id in ids))),
        "profile": _each(jobs, "profile"),
        "submission_time": submission,
        "requested_number_of_resources": _each(jobs, "res"),
        "requested_time": _each(jobs, "walltime"),
        "success": [int(state == SUCCESS) for state in states],
        "final_state": states,
        "starting_time": start,
        "execution_time": runtime,
        "finish_time": finish,
        "waiting_time": [s - t for s, t in zip(start, submission)],
        "turnaround_time": turnaround,
        "stretch": [t / r for t, r in zip(turnaround, runtime)],
        "allocated_resources": [intervals[mask] if r else "" for mask, r in zip(masks, ran)],
        "consumed_energy": [-1.0] * len(sims),
        "metadata": _each(sims, "metadata"),
    }


def _each(records: Iterable, name: str) -> list:
    """Attribute ``name`` of every record."""
    getter: Callable = attrgetter(name)
    return list(map(getter, records))
