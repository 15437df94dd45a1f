"""Slurm accounting as a workload: read ``sacct --parsable2`` output (plain or gzip) and clean it as an SWF
trace is cleaned.

The file is read in one ``pandas.read_csv`` call (``|``-separated, every field as text), then each needed
column is parsed whole (:mod:`~batsim_classifier_scheduler.workloads.sacct_times`). The records become jobs
(:mod:`~batsim_classifier_scheduler.workloads.sacct_jobs`), the jobs an SWF table (times in seconds from the first
submission, ``UnixStartTime`` the epoch of that instant), and :func:`~batsim_classifier_scheduler.workloads.cleaning.clean`
applies the SWF's rules: the report counts sacct's own rules first, then the SWF's. Users and groups are
numbered in order of first submission, as the SWF does, unless ``keep_names``. docs/slurm.md says it all
for an administrator.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path

import numpy as np
import pandas as pd

from batsim_classifier_scheduler.errors import InputFormatError, UsageError, WorkloadError
from batsim_classifier_scheduler.workloads import sacct_times
from batsim_classifier_scheduler.workloads.cleaning import CleaningRules, clean
from batsim_classifier_scheduler.workloads.cleaning_report import CleaningReport
from batsim_classifier_scheduler.workloads.model import Workload
from batsim_classifier_scheduler.workloads.sacct_fields import SacctOptions, canonical, columns_for, looks_like_header
from batsim_classifier_scheduler.workloads.sacct_jobs import (JOB_ID, STATUS, drop_masks, fold_records, merge_components, numbered,
                                             peak_usage)
from batsim_classifier_scheduler.workloads.swf import COLUMNS, SwfTrace, _reading

__all__ = ["SacctOptions", "convert_sacct", "read_records"]

_UNITS = {"cpus": "processors", "nodes": "nodes"}


def convert_sacct(path: str | Path, *, options: SacctOptions | None = None, nb_res: int | None = None,
                  cleaning: CleaningRules | None = None) -> tuple[Workload, CleaningReport]:
    """Read a ``sacct --parsable2`` file and clean it; return the workload and the cleaning report.

    ``nb_res``: the machine's size in the unit of ``options.unit``; by default the peak of units in use at
    once in the log (of the partitions kept), the smallest machine that ran it as it ran.
    """
    path, options = Path(path), options or SacctOptions()
    records, lines = read_records(path, options)
    jobs, counts, notes, offsets = _jobs(path, records, lines, options)
    masks = drop_masks(jobs, options.partitions)
    keep, dropped = np.ones(len(jobs), dtype=bool), {}
    for rule, mask in masks.items():
        dropped[rule] = int((mask & keep).sum())
        keep &= ~mask
    if not keep.any():
        raise WorkloadError(f"{path}: no job left of {len(jobs):,} in {counts['records']:,} records (dropped: "
                            f"{', '.join(f'{rule} {n:,}' for rule, n in dropped.items() if n)})")
    candidates = jobs[keep].reset_index(drop=True)
    trace = _swf_trace(path, candidates, options, offsets)
    size_from = "given"
    if nb_res is None:
        size = np.where(trace.jobs["procs_alloc"] > 0, trace.jobs["procs_alloc"], trace.jobs["procs_req"])
        ran = (trace.jobs["runtime"] > 0).to_numpy() & (size > 0)
        nb_res = peak_usage(candidates["start"].to_numpy()[ran], trace.jobs["runtime"].to_numpy()[ran], size[ran])
        if nb_res <= 0:
            raise WorkloadError(f"{path}: no job left that ran (every kept job has no runtime or no size)")
        size_from = (f"the peak of {_UNITS[options.unit]} in use at once in the log"
                     + (f", partition {','.join(options.partitions)}" if options.partitions else ""))
    workload, report = clean(trace, nb_res=nb_res, rules=cleaning)
    kept_states = candidates["state"][candidates["id"].isin(workload.jobs["id"])].value_counts()
    notes.append("kept jobs by state: " + ", ".join(f"{state} {n:,} (SWF status {STATUS[state]})"
                                                     for state, n in kept_states.items()))
    report.swf_jobs += int(sum(dropped.values()))
    report.dropped = {**dropped, **report.dropped}
    report.dropped_overlaps = {**{rule: int(mask.sum()) for rule, mask in masks.items()}, **report.dropped_overlaps}
    report.nb_res_from, report.records, report.unit, report.reading = size_from, counts, _UNITS[options.unit], notes
    return workload, report


def read_records(path: Path, options: SacctOptions) -> tuple[pd.DataFrame, np.ndarray]:
    """The file's records (every field as text; columns named by sacct's spelling) and each one's line."""
    with _reading(path) as stream:
        lines = stream.read().split("\n")
    while lines and not lines[-1].strip():
        lines.pop()
    first = lines[0].rstrip("\r") if lines else ""
    if options.fields:
        unknown = [name for name in options.fields if canonical(name) is None]
        if unknown:
            raise WorkloadError(f"{path}: {unknown[0]!r} is not a sacct field (sacct --helpformat lists them)")
        fields, start = tuple(canonical(name) for name in options.fields), 0
        if looks_like_header(first):
            if _header(first) != fields:
                raise UsageError(f"{path}: line 1 is a header ({first}) that --sacct-fields contradicts; "
                                 "drop --sacct-fields")
            start = 1
    elif looks_like_header(first):
        fields, start = _header(first), 1
    else:
        raise InputFormatError(f"{path}:1: not a sacct --parsable2 header: expected sacct's field names separated by "
                            f"'|', with JobID, got {first[:60]!r} (a file without its header needs --sacct-fields)")
    twice = sorted({name for name in fields if fields.count(name) > 1})
    if twice:
        raise WorkloadError(f"{path}:1: field {twice[0]} is given twice")
    used = set(chosen_columns(path, fields, options).values())  # a missing field is said before any line is read
    numbers = [n for n in range(start, len(lines)) if lines[n].strip()]
    if not numbers:
        raise WorkloadError(f"{path}: no records, only a header")
    body = [lines[n].rstrip("\r") for n in numbers]
    trailing = body[0].count("|") == len(fields)  # sacct -p ends each line with a '|'
    expected = len(fields) - 1 + trailing
    for n, line in zip(numbers, body):
        if line.count("|") != expected:
            raise WorkloadError(f"{path}:{n + 1}: {line.count('|') + 1 - trailing} fields, expected {len(fields)} "
                                f"({', '.join(fields)}); a '|' inside a field (such as JobName) cannot be read")
    names = list(fields) + ["_end"] * trailing
    records = pd.read_csv(io.StringIO("\n".join(body)), sep="|", header=None, names=names, dtype=str,
                          usecols=[name for name in fields if name in used], na_filter=False,
                          quoting=csv.QUOTE_NONE, engine="c")
    return records, np.asarray(numbers) + 1


