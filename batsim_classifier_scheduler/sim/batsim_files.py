"""Batsim 4.2.1's output files: ``PREFIX_jobs.csv`` and ``PREFIX_schedule.csv``, written and read.

The formats follow Batsim's ``JobsTracer`` (``src/export.cpp`` at tag v4.2.1):

- ``_jobs.csv``: one row per job (attempt), in the order the rows are given (Batsim writes them in
  completion order). Floats are C's ``%f`` (6 decimals), integers plain; ``job_id`` is the job's name
  without its ``workload!`` prefix; ``allocated_resources`` is an interval string such as ``0-3 7``;
  ``metadata`` is always wrapped in double quotes, with no escaping. A ``REJECTED`` job has empty
  ``starting_time``, ``execution_time``, ``finish_time``, ``waiting_time``, ``turnaround_time``,
  ``stretch`` and ``consumed_energy``.
- ``_schedule.csv``: one header line and one value line, columns in lexicographic order.

A jobs table (:mod:`batsim_classifier_scheduler.jobs_columns`: its columns, and how to read them) is a DataFrame (what
:func:`read_jobs_csv` gives) or the embedded engine's columns, which the writers read without pandas.
"""

from __future__ import annotations

import math
from itertools import compress
from operator import mul
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from procset import ProcSet

from batsim_classifier_scheduler import __version__
from batsim_classifier_scheduler.core.messages import REJECTED, SUCCESS
from batsim_classifier_scheduler.core.machines import interval_runs
from batsim_classifier_scheduler.errors import WorkloadError
from batsim_classifier_scheduler.jobs_columns import (JOBS_COLUMNS, JobsTable, all_text, column, numeric_column,
                                                      text_values)
from batsim_classifier_scheduler.util.output_files import atomic_open, write_text

if TYPE_CHECKING:
    import pandas as pd

SCHEDULE_COLUMNS = [
    "batsim_version", "consumed_joules", "makespan", "max_slowdown", "max_turnaround_time",
    "max_waiting_time", "mean_slowdown", "mean_turnaround_time", "mean_waiting_time",
    "nb_computing_machines", "nb_grouped_switches", "nb_jobs", "nb_jobs_finished", "nb_jobs_killed",
    "nb_jobs_rejected", "nb_jobs_success", "nb_machine_switches", "scheduling_time", "simulation_time",
    "success_rate", "time_computing", "time_idle", "time_sleeping", "time_switching_off",
    "time_switching_on", "time_unavailable",
]
#: What we write in ``batsim_version``: our own identifier, never Batsim's.
VERSION_STRING = f"scheduler-{__version__}"

_TEXT_COLUMNS = ["job_id", "workload_name", "profile", "final_state", "allocated_resources", "metadata"]
_INT_COLUMNS = ["requested_number_of_resources", "success"]
_FLOAT_COLUMNS = [c for c in JOBS_COLUMNS if c not in _TEXT_COLUMNS and c not in _INT_COLUMNS]
# Columns Batsim leaves empty for a rejected job.
_BLANK_IF_REJECTED = ["starting_time", "execution_time", "finish_time", "waiting_time", "turnaround_time",
                      "stretch", "consumed_energy"]


# --- _jobs.csv --------------------------------------------------------------------------------------

def write_jobs_csv(path: str | Path, jobs: JobsTable) -> None:
    """Write ``jobs`` (columns :data:`JOBS_COLUMNS`) as Batsim's ``_jobs.csv``, rows in the given order.

    Accepts what :func:`read_jobs_csv` or a plain ``pandas.read_csv`` returns, and the engine's table:
    ``job_id`` may carry its ``workload!`` prefix (it is dropped), ``allocated_resources`` may be a
    string, a ``ProcSet`` or an iterable of machine ids, missing ``metadata`` is written as ``""``.
    A path ending in ``.gz`` is gzip-compressed. The rows are formatted and written
    :data:`ROWS_PER_WRITE` at a time, so that the text of the whole table is never held at once.
    """
    missing = [c for c in JOBS_COLUMNS if c not in jobs]
    if missing:
        raise ValueError(f"cannot write {path}: the jobs table lacks column(s) {', '.join(missing)}")
    columns = _jobs_csv_columns(jobs)
    with atomic_open(path, "w", newline="") as stream:
        stream.write(",".join(JOBS_COLUMNS) + "\n")
        for begin in range(0, len(columns["final_state"]), ROWS_PER_WRITE):
            rows = slice(begin, begin + ROWS_PER_WRITE)
            text = [_jobs_csv_text(name, values[rows], columns["final_state"][rows]) for name, values in columns.items()]
            stream.write("\n".join(map(",".join, zip(*text))) + "\n")


