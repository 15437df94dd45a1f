"""Per-job and aggregate metrics from a jobs table in Batsim's ``_jobs.csv`` schema.

The same functions serve a real Batsim run (:func:`batsim_classifier_scheduler.sim.batsim_files.read_jobs_csv`) and ours
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
  running sum in submission order), ``mean_wait``, ``max_wait``, ``mean_response`` (the mean response
  time, or flow: finish - submission; Goponenko et al.'s AF, average flow);
- ``makespan`` = the last finish time, from time 0: Batsim's ``makespan`` (``_schedule.csv``);
- ``span`` = last finish - first submission: the time the workload occupied the machine;
- ``utilisation`` = processor-seconds of useful work (``useful_core_seconds``: the killed attempts
  left out, they are ``wasted_core_seconds``) / (nb_machines x span): a variant that only adds kills
  does not read as a better use of the machine. Without kills, and with the first submission at 0 (as on
  KTH-SP2), this is Batsim's time_computing / (nb_machines x makespan);
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
- ``class_divider``: the median runtime of the completed jobs, which splits them into the actually small
  (runtime below it) and the actually large; ``nb_jobs_actual_small``, ``mean_bsld_actual_small`` and
  ``mean_wait_actual_small``, and the same for ``large`` (``simulate``'s table compares the large ones' mean
  bsld across variants);
- ``nb_success``, ``nb_walltime`` (final attempt reached its walltime), ``nb_rejected``: the original jobs
  by final state;
- ``nb_kills`` (killed attempts), ``nb_jobs_killed`` (original jobs killed at least once),
  ``share_jobs_killed`` (``nb_jobs_killed`` / ``nb_jobs``) and ``wasted_core_seconds``; the same keys
  (but the share) with a ``_<class>`` suffix per class when
  the jobs carry one (a ``class`` column, or ``class=...`` in the metadata; a job's class is the
  first one its attempts carry).

**The registry.** Every aggregate is one :class:`Metric` of :data:`METRICS`: its key, how it is computed
from a :class:`JobSet`, and how it is shown (its row in ``simulate``'s table, its column in the report's
costs table). :func:`summarize`, ``simulate``'s table, ``report`` (:mod:`batsim_classifier_scheduler.experiments.collect`
and :mod:`batsim_classifier_scheduler.experiments.report`) all read it: a new metric is one entry (:func:`register`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Callable

import numpy as np

from batsim_classifier_scheduler.core.messages import REJECTED, SUCCESS, WALLTIME
from batsim_classifier_scheduler.core.job import JobClass
from batsim_classifier_scheduler.jobs_columns import JobsTable, column, numeric_column, text_values
from batsim_classifier_scheduler.util.values import DEFAULT_TAU

if TYPE_CHECKING:
    import pandas as pd

FOLDED_COLUMNS = [
    "job_id", "workload_name", "submission_time", "start", "finish", "runtime", "wait", "response", "res",
    "requested_time", "final_state", "attempts", "wasted_core_seconds",
]
_TEXT = {"job_id", "workload_name", "final_state"}


def bounded_slowdown(wait, runtime, tau: float = DEFAULT_TAU):
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
    names = text_values(jobs["job_id"])
    # Each attempt's full id (``workload!name``) is made only when needed: when a name has its workload already, or
    # for the lineage; else the table's own strings serve (a full id of a million jobs made once more is 60 MB)
    ids = None
    if any("!" in name for name in names) or any("!" in workload for workload in set(workloads)):
        ids = [j if "!" in j else f"{w}!{j}" for j, w in zip(names, workloads)]
    # Without resubmissions (no "#" in the ids, no parent in the metadata) each attempt is an original job.
    hashed = (any("#" in full_id for full_id in ids) if ids is not None
              else any("#" in name for name in names) or any("#" in workload for workload in set(workloads)))
    lineage = hashed or any("parent" in meta for meta in metadata)
    attempt = np.zeros(n)
    if lineage:  # each attempt's original job's
        if ids is None:
            ids = [f"{w}!{j}" for j, w in zip(names, workloads)]
        attempt = np.array([_attempt_number(i) for i in ids], dtype=np.float64)
        ids = _roots(ids, metadata)
    if ids is not None:
        workloads, names = _split(ids)
    root_workload, root_name = np.array(workloads, dtype=object), np.array(names, dtype=object)
    state = np.array(text_values(jobs["final_state"]), dtype=object)
    rejected = state == REJECTED
    submission = numeric_column(jobs, "submission_time")
    start = _unless(rejected, numeric_column(jobs, "starting_time"))
    runtime = _unless(rejected, numeric_column(jobs, "execution_time"))
    res = np.asarray(jobs["requested_number_of_resources"])
    area = np.nan_to_num(runtime * res)
    row = np.arange(n)

    # Sort attempts by original job, then in the order they ran; the last of each group is the final one.
    if not lineage and _distinct(workloads, names):  # the common case: each row a job of its own, already in that order
        order = first = last = row
    else:
        codes: dict[tuple[str, str], int] = {}
        codes = np.array([codes.setdefault(root, len(codes)) for root in zip(workloads, names)])  # in order of first appearance
        order = np.lexsort((row, start + runtime, attempt, submission, codes))
        codes = codes[order]
        first = np.flatnonzero(np.r_[True, codes[1:] != codes[:-1]])
        last = np.r_[first[1:], n] - 1
    # The folded jobs in submission order (ties: in their first attempts' order), each column indexed once in that order
    submitted = np.minimum.reduceat(submission[order], first)
    rank = np.lexsort((np.minimum.reduceat(order, first), submitted))
    head = order[first][rank]
    tail = head if last is first else order[last][rank]
    folded = {
        "job_id": root_name[head], "workload_name": root_workload[head], "submission_time": submitted[rank],
        "start": start[tail], "runtime": runtime[tail],
    }
    folded["finish"] = folded["start"] + folded["runtime"]
    folded["response"] = folded["finish"] - folded["submission_time"]
    folded["wait"] = folded["response"] - folded["runtime"]
    folded["res"] = res[tail]
    folded["requested_time"] = numeric_column(jobs, "requested_time")[head]
    folded["final_state"] = state[tail]
    folded["attempts"] = (last - first + 1)[rank]
    folded["wasted_core_seconds"] = (np.add.reduceat(area[order], first) - area[order[last]])[rank]
    job_class = _classes(jobs, metadata)
    if job_class is not None:  # the first class carried by the attempts, in order
        labelled = np.array([c != "" for c in job_class])[order]
        position = np.where(labelled, np.arange(n), n)
        found = np.minimum.reduceat(position, first)[rank]
        folded["class"] = np.array(job_class + [""], dtype=object)[np.r_[order, n][found]]
    return {name: folded[name] for name in FOLDED_COLUMNS + (["class"] if job_class is not None else [])}


def cumulative_bsld(jobs: JobsTable, tau: float = DEFAULT_TAU) -> pd.Series:
    """Running sum of bsld over completed original jobs in submission order, indexed by submission time."""
    import pandas as pd

    done = _rows(_folded(jobs), "completed")
    values = bounded_slowdown(done["wait"], done["runtime"], tau)
    return pd.Series(np.cumsum(values), index=pd.Index(done["submission_time"], name="submission_time"),
                     name="cumulative_bsld")


def summarize(jobs: JobsTable, nb_machines: int | None = None, tau: float = DEFAULT_TAU,
              recomputed: bool = False) -> dict[str, float | int]:
    """The aggregate metrics of a run (:data:`METRICS`), as a flat dict with stable keys (see the module doc).

    ``jobs`` is a ``_jobs.csv`` table (one row per attempt) or the result of :func:`fold_attempts`.
    ``utilisation`` is NaN when ``nb_machines`` is not given. The per-class keys follow the metrics, then,
    with ``recomputed``, the metrics that only ``report`` computes (``Metric.summary`` false).
    """
    run = JobSet(_folded(jobs), nb_machines, tau)
    summary = {metric.key: metric.compute(run) for metric in METRICS.values() if metric.summary}
    if "class" in run.folded:
        per_class = [metric for metric in METRICS.values() if metric.summary and metric.per_class]
        for name in sorted(c for c in set(run.folded["class"].tolist()) if c):
            members = JobSet(_rows(run.folded, run.folded["class"] == name), nb_machines, tau)
            summary.update({f"{metric.key}_{name}": metric.compute(members) for metric in per_class})
    if recomputed:
        summary.update({metric.key: metric.compute(run) for metric in METRICS.values() if not metric.summary})
    return summary


# --- the registry of aggregate metrics ------------------------------------------------------------

class JobSet:
    """What a metric reads: folded jobs (``folded``, and ``done``: those not REJECTED, as arrays by column),
    the machine size (None when unknown), tau, and the completed jobs' bounded slowdowns (``bsld``)."""

    def __init__(self, folded: dict[str, np.ndarray], nb_machines: int | None, tau: float) -> None:
        self.folded = folded
        self.done = _rows(folded, "completed")
        self.nb_machines = nb_machines
        self.tau = tau

    @cached_property
    def bsld(self) -> np.ndarray:
        return bounded_slowdown(self.done["wait"], self.done["runtime"], self.tau)

    @cached_property
    def small(self) -> np.ndarray:
        """The completed jobs that are actually small: runtime below the median runtime (:attr:`divider`)."""
        return self.done["runtime"] < self.divider

    @cached_property
    def divider(self) -> float:
        return float(np.median(self.done["runtime"])) if len(self.done["runtime"]) else math.nan