def chosen_columns(path: Path, fields: tuple[str, ...], options: SacctOptions) -> dict[str, str]:
    """:func:`~batsim_classifier_scheduler.workloads.sacct_fields.columns_for`, a missing field said as the file's mistake
    (its header) or the command line's (``--sacct-fields``)."""
    try:
        return columns_for(fields, options)
    except ValueError as exc:
        if options.fields:
            raise UsageError(f"--sacct-fields: {exc}") from None
        raise InputFormatError(f"{path}:1: {exc}") from None


def _header(line: str) -> tuple[str, ...]:
    return tuple(canonical(name) for name in line.rstrip("|").split("|"))


def _jobs(path: Path, records: pd.DataFrame, lines: np.ndarray,
          options: SacctOptions) -> tuple[pd.DataFrame, dict[str, int], list[str], set[str]]:
    """The table of jobs (one row per job allocation; times in seconds since 1970), the record counts,
    what the report says of the reading and the UTC offsets the times give."""
    chosen = chosen_columns(path, tuple(records.columns), options)
    ids = records[chosen["jobid"]]
    named = np.flatnonzero(~np.strings.isdigit(ids.to_numpy(dtype=str)))  # array elements, steps...: checked
    bad = named[~ids.iloc[named].str.fullmatch(JOB_ID).to_numpy()]
    if len(bad):
        row = int(bad[0])
        raise WorkloadError(f"{path}:{lines[row]}: field {chosen['jobid']}: {ids.iloc[row]!r} is not a job id "
                            "(N, N_K, N_[A-B], N+K, with a .STEP)")
    keep, counts = fold_records(ids)
    records, lines = records[keep].reset_index(drop=True), lines[keep]

    def parse(what: str, reader, **kwargs):
        field = chosen[what]
        try:
            return reader(records[field], **kwargs)
        except sacct_times.BadValue as exc:
            raise InputFormatError(f"{path}:{lines[exc.row]}: field {field}: {exc}") from None

    notes = [f"submission: field {chosen['submit']}"]
    submit, offsets = parse("submit", sacct_times.times)
    start, start_offsets = parse("start", sacct_times.times)
    offsets = (offsets or set()) | (start_offsets or set())
    if "elapsed" in chosen:
        runtime = parse("elapsed", sacct_times.counts if chosen["elapsed"] == "ElapsedRaw" else sacct_times.durations)
        notes.append(f"runtime: field {chosen['elapsed']}")
    else:
        end, end_offsets = parse("end", sacct_times.times)
        offsets |= end_offsets or set()
        runtime = end - start
        notes.append("runtime: End - Start")
    runtime = np.where(np.isnan(start), np.nan, runtime)
    notes.append(_time_note(offsets))
    limit = np.full(len(records), np.nan)
    if "limit" in chosen:
        raw = chosen["limit"] == "TimelimitRaw"
        limit = parse("limit", sacct_times.counts if raw else sacct_times.durations, limit=True) * (60 if raw else 1)
    units = ("cpus", "req_cpus") if options.unit == "cpus" else ("nodes", "req_nodes")
    alloc, req = (parse(what, sacct_times.counts) if what in chosen else np.full(len(records), np.nan)
                  for what in units)
    if units[1] in chosen and chosen.get(units[0]) == chosen[units[1]]:  # NNodes read once, as allocated
        req = np.full(len(records), np.nan)
    codes, written = pd.factorize(records[chosen["state"]])  # a few states: each read once
    words = np.array([text.split(" ", 1)[0].upper() for text in written] + [""], dtype=object)
    states = pd.Series(words[codes])
    unknown = ~states.isin(STATUS).to_numpy()
    if unknown.any():
        row = int(np.flatnonzero(unknown)[0])
        raise WorkloadError(f"{path}:{lines[row]}: field {chosen['state']}: {records[chosen['state']].iloc[row]!r} "
                            "is not a Slurm job state")
    empty = pd.Series([""] * len(records), dtype=object)
    jobs = pd.DataFrame({
        "id": ids[keep].to_numpy(), "submit": submit, "start": start, "runtime": runtime, "limit": limit,
        "alloc": np.where(alloc > 0, alloc, -1.0), "req": np.where(req > 0, req, -1.0),  # 0 (or none): unknown
        "state": states.to_numpy(),
        **{what: (records[chosen[what]] if what in chosen else empty).to_numpy()
           for what in ("user", "group", "partition")},
    })
    if not options.keep_names:
        notes.append("users and groups: numbered in order of first submission (--keep-user-names keeps names)")
    return merge_components(jobs), counts, notes, offsets