#: Rows formatted at a time by :func:`write_jobs_csv`.
ROWS_PER_WRITE = 2_000


def _jobs_csv_columns(jobs: JobsTable) -> dict[str, list | np.ndarray]:
    """The columns of a ``_jobs.csv``, in :data:`JOBS_COLUMNS`'s order: text columns as lists of strings
    (``job_id`` without its ``workload!`` prefix), counts as lists of ints, times as float arrays (``stretch``
    completed as Batsim computes it)."""
    workloads = text_values(jobs["workload_name"])
    job_ids = text_values(jobs["job_id"])
    if any("!" in job_id for job_id in job_ids):
        job_ids = [j[len(w) + 1:] if j.startswith(w + "!") else j for j, w in zip(job_ids, workloads)]
    columns: dict[str, list | np.ndarray] = {
        "job_id": job_ids, "workload_name": workloads, "profile": text_values(jobs["profile"]),
        "final_state": text_values(jobs["final_state"]), "allocated_resources": column(jobs, "allocated_resources"),
        "metadata": text_values(jobs["metadata"]),
    }
    for name in _INT_COLUMNS:
        values = column(jobs, name)
        columns[name] = values if _all_int(values) else numeric_column(jobs, name, np.int64).tolist()
    for name in _FLOAT_COLUMNS:
        values = numeric_column(jobs, name)
        if name == "stretch" and np.isnan(values).any():  # as Batsim: turnaround / execution, even if 0
            with np.errstate(divide="ignore", invalid="ignore"):
                ratio = numeric_column(jobs, "turnaround_time") / numeric_column(jobs, "execution_time")
            values = np.where(np.isnan(values), ratio, values)
        columns[name] = values
    return {name: columns[name] for name in JOBS_COLUMNS}


def _jobs_csv_text(name: str, values: list | np.ndarray, states: list[str]) -> list[str]:
    """The text of some rows of one ``_jobs.csv`` column (``states``: their final states)."""
    if name == "metadata":
        return [f'"{m}"' for m in values]
    if name == "allocated_resources":
        return values if all_text(values) else list(map(_interval_string, values))
    if name in _INT_COLUMNS:
        return list(map(str, values))
    if name not in _FLOAT_COLUMNS:
        return values
    text = _format_floats(values)
    if name in _BLANK_IF_REJECTED and REJECTED in states:
        text = ["" if state == REJECTED else v for v, state in zip(text, states)]
    return text


def read_jobs_csv(path: str | Path) -> pd.DataFrame:
    """Read a Batsim ``_jobs.csv`` (or ``.csv.gz``), checking its columns and numbers.

    Text columns (``job_id``, ``allocated_resources``, ``metadata``...) stay strings (``""`` when
    empty); time columns are floats (NaN when empty, as for rejected jobs); counts are ints. Extra
    columns are kept as pandas reads them. Raises :class:`WorkloadError` naming the file, line and column.
    """
    import pandas as pd

    numeric = _FLOAT_COLUMNS + _INT_COLUMNS
    try:
        table = pd.read_csv(path, dtype={c: str for c in _TEXT_COLUMNS}, keep_default_na=False,
                            na_values={c: ["", "-nan", "nan"] for c in numeric})
    except FileNotFoundError:
        raise WorkloadError(f"{path}: no such file") from None
    except (ValueError, pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError, OSError) as error:
        raise WorkloadError(f"{path}: not a readable CSV file ({error})") from None
    missing = [c for c in JOBS_COLUMNS if c not in table.columns]
    if missing:
        raise WorkloadError(f"{path}: not a Batsim jobs file, missing column(s) {', '.join(missing)}")
    for name in numeric:
        column = table[name]
        if not pd.api.types.is_numeric_dtype(column.dtype):
            bad = pd.to_numeric(column, errors="coerce").isna() & column.notna()
            row = int(np.flatnonzero(bad.to_numpy())[0])
            raise WorkloadError(f"{path}, line {row + 2}: column {name}: expected a number, got {column.iloc[row]!r}")
        if name in _INT_COLUMNS:
            if column.isna().any() or (column != column.round()).any():
                row = int(np.flatnonzero((column.isna() | (column != column.round())).to_numpy())[0])
                value = column.iloc[row]
                got = "nothing (a truncated line?)" if pd.isna(value) else repr(float(value))
                raise WorkloadError(f"{path}, line {row + 2}: column {name}: expected an integer, got {got}")
            table[name] = column.astype(np.int64)
        else:
            table[name] = column.astype(np.float64)
    return table