@dataclass(frozen=True)
class Metric:
    """One aggregate metric of :data:`METRICS`.

    ``compute`` gives its value from a :class:`JobSet`. ``label`` is its row in ``simulate``'s results table
    (``{tau:g}`` is replaced by the run's tau; None: no row), its value shown with ``digits`` decimals and
    ``unit``. ``report`` is its column header in the report's costs table (None: not there), placed by
    ``report_rank``. ``per_class``: also computed per class of the jobs (``KEY_CLASS``). ``summary`` false:
    only ``report`` computes it (it needs what a run's summary does not keep), after the per-class keys.
    """

    key: str
    compute: Callable[[JobSet], float | int]
    label: str | None = None
    unit: str = ""
    digits: int = 0
    report: str | None = None
    report_rank: float = math.inf
    per_class: bool = False
    summary: bool = True

    def show(self, value: float, tau: float = DEFAULT_TAU) -> tuple[str, str]:
        """The row of ``simulate``'s table: (label, value with its unit)."""
        return self.label.format(tau=tau), f"{value:.{self.digits}f}" + (f" {self.unit}" if self.unit else "")


#: Every aggregate metric, by key, in the order of a summary's keys.
METRICS: dict[str, Metric] = {}


def register(metric: Metric) -> Metric:
    """Add ``metric`` to :data:`METRICS` (after the others)."""
    METRICS[metric.key] = metric
    return metric