def _time_note(offsets: set[str]) -> str:
    if not offsets:
        return "times: without a UTC offset, read as written (the cluster's local time)"
    if len(offsets) == 1:
        return f"times: UTC offset {next(iter(offsets))}"
    return f"times: UTC offsets {', '.join(sorted(offsets))}: normalised to UTC"


def _swf_trace(path: Path, jobs: pd.DataFrame, options: SacctOptions, offsets: set[str]) -> SwfTrace:
    """The jobs as an SWF trace: times from the first submission, ``UnixStartTime`` its epoch, and
    ``TimeZone`` the offset of the times when they all give the same one (the classifier's local time)."""
    known = jobs["submit"].dropna()
    base = float(known.min()) if len(known) else 0.0
    order = np.argsort(jobs["submit"].fillna(np.inf).to_numpy(), kind="stable")
    table = pd.DataFrame({name: -1 for name in COLUMNS}, index=jobs.index)
    table["job"] = jobs["id"]
    table["submit"] = (jobs["submit"] - base).fillna(-1)
    table["wait"] = (jobs["start"] - jobs["submit"]).fillna(-1)
    table["runtime"] = jobs["runtime"].fillna(-1)
    table["procs_alloc"] = jobs["alloc"]
    table["procs_req"] = jobs["req"]
    table["time_req"] = jobs["limit"].fillna(-1)
    table["status"] = jobs["state"].map(STATUS)
    for what in ("user", "group"):
        if options.keep_names:
            table[what] = jobs[what].where(jobs[what] != "", -1)
        else:
            codes = np.empty(len(jobs), dtype=np.int64)
            codes[order] = numbered(jobs[what].iloc[order].reset_index(drop=True))
            table[what] = codes
    table["partition"] = jobs["partition"].where(jobs["partition"] != "", -1)
    header = {"UnixStartTime": int(base)} if len(known) else {}
    if len(offsets) == 1:
        header["TimeZone"] = _offset_seconds(next(iter(offsets)))
    return SwfTrace(table=table, header=header, path=path)


def _offset_seconds(offset: str) -> int:
    """``+0100``, ``-05:30`` or ``Z`` as seconds east of UTC."""
    digits = offset.replace(":", "")
    if digits in ("Z", ""):
        return 0
    sign = -1 if digits[0] == "-" else 1
    return sign * (int(digits[1:3]) * 3600 + int(digits[3:5] or 0) * 60)