# --- _schedule.csv ----------------------------------------------------------------------------------

def schedule_summary(jobs: JobsTable, nb_machines: int, scheduling_time: float = 0.0,
                     simulation_time: float = 0.0, batsim_version: str = VERSION_STRING,
                     consumed_joules: float = 0.0) -> dict[str, Any]:
    """The row of Batsim's ``_schedule.csv`` for a jobs table (one row per attempt), as Batsim computes it.

    - ``nb_jobs`` counts every row; ``nb_jobs_rejected`` the ``REJECTED`` ones; ``nb_jobs_finished`` the
      others; ``nb_jobs_success`` those ``COMPLETED_SUCCESSFULLY``; ``nb_jobs_killed`` the finished
      ones that did not succeed (walltime reached and killed alike); ``success_rate`` =
      success / nb_jobs.
    - Over finished jobs: waiting = start - submission, turnaround = start + execution - submission,
      slowdown = turnaround / execution (Batsim's "stretch", not bounded). Their means divide the
      sums by ``nb_jobs`` (rejected jobs included, as Batsim does); the maxima are over finished jobs
      (0 when there are none).
    - ``makespan`` = the latest finish time (from time 0, not from the first submission).
    - ``time_computing`` = sum of execution time x number of allocated machines.
      ``time_idle`` = sum over machines of the time of their last job end, minus ``time_computing``:
      Batsim accumulates a machine's time in a state only when it leaves that state, so the idle
      time after a machine's last job, and machines never used, count for nothing.
    - Energy, sleeping, switching and unavailability are 0 (no energy model); ``scheduling_time``,
      ``simulation_time`` (wall-clock seconds) and ``batsim_version`` are passed in.
    """
    state = np.array(text_values(jobs["final_state"]), dtype=object)
    done = state != REJECTED
    submit = numeric_column(jobs, "submission_time")[done]
    start = numeric_column(jobs, "starting_time")[done]
    runtime = numeric_column(jobs, "execution_time")[done]
    nb_jobs, nb_finished = len(state), int(done.sum())
    nb_success = int((state == SUCCESS).sum())
    wait = start - submit
    turnaround = start + runtime - submit
    with np.errstate(divide="ignore", invalid="ignore"):
        slowdown = turnaround / runtime

    def mean(values: np.ndarray) -> float:
        return float(values.sum()) / nb_jobs if nb_jobs else math.nan

    def maximum(values: np.ndarray) -> float:  # Batsim starts at 0 and skips NaN (0 / 0)
        values = values[~np.isnan(values)]
        return max(0.0, float(values.max())) if len(values) else 0.0

    allocated = column(jobs, "allocated_resources")
    if not all_text(allocated):
        allocated = list(map(_interval_string, allocated))
    intervals = list(compress(allocated, done.tolist()))
    # allocations repeat; as intervals, not masks (kilobytes each on a large machine)
    runs_of = {text: _allocation_runs(text) for text in set(intervals)}
    allocations = [runs_of[text] for text in intervals]
    size_of = {text: sum(last - first + 1 for first, last in machines) for text, machines in runs_of.items()}
    # (each job's runtime times its machine count, summed in the jobs' order: the same floats as job by job)
    time_computing = float(sum(map(mul, runtime.tolist(), [size_of[text] for text in intervals])))
    return {
        "batsim_version": batsim_version,
        "consumed_joules": float(consumed_joules),
        "makespan": maximum(start + runtime),
        "max_slowdown": maximum(slowdown),
        "max_turnaround_time": maximum(turnaround),
        "max_waiting_time": maximum(wait),
        "mean_slowdown": mean(slowdown),
        "mean_turnaround_time": mean(turnaround),
        "mean_waiting_time": mean(wait),
        "nb_computing_machines": int(nb_machines),
        "nb_grouped_switches": 0,
        "nb_jobs": nb_jobs,
        "nb_jobs_finished": nb_finished,
        "nb_jobs_killed": nb_finished - nb_success,
        "nb_jobs_rejected": nb_jobs - nb_finished,
        "nb_jobs_success": nb_success,
        "nb_machine_switches": 0,
        "scheduling_time": float(scheduling_time),
        "simulation_time": float(simulation_time),
        "success_rate": nb_success / nb_jobs if nb_jobs else math.nan,
        "time_computing": time_computing,
        "time_idle": _last_job_end_per_machine(start + runtime, allocations, nb_machines) - time_computing,
        "time_sleeping": 0.0,
        "time_switching_off": 0.0,
        "time_switching_on": 0.0,
        "time_unavailable": 0.0,
    }