def report_columns() -> list[Metric]:
    """The metrics with a column in the report's costs table (``Metric.report``), in their order there."""
    return sorted((metric for metric in METRICS.values() if metric.report), key=lambda metric: metric.report_rank)


def _mean(values: np.ndarray) -> float:
    return float(values.mean()) if len(values) else math.nan


def _nan_mean(values: np.ndarray) -> float:
    """The mean skipping NaN (as pandas did), NaN when there is no value."""
    return float(np.nanmean(values)) if len(values) else math.nan


def _nan_max(values: np.ndarray) -> float:
    return float(np.nanmax(values)) if len(values) else math.nan


def _makespan(run: JobSet) -> float:
    return float(np.nanmax(run.done["finish"])) if len(run.done["finish"]) else 0.0


def _span(run: JobSet) -> float:
    return _makespan(run) - float(np.nanmin(run.folded["submission_time"])) if len(run.done["finish"]) else 0.0


def _useful(run: JobSet) -> float:
    return float(np.nansum(run.done["runtime"] * run.done["res"]))


def _wasted(run: JobSet) -> float:
    return float(np.nansum(run.folded["wasted_core_seconds"]))


def _utilisation(run: JobSet) -> float:
    used, span = _useful(run), _span(run)
    return used / (run.nb_machines * span) if run.nb_machines and span > 0 else math.nan


def _share_killed(run: JobSet) -> float:
    """The share of the original jobs killed at least once (NaN without jobs)."""
    jobs = len(run.folded["attempts"])
    return float((run.folded["attempts"] > 1).sum() / jobs) if jobs else math.nan


def _nb_class(run: JobSet, job_class: JobClass) -> int:
    """How many original jobs carry ``job_class`` first (0 when the jobs carry no class)."""
    return int((run.folded["class"] == job_class.value).sum()) if "class" in run.folded else 0


def _actual(name: str) -> list[Metric]:
    """The metrics of the actually small (or large) completed jobs, against the median runtime."""
    def mask(run: JobSet) -> np.ndarray:
        return run.small if name == "small" else ~run.small

    def mean(values: Callable[[JobSet], np.ndarray]) -> Callable[[JobSet], float]:
        return lambda run: float(values(run)[mask(run)].mean()) if mask(run).any() else math.nan

    return [Metric(f"nb_jobs_actual_{name}", lambda run: int(mask(run).sum())),
            Metric(f"mean_bsld_actual_{name}", mean(lambda run: run.bsld)),
            Metric(f"mean_wait_actual_{name}", mean(lambda run: run.done["wait"]))]


