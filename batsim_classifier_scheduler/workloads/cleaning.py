"""Cleaning rules that turn SWF job lines into Batsim jobs, each one named and counted.

Jobs are dropped by the first rule they break, in this order:

``runtime<=0``
    The actual runtime is unknown (-1) or zero: there is nothing to simulate.
``res<=0``
    Neither the allocated nor the requested processor count is known.
``res>nb_res``
    The job needs more processors than the machine has.
``submit<0``
    The submit time is unknown.
``runtime>reqtime``
    The job ran past its requested time. Only with ``over_request="drop"``.

Kept jobs are then fixed:

- **processors** = allocated processors (field 5), or the requested ones (field 8) when
  the allocation is unknown;
- **missing requested time** (field 9 ≤ 0, -1 = unknown): by default the job gets the
  trace's largest requested time or runtime, rounded up to a whole hour
  (``missing_walltime="trace-max"``): the machine's implicit limit, as a user who gives no
  estimate gets the queue's maximum. It keeps p < p̃ for these jobs (so Batsim never kills
  them), and it makes estimate-less traces (the Lublin model, where fields 3, 8 and 9 are
  -1) usable by EASY, every job then having the same estimate. ``"none"`` gives walltime
  -1 (no limit and no estimate); a number of seconds gives that limit;
- **runtime > requested time**: by default the walltime is raised to the runtime
  (``over_request="raise"``, plus ``walltime_pad`` seconds), which keeps p ≤ p̃ and
  reproduces the reference conversion of ``../shared/reference-schedules``.

Batsim 4 ends a delay job as ``COMPLETED_WALLTIME_REACHED`` when runtime ≥ walltime, so
jobs left with walltime == runtime (raised ones with no pad, and those that used exactly
their request) get that state, with an unchanged schedule. The report counts them.

The machine size comes from, in order: the caller, the trace catalogue of
:mod:`batsim_classifier_scheduler.workloads.archive` (the paper's machine sizes), the header's ``MaxProcs``
or ``MaxNodes`` (a multi-partition machine's total: ``MaxProcs: 1664 (72, 1368, 224)``), and finally the
largest job.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from batsim_classifier_scheduler.errors import WorkloadError
from batsim_classifier_scheduler.util.values import MAX_MACHINES, MAX_SECONDS
from batsim_classifier_scheduler.workloads.archive import known_machine_size
from batsim_classifier_scheduler.workloads.batsim_json import delay_profile_names, header_fields
from batsim_classifier_scheduler.workloads.cleaning_report import CleaningReport
from batsim_classifier_scheduler.workloads.model import Workload
from batsim_classifier_scheduler.workloads.swf import SwfTrace

#: SWF fields kept as extra job fields (Batsim forwards them in JOB_SUBMITTED).
EXTRA_FIELDS = {"user": "user", "group": "group", "executable": "executable", "queue": "queue",
                "partition": "partition", "procs_req": "requested_procs"}


@dataclass(frozen=True)
class CleaningRules:
    """The choices of the conversion. The defaults reproduce the reference conversion."""

    missing_walltime: str | float = "trace-max"
    over_request: str = "raise"
    walltime_pad: float = 0.0

    def __post_init__(self) -> None:
        if self.over_request not in ("raise", "drop"):
            raise WorkloadError(f"over_request must be 'raise' or 'drop', got {self.over_request!r}")
        if isinstance(self.missing_walltime, str):
            if self.missing_walltime not in ("trace-max", "none"):
                raise WorkloadError("missing_walltime must be 'trace-max', 'none' or seconds, "
                                    f"got {self.missing_walltime!r}")
        elif not 0 < self.missing_walltime <= MAX_SECONDS:
            raise WorkloadError(f"missing_walltime must be positive seconds up to {MAX_SECONDS:.0f}, "
                                f"got {self.missing_walltime}")
        if not 0 <= self.walltime_pad <= MAX_SECONDS:
            raise WorkloadError(f"walltime_pad must be seconds from 0 to {MAX_SECONDS:.0f}, got {self.walltime_pad}")


def clean(trace: SwfTrace, *, nb_res: int | None = None,
          rules: CleaningRules | None = None) -> tuple[Workload, CleaningReport]:
    """Apply the cleaning rules to an SWF trace and build the Batsim workload.

    Job ids are the SWF job numbers; submit times are shifted so that the first kept job
    is submitted at 0; ``unix_submit_time`` (``UnixStartTime`` + submit) is kept when the
    header gives the start time.
    """
    rules = rules or CleaningRules()
    source = str(trace.path)
    runtime = trace.column("runtime").astype(float)
    submit = trace.column("submit").astype(float)
    reqtime = trace.column("time_req").astype(float)
    alloc = trace.column("procs_alloc")
    res = np.where(alloc > 0, alloc, trace.column("procs_req")).astype(np.int64)
    nb_res, nb_res_from = _machine_size(trace, nb_res, res)

    masks = {
        "runtime<=0": runtime <= 0,
        "res<=0": res <= 0,
        "res>nb_res": res > nb_res,
        "submit<0": submit < 0,
        "runtime>reqtime": (reqtime > 0) & (runtime > reqtime) if rules.over_request == "drop"
        else np.zeros(len(trace), dtype=bool),
    }
    keep = np.ones(len(trace), dtype=bool)
    dropped = {}
    for rule, mask in masks.items():
        dropped[rule] = int((mask & keep).sum())
        keep &= ~mask
    if not keep.any():
        raise WorkloadError(f"{source}: no job left after cleaning "
                            f"({', '.join(f'{r}: {n}' for r, n in dropped.items() if n)})")

    runtime, submit, reqtime, res = runtime[keep], submit[keep], reqtime[keep], res[keep]
    walltime, fixed, fallback = _walltimes(runtime, reqtime, rules)
    fixed = {"res_from_requested": int(((alloc[keep] <= 0) & (res > 0)).sum()), **fixed}

    jobs = {
        "id": _job_ids(trace.column("job")[keep]),
        "subtime": submit - submit.min(),
        "res": res,
        "walltime": walltime,
        "runtime": runtime,
        "profile": delay_profile_names(runtime),
    }
    for column, name in EXTRA_FIELDS.items():
        jobs[name] = _as_int_if_integral(trace.column(column)[keep])
    header_fields(f"{source}: header", trace.header)  # the converted workload keeps them
    if trace.unix_start_time is not None:
        jobs["unix_submit_time"] = _as_int_if_integral(trace.unix_start_time + submit)
    if (np.diff(jobs["subtime"]) < 0).any():  # (an archive trace is in submission order already: no copies)
        order = np.argsort(jobs["subtime"], kind="stable")
        jobs = {name: values[order] for name, values in jobs.items()}
    duplicated = _duplicates(jobs["id"].tolist())
    if duplicated:
        raise WorkloadError(f"{source}: duplicate job numbers {duplicated[:5]}")

    report = CleaningReport(
        source=source, swf_jobs=len(trace), kept_jobs=int(keep.sum()), nb_res=nb_res,
        nb_res_from=nb_res_from, first_submit=float(submit.min()),
        skipped_lines=len(trace.skipped_lines), dropped=dropped,
        dropped_overlaps={rule: int(mask.sum()) for rule, mask in masks.items()},
        fixed=fixed, missing_walltime=fallback,
        notes={"walltime==runtime": int((walltime == runtime).sum()),
               "alloc!=requested_procs": int((jobs["res"] != jobs["requested_procs"]).sum())},
    )
    workload = Workload(jobs=jobs, nb_res=nb_res, source=source, header=trace.header, cleaning=report)
    return workload, report


def _walltimes(runtime: np.ndarray, reqtime: np.ndarray,
               rules: CleaningRules) -> tuple[np.ndarray, dict[str, int], float | None]:
    """Walltimes after the missing-request and over-request fallbacks."""
    missing = reqtime <= 0
    if rules.missing_walltime == "none":
        fallback = None
    elif rules.missing_walltime == "trace-max":
        fallback = min(float(np.ceil(max(runtime.max(), reqtime.max(initial=0)) / 3600) * 3600), MAX_SECONDS)
    else:
        fallback = float(rules.missing_walltime)
    walltime = np.where(missing, -1.0 if fallback is None else fallback, reqtime)
    raised = (walltime > 0) & (runtime > walltime)
    walltime = np.where(raised, np.minimum(runtime + rules.walltime_pad, MAX_SECONDS), walltime)
    return walltime, {"walltime_missing": int(missing.sum()), "walltime_raised": int(raised.sum())}, fallback


def _machine_size(trace: SwfTrace, nb_res: int | None, res: np.ndarray) -> tuple[int, str]:
    size, source = _declared_size(trace, nb_res, res)
    if not 0 < size <= MAX_MACHINES:
        raise WorkloadError(f"{trace.path}: machine size {size} ({source}) must be in 1..{MAX_MACHINES:,}")
    return size, source


def _declared_size(trace: SwfTrace, nb_res: int | None, res: np.ndarray) -> tuple[int, str]:
    if nb_res is not None:
        return int(nb_res), "given"
    known = known_machine_size(trace.path.name)
    if known:
        return known[1], f"{known[0]} machine of the paper"
    declared = trace.declared_size()
    if declared:
        key, size, partitions = declared
        if partitions:
            return size, f"header {key}, {len(partitions)} partitions: {' + '.join(f'{p:,}' for p in partitions)}"
        return size, f"header {key}"
    largest = int(res.max(initial=0))
    if largest <= 0:
        raise WorkloadError(f"{trace.path}: cannot tell the machine size (no MaxProcs header, no job size)")
    return largest, "largest job (no MaxProcs header)"


def _job_ids(numbers: np.ndarray) -> np.ndarray:
    """Job ids as text: SWF job numbers as integers, names (Slurm's ``123_4``) as they are."""
    if numbers.dtype.kind in "iufcb":
        numbers = numbers.astype(np.int64)
        if len(numbers):  # (as narrow as the longest: ``astype(str)`` gives every int64 21 characters)
            return numbers.astype(f"<U{max(len(str(numbers.min())), len(str(numbers.max())))}")
    return numbers.astype(str)


def _duplicates(ids: list[str]) -> list[str]:
    """The ids given more than once, in the order of their second occurrence."""
    if len(set(ids)) == len(ids):
        return []
    seen: set[str] = set()
    twice: dict[str, None] = {}
    for job_id in ids:
        if job_id in seen:
            twice[job_id] = None
        seen.add(job_id)
    return list(twice)


_INT32 = np.iinfo(np.int32)


def _as_int_if_integral(values: np.ndarray) -> np.ndarray:
    """Integral values as integers, 32-bit when every one fits (an SWF trace's extra fields: half the memory a job),
    else 64-bit; other values as they are."""
    values = np.asarray(values)
    kind = values.dtype.kind
    if not (kind == "i" or kind == "f" and np.isfinite(values).all() and (values == np.round(values)).all()):
        return values
    if len(values) and _INT32.min <= values.min() and values.max() <= _INT32.max:
        return values.astype(np.int32)
    return values.astype(np.int64)