def write_schedule_csv(path: str | Path, row: dict[str, Any]) -> None:
    """Write one :func:`schedule_summary` row as Batsim's ``_schedule.csv`` (floats ``%f``, ints plain)."""
    missing = [c for c in SCHEDULE_COLUMNS if c not in row]
    if missing:
        raise ValueError(f"cannot write {path}: the schedule row lacks {', '.join(missing)}")
    values = [_format_value(row[c]) for c in SCHEDULE_COLUMNS]
    _write_text(path, ",".join(SCHEDULE_COLUMNS) + "\n" + ",".join(values) + "\n")


# --- helpers ----------------------------------------------------------------------------------------

def _all_int(values: list) -> bool:
    """Whether every value of a column is a plain ``int`` (as the engine's count columns are)."""
    return set(map(type, values)) <= {int}


def _format_floats(values: np.ndarray) -> list[str]:
    """C's ``%f`` of each value (``-nan`` for NaN, as Batsim on x86 glibc)."""
    if _whole(values).all():  # the usual time column: the integer and ".000000" are the same text, faster
        return [f"{number}.000000" for number in values.astype(np.int64).tolist()]
    text = list(map("%.6f".__mod__, values.tolist()))
    if np.isnan(values).any():  # x86 glibc prints the default NaN (e.g. 0/0) as "-nan"
        text = ["-nan" if t == "nan" else t for t in text]
    return text


def _whole(values: np.ndarray) -> np.ndarray:
    """Where the values are integers that a float holds exactly (not -0.0, which ``%f`` writes with its sign)."""
    with np.errstate(invalid="ignore"):
        return (values == np.floor(values)) & (np.abs(values) < 2.0**53) & ~((values == 0) & np.signbit(values))


def _format_value(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, (bool, np.bool_)):
        return str(int(value))
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    return _format_floats(np.array([float(value)]))[0]


def _interval_string(value: Any) -> str:
    """Batsim's interval-set string (``0-3 7``) for a string, ``ProcSet``, number or iterable of ids."""
    if isinstance(value, str):
        return value
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    if isinstance(value, (int, np.integer, float, np.floating)):
        return str(int(value))
    if isinstance(value, ProcSet):
        return str(value)
    return str(ProcSet(*map(int, value)))


def _allocation_runs(text: str) -> list[tuple[int, int]]:
    """The machines of an interval-set string as ordered, disjoint closed intervals (a string written otherwise,
    out of order or overlapping, is read as the set it names)."""
    machines = interval_runs(text)
    if any(first > last for first, last in machines) or any(
            following <= last for (_, last), (following, _) in zip(machines, machines[1:])):
        machines = [(interval.inf, interval.sup) for interval in ProcSet.from_str(text).intervals()]
    return machines


def _last_job_end_per_machine(finish: np.ndarray, allocations: list[list[tuple[int, int]]], nb_machines: int) -> float:
    """Sum over machines of the latest finish time of the jobs that ran on them (0 if none); an
    allocation is a list of closed intervals of machines."""
    size = max([nb_machines] + [machines[-1][1] + 1 for machines in allocations if machines])
    last = np.zeros(size)
    unset = np.ones(size, dtype=bool)  # the machines whose last job is still to find
    left = size
    for index in np.argsort(finish, kind="stable")[::-1].tolist():  # the last job to finish first
        for first, end in allocations[index]:
            fresh = unset[first:end + 1]
            if fresh.any():
                last[first:end + 1][fresh] = finish[index]
                left -= int(fresh.sum())
                fresh[:] = False
        if not left:
            break
    return float(last.sum())


def _write_text(path: str | Path, text: str) -> None:
    write_text(path, text, newline="")