for _metric in [
    Metric("tau", lambda run: float(run.tau)),
    Metric("nb_jobs", lambda run: len(run.folded["final_state"]), per_class=True),
    Metric("nb_attempts", lambda run: int(run.folded["attempts"].sum())),
    Metric("nb_completed", lambda run: len(run.done["final_state"])),
    Metric("nb_success", lambda run: int((run.folded["final_state"] == SUCCESS).sum())),
    Metric("nb_walltime", lambda run: int((run.folded["final_state"] == WALLTIME).sum())),
    Metric("nb_rejected", lambda run: len(run.folded["final_state"]) - len(run.done["final_state"])),
    Metric("mean_bsld", lambda run: _mean(run.bsld), "mean bsld (tau={tau:g}s)", digits=2, per_class=True),
    Metric("max_bsld", lambda run: float(run.bsld.max()) if len(run.bsld) else math.nan, per_class=True),
    Metric("cumulative_bsld", lambda run: float(run.bsld.sum()), per_class=True),
    Metric("mean_wait", lambda run: _nan_mean(run.done["wait"]), "mean wait", "s", report="mean wait",
           report_rank=3, per_class=True),
    Metric("max_wait", lambda run: _nan_max(run.done["wait"]), "max wait", "s", report="max wait", report_rank=4,
           per_class=True),
    Metric("mean_response", lambda run: _nan_mean(run.done["response"]), "mean response", "s", per_class=True),
    Metric("nb_kills", lambda run: int((run.folded["attempts"] - 1).sum()), per_class=True),
    Metric("nb_jobs_killed", lambda run: int((run.folded["attempts"] > 1).sum()), per_class=True),
    Metric("share_jobs_killed", _share_killed),
    Metric("wasted_core_seconds", _wasted, per_class=True),
    Metric("useful_core_seconds", _useful),
    Metric("makespan", _makespan, "makespan", "s"),
    Metric("span", _span),
    Metric("utilisation", _utilisation, "useful utilisation", digits=3, report="utilisation (useful work)",
           report_rank=5),
    Metric("awf", lambda run: awf(run.done["wait"], run.done["runtime"], run.done["res"]), "AWF", "s",
           report="AWF", report_rank=1),
    Metric("p2sf", lambda run: p_alpha_sf(run.done["wait"], run.done["runtime"], run.done["res"], 2.0), "P2SF",
           "s", report="P2SF", report_rank=2),
    # The actual classes split the jobs at the median runtime of the whole run (simulate compares the large).
    Metric("class_divider", lambda run: run.divider),
    *_actual("small"),
    *_actual("large"),
    # Only report computes these.
    Metric("wasted_fraction", lambda run: _wasted(run) / _useful(run) if _useful(run) > 0 else math.nan,
           summary=False),
    # The classifier's answers (the first class of each job's attempts): small, and uncertain (probing) apart.
    Metric("nb_predicted_small", lambda run: _nb_class(run, JobClass.SMALL), summary=False),
    Metric("nb_predicted_uncertain", lambda run: _nb_class(run, JobClass.UNCERTAIN), summary=False),
]:
    register(_metric)


def _folded(jobs: JobsTable) -> dict[str, np.ndarray]:
    """The folded jobs' columns as arrays: those of ``jobs`` if it is folded already, else :func:`_fold`'s."""
    if all(name in jobs for name in ("attempts", "runtime", "wait")):
        names = FOLDED_COLUMNS + (["class"] if "class" in jobs else [])
        return {name: np.asarray(jobs[name], dtype=object if name in _TEXT or name == "class" else None)
                for name in names}
    if not len(column(jobs, "job_id")):
        return {name: np.array([], dtype=object if name in _TEXT else np.float64) for name in FOLDED_COLUMNS}
    return _fold(jobs)


def _unless(rejected: np.ndarray, values: np.ndarray) -> np.ndarray:
    """``values``, NaN where ``rejected`` (the same array when no row is: no copy)."""
    return np.where(rejected, np.nan, values) if rejected.any() else values


def _rows(table: dict[str, np.ndarray], which: np.ndarray | str) -> dict[str, np.ndarray]:
    """The rows of ``table`` selected by a boolean mask, or the ``"completed"`` ones (not REJECTED)."""
    mask = table["final_state"] != REJECTED if isinstance(which, str) else which
    if mask.all():  # (every row: the same arrays, not copies)
        return dict(table)
    return {name: values[mask] for name, values in table.items()}


def completed_jobs(folded: pd.DataFrame) -> pd.DataFrame:
    """The folded jobs that ran (their final attempt is not REJECTED)."""
    return folded[(folded["final_state"] != REJECTED).to_numpy()]


def _split(ids: list[str]) -> tuple[list[str], list[str]]:
    """The workloads and the names of full ids (``workload!name``)."""
    parts = [full_id.partition("!") for full_id in ids]
    return [part[0] for part in parts], [part[2] for part in parts]


def _distinct(workloads: list[str], names: list[str]) -> bool:
    """Whether no two rows have both the same workload and the same name."""
    pairs = names if len(set(workloads)) <= 1 else zip(workloads, names)
    return len(set(pairs)) == len(names)


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
