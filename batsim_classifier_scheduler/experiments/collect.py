"""Read runs back from disk and recompute their metrics from the ``_jobs.csv`` files.

**Which files make a run.** Every ``NAME_jobs.csv`` (or ``NAME_jobs.csv.gz``) under the given folders
(hidden folders such as ``.cache`` excepted) is a run, described by the first of:

1. ``NAME_config.json``, the convention for **real Batsim output**: an object with ``trace`` (the
   trace's label, default ``NAME``), ``policy`` (default ``fcfs``), ``variant`` (default ``base``),
   ``nb_machines`` (or ``platform``: a SimGrid XML file, relative to the JSON file), and optionally
   ``seed`` (default 0) and ``tau`` (default 60). For example, next to ``kth-spf_jobs.csv`` written
   by ``batsim -e out/kth-spf``::

       {"trace": "KTH-SP2", "policy": "spf", "variant": "classification-idempotent", "nb_machines": 100}

2. ``NAME_summary.json`` as written by ``simulate -e`` and ``sweep``: a sweep's run carries its
   trace, policy, variant and seed labels; for a ``simulate`` run they come from what it recorded: the
   trace label from the workload file name, the policy and seed from its config, the variant from its
   whole config (:func:`variant_of`: the named variant it ran, followed by any option it set otherwise).
   A sweep run without its ``run_done.json`` marker is unfinished and ignored.
3. ``NAME_schedule.csv``, as Batsim and ``batsim-peer -e NAME`` write it beside their ``NAME_jobs.csv``:
   its ``nb_computing_machines`` is the machine size, and the labels are those of an empty
   ``NAME_config.json`` (trace ``NAME``, policy ``fcfs``, variant ``base``); the report says so, and a
   ``NAME_config.json`` gives the true ones.

**Runs that differ are never merged.** Runs of one trace, policy and variant label are averaged over
their seeds; when two of them differ in anything else (a scheduler option, tau, the machine size), each
label gets the options that tell them apart (``+name=value``).

``NAME_classifier_weeks.csv``, when present, gives the classifier's weekly quality and the divider in
force each week; ``NAME_predictions.csv``, when present, the runtime predictor's per-job accuracy (both are
written by ``simulate -e``, ``sweep`` and ``serve -e``).

**What is recomputed** (:func:`analyze_run`), with :mod:`batsim_classifier_scheduler.metrics` and the run's tau: the
summary (attempts folded back into their original jobs through the ``#k`` ids and the ``parent=``
metadata); bsld per *actual* class, small meaning a runtime below the median runtime of the run's
jobs (the same jobs and runtimes in every run of a trace, so the classes are comparable across
variants, including base runs, which classify nothing); bsld per *predicted* class (the ``class=``
metadata, runs with a classifier only); the classifier's precision, recall and false-small /
false-large rates over all jobs (predicted small: classified small; uncertain jobs count as not small, and
are counted apart), with the actual class of a job taken, as the classifier does, against
the divider in force in the week of its submission; the running sum of bsld; monthly (30-day) mean
bsld; the prediction accuracy (MAE, R², share of under-predictions, RA, AI, deadline misses, as
``prediction_*``) when the run has a ``NAME_predictions.csv``.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable

import numpy as np
import pandas as pd

from batsim_classifier_scheduler.config import VARIANTS
from batsim_classifier_scheduler.errors import ConfigError, WorkloadError
from batsim_classifier_scheduler.core.job import JobClass
from batsim_classifier_scheduler.util.values import DEFAULT_TAU

MONTH = 30 * 86400.0
WEEK = 7 * 86400.0
JOBS_SUFFIXES = ("_jobs.csv", "_jobs.csv.gz")
#: Points kept of a run's cumulative bsld curve (enough for a plot).
CURVE_POINTS = 1500


@dataclass
class RunFiles:
    """A run found on disk and its labels."""

    prefix: Path
    jobs_csv: Path
    trace: str
    policy: str
    variant: str
    seed: int = 0
    nb_machines: int | None = None
    tau: float = DEFAULT_TAU
    origin: str = "batsim"  # "batsim" (NAME_config.json), "sweep" or "simulate" (NAME_summary.json)
    summary: dict | None = None
    weeks_csv: Path | None = None
    predictions_csv: Path | None = None
    described_by: Path | None = None  # the NAME_config.json or NAME_summary.json read
    #: A sweep's run of the first N jobs of its trace only (the trace's ``max_jobs``), else None.
    max_jobs: int | None = None
    #: Everything but the labels that makes the run what it is (its scheduler options, the machine size, tau):
    #: runs that differ in it are never averaged together.
    settings: dict = field(default_factory=dict)

    @property
    def key(self) -> tuple:
        return (self.trace, self.policy, self.variant, self.seed)


@dataclass
class RunData:
    """The recomputed metrics of one run, and the series its plots need."""

    files: RunFiles
    metrics: dict[str, Any]
    cumulative: pd.DataFrame  # columns: days, cumulative_bsld (downsampled)
    monthly: pd.DataFrame  # columns: month, mean_bsld, jobs, days (covered by submissions: 30 but the last)
    weeks: pd.DataFrame | None = None  # the classifier's weekly report
    warnings: list[str] = field(default_factory=list)

    @property
    def row(self) -> dict[str, Any]:
        f = self.files
        return {"trace": f.trace, "policy": f.policy, "variant": f.variant, "seed": f.seed,
                "nb_machines": f.nb_machines, "tau": f.tau, "origin": f.origin, "path": str(f.prefix),
                "max_jobs": f.max_jobs,
                **self.metrics}


def discover_runs(roots: Iterable[str | Path], log: Callable[[str], None] | None = None) -> list[RunFiles]:
    """Every run under ``roots`` (see the module doc), sorted by trace, policy, variant, seed."""
    found: dict[Path, RunFiles] = {}
    for root in map(Path, roots):
        if not root.exists():
            raise WorkloadError(f"{root}: no such results folder")
        candidates = [root] if root.is_file() else sorted(p for s in JOBS_SUFFIXES for p in root.rglob(f"*{s}"))
        for jobs_csv in candidates:
            if any(part.startswith(".") for part in jobs_csv.relative_to(root).parts[:-1]) if root.is_dir() else False:
                continue
            name = jobs_csv.name
            suffix = next((s for s in JOBS_SUFFIXES if name.endswith(s)), None)
            if suffix is None:
                continue
            prefix = jobs_csv.with_name(name[: -len(suffix)])
            try:
                run = describe_run(prefix, jobs_csv)
            except ConfigError as exc:
                if log:
                    log(f"skipped {jobs_csv}: {exc}")
                continue
            if run is None:
                if log:
                    log(f"skipped {jobs_csv}: no {prefix.name}_config.json, {prefix.name}_summary.json or "
                        f"{prefix.name}_schedule.csv beside it")
                continue
            if run.described_by and run.described_by.name.endswith("_schedule.csv") and log:
                log(f"note: {jobs_csv}: labelled trace {run.trace}, policy {run.policy}, variant {run.variant} "
                    f"(nothing says otherwise: a {prefix.name}_config.json beside it gives its labels)")
            found[prefix.resolve()] = run
    runs = sorted(_tell_apart(list(found.values())),
                  key=lambda r: (r.trace, r.policy, r.variant, r.seed, str(r.prefix)))
    seen: dict[tuple, RunFiles] = {}
    for run in runs:
        if run.key in seen and log:
            log(f"note: {run.prefix} and {seen[run.key].prefix} are both {'/'.join(map(str, run.key))}; "
                "the report averages them")
        seen.setdefault(run.key, run)
    return runs


def _tell_apart(runs: list[RunFiles]) -> list[RunFiles]:
    """Runs sharing a trace, policy and variant label but differing in their settings get, each, the settings
    that differ appended to their variant label."""
    groups: dict[tuple, list[RunFiles]] = {}
    for run in runs:
        groups.setdefault((run.trace, run.policy, run.variant), []).append(run)
    for group in groups.values():
        if len({json.dumps(run.settings, sort_keys=True, default=str) for run in group}) < 2:
            continue
        keys = sorted({key for run in group for key in run.settings})
        differing = [key for key in keys if len({repr(run.settings.get(key)) for run in group}) > 1]
        for run in group:
            run.variant += "".join(f"+{key}={_show(run.settings.get(key))}" for key in differing)
    return runs


def describe_run(prefix: Path, jobs_csv: Path) -> RunFiles | None:
    """The labels of the run at ``prefix`` (None when nothing describes it; see the module doc)."""
    weeks = Path(f"{prefix}_classifier_weeks.csv")
    weeks = weeks if weeks.is_file() else None
    predictions = Path(f"{prefix}_predictions.csv")
    predictions = predictions if predictions.is_file() else None
    config_file = Path(f"{prefix}_config.json")
    summary_file = Path(f"{prefix}_summary.json")
    summary = _read_json(summary_file) if summary_file.is_file() else None
    if config_file.is_file():
        meta = _read_json(config_file)
        if not isinstance(meta, dict):
            raise ConfigError(f"{config_file}: expected a JSON object")
        nb_machines = meta.get("nb_machines")
        if nb_machines is None and meta.get("platform"):
            from batsim_classifier_scheduler.platforms import read_platform

            platform = Path(meta["platform"])
            platform = platform if platform.is_absolute() else config_file.parent / platform
            nb_machines = read_platform(platform).nb_compute_hosts
        if nb_machines is None and summary:
            nb_machines = summary.get("nb_machines")
        if nb_machines is not None and (not isinstance(nb_machines, int) or nb_machines <= 0):
            raise ConfigError(f"{config_file}: 'nb_machines' must be a positive integer, got {nb_machines!r}")
        if summary and summary.get("nb_machines") not in (None, nb_machines):
            raise ConfigError(f"{config_file}: 'nb_machines' is {nb_machines} but {summary_file.name} says "
                              f"{summary['nb_machines']}")
        variant = str(meta.get("variant", "base"))
        tau = float(meta.get("tau", DEFAULT_TAU))
        settings = {key: value for key, value in meta.items() if key not in ("trace", "policy", "variant", "seed")}
        return RunFiles(prefix=prefix, jobs_csv=jobs_csv, trace=str(meta.get("trace", prefix.name)),
                        policy=str(meta.get("policy", "fcfs")).lower(), variant=variant,
                        seed=int(meta.get("seed", 0)), nb_machines=nb_machines, tau=tau,
                        origin="batsim", summary=summary, weeks_csv=weeks, predictions_csv=predictions,
                        described_by=config_file, settings={**settings, "nb_machines": nb_machines, "tau": tau})
    if summary is None:
        schedule_file = Path(f"{prefix}_schedule.csv")
        return _batsim_run(prefix, jobs_csv, schedule_file, weeks, predictions) if schedule_file.is_file() else None
    if not isinstance(summary, dict) or not isinstance(summary.get("config"), dict):
        raise ConfigError(f"{summary_file}: not a run summary (no 'config' object)")
    config = summary["config"]
    sweep = summary.get("sweep")
    if sweep:
        if not Path(f"{prefix}_done.json").is_file():
            raise ConfigError("unfinished sweep run (no run_done.json)")
        trace, policy, variant, seed = sweep["trace"], sweep["policy"], sweep["variant"], sweep["seed"]
    else:
        from batsim_classifier_scheduler.experiments.grid import trace_label

        workload = summary.get("workload") or {}
        trace = trace_label(workload.get("name") or prefix.name)
        policy, seed = config.get("policy", "fcfs"), config.get("seed", 0)
        variant = variant_of(config, summary.get("variant"))
    tau, nb_machines = float(summary.get("tau", DEFAULT_TAU)), summary.get("nb_machines")
    settings = {key: value for key, value in config.items() if key not in ("policy", "seed")}
    return RunFiles(prefix=prefix, jobs_csv=jobs_csv, trace=str(trace), policy=str(policy), variant=str(variant),
                    seed=int(seed), nb_machines=nb_machines, tau=tau,
                    origin="sweep" if sweep else "simulate", summary=summary, weeks_csv=weeks,
                    max_jobs=(sweep or {}).get("max_jobs"),
                    predictions_csv=predictions, described_by=summary_file,
                    settings={**settings, "nb_machines": nb_machines, "tau": tau})


def _batsim_run(prefix: Path, jobs_csv: Path, schedule_file: Path, weeks: Path | None,
                predictions: Path | None) -> RunFiles:
    """A run that only Batsim's (or ``batsim-peer``'s) ``NAME_schedule.csv`` describes: the default labels,
    and the machine size it gives."""
    try:
        schedule = pd.read_csv(schedule_file)
        nb_machines = int(schedule["nb_computing_machines"].iloc[0])
    except (OSError, ValueError, KeyError, IndexError, pd.errors.ParserError) as exc:
        raise ConfigError(f"{schedule_file}: no machine count (nb_computing_machines) in it ({exc})") from None
    if nb_machines <= 0:
        raise ConfigError(f"{schedule_file}: nb_computing_machines is {nb_machines}")
    return RunFiles(prefix=prefix, jobs_csv=jobs_csv, trace=prefix.name, policy="fcfs", variant="base",
                    nb_machines=nb_machines, origin="batsim", weeks_csv=weeks, predictions_csv=predictions,
                    described_by=schedule_file,
                    settings={"nb_machines": nb_machines, "tau": DEFAULT_TAU})


#: A run's own labels (its policy and seed) and a fact of its trace (the time zone): not part of its variant.
NOT_VARIANT = frozenset({"policy", "seed", "timezone"})


def variant_of(config: dict, recorded: str | None = None) -> str:
    """The variant a scheduler config is: ``recorded`` when that names no variant of
    :data:`batsim_classifier_scheduler.config.VARIANTS` (a preset's or a sweep's own name); else the named variant it differs
    least from, ``recorded`` first (the name ``simulate --variant`` wrote in the summary), followed by every
    option it sets otherwise as ``+name=value`` (``classification-idempotent+probe_threshold=0.3``). Every
    option counts but those of :data:`NOT_VARIANT`: configs that differ never get the same name."""
    from batsim_classifier_scheduler.config import SchedulerConfig

    if recorded is not None and recorded not in VARIANTS and "+" not in recorded:
        return recorded  # a preset or a sweep's own variant, by the name its run was given
    defaults = SchedulerConfig().to_dict()
    given = {**defaults, **config}
    names = sorted(VARIANTS, key=lambda name: name != recorded)  # stable: the recorded name first

    def changes(name: str) -> list[str]:
        settings = {**defaults, **VARIANTS[name]}
        return [f"+{key}={_show(value)}" for key, value in given.items()
                if key not in NOT_VARIANT and value != settings.get(key)]

    best = min(names, key=lambda name: len(changes(name)))
    return best + "".join(changes(best))


def _show(value: Any) -> str:
    """An option's value in a variant label."""
    if value is None:
        return "none"
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, (dict, list)):
        return json.dumps(value, separators=(",", ":"), sort_keys=True)
    return str(value)


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text())
    except (OSError, json.JSONDecodeError) as exc:
        raise ConfigError(f"{path}: unreadable JSON ({exc})") from None


# --- one run's metrics ------------------------------------------------------------------------------

def analyze_run(files: RunFiles, tau: float | None = None) -> RunData:
    """Recompute a run's metrics from its ``_jobs.csv`` (see the module doc)."""
    from batsim_classifier_scheduler.metrics import bounded_slowdown, completed_jobs, fold_attempts, summarize
    from batsim_classifier_scheduler.sim.batsim_files import read_jobs_csv

    tau = files.tau if tau is None else tau
    jobs = read_jobs_csv(files.jobs_csv)
    check_machines(files, jobs)
    folded = fold_attempts(jobs)
    # every metric of the registry, the actual classes' (against the median runtime) included
    metrics: dict[str, Any] = summarize(folded, nb_machines=files.nb_machines, tau=tau, recomputed=True)
    warnings = []
    done = completed_jobs(folded)
    bsld = bounded_slowdown(done["wait"].to_numpy(), done["runtime"].to_numpy(), tau)
    submission = done["submission_time"].to_numpy()
    origin = float(folded["submission_time"].min()) if len(folded) else 0.0

    # Classifier quality against the weekly dividers.
    weeks = None
    if files.weeks_csv is not None:
        weeks = pd.read_csv(files.weeks_csv)
        metrics.update(classifier_quality(folded, weeks))
        summary_classifier = (files.summary or {}).get("classifier") or {}
        if summary_classifier.get("n") and summary_classifier["n"] != metrics.get("classifier_n"):
            warnings.append(f"{files.prefix}: classifier quality over {metrics.get('classifier_n')} jobs from the "
                            f"jobs file, {summary_classifier['n']} in the summary")

    # Runtime predictions.
    if files.predictions_csv is not None:
        from batsim_classifier_scheduler.knowledge.accuracy import JOB_COLUMNS, accuracy_summary

        table = pd.read_csv(files.predictions_csv, dtype={"job_id": str})
        missing = [c for c in JOB_COLUMNS if c not in table.columns]
        if missing:
            raise WorkloadError(f"{files.predictions_csv}: missing column(s) {', '.join(missing)}")
        metrics.update({f"prediction_{k}": v for k, v in accuracy_summary(table).items()})

    # Running sum of bsld in submission order, and monthly means.
    order = np.argsort(submission, kind="stable")
    cumulative = np.cumsum(bsld[order])
    days = (submission[order] - origin) / 86400.0
    keep = np.unique(np.r_[np.linspace(0, len(days) - 1, min(len(days), CURVE_POINTS)).astype(int)]) if len(days) else []
    curve = pd.DataFrame({"days": days[keep], "cumulative_bsld": cumulative[keep]})
    month = np.floor((submission - origin) / MONTH).astype(int)
    monthly = (pd.DataFrame({"month": month, "bsld": bsld}).groupby("month")["bsld"].agg(["mean", "size"])
               .rename(columns={"mean": "mean_bsld", "size": "jobs"}).reset_index())
    last = float(np.nanmax(folded["submission_time"].to_numpy())) - origin if len(folded) else 0.0
    monthly["days"] = np.clip(last - monthly["month"].to_numpy() * MONTH, 0.0, MONTH) / 86400.0
    return RunData(files=files, metrics=metrics, cumulative=curve, monthly=monthly, weeks=weeks, warnings=warnings)


def check_machines(files: RunFiles, jobs: pd.DataFrame) -> None:
    """Refuse a machine size that the jobs contradict, a job having run on a machine beyond it (a wrong
    ``nb_machines`` gives a utilisation above 1)."""
    if files.nb_machines is None:
        return
    machines = [number for text in set(jobs["allocated_resources"]) for number in re.split(r"[ -]", text) if number]
    if not all(map(str.isdigit, machines)):
        bad = next(number for number in machines if not number.isdigit())
        raise WorkloadError(f"{files.jobs_csv}: column allocated_resources: {bad!r} is not a machine number")
    last = max(map(int, machines), default=-1)
    if last >= files.nb_machines:
        raise ConfigError(f"{files.described_by or files.prefix}: 'nb_machines' is {files.nb_machines}, but "
                          f"{files.jobs_csv.name} has jobs on machine {last} (machines are numbered from 0)")


def classifier_quality(folded: pd.DataFrame, weeks: pd.DataFrame) -> dict[str, Any]:
    """Precision, recall, accuracy, false-small and false-large rates of a run's classification.

    Predicted small: the first ``class=`` an original job's attempts carry is ``small``, as in the classifier's
    own report; an ``uncertain`` job (probing) counts as not small, and ``classifier_uncertain`` counts them
    (``classifier_uncertain_rate``: their share of the jobs counted). Actual: runtime < the divider in
    force in the week of the job's submission (from the classifier's weekly report); jobs submitted
    while the divider is undefined (the first week) are not counted, as in the classifier's own report.
    """
    from batsim_classifier_scheduler.knowledge.classifier import classification_metrics
    from batsim_classifier_scheduler.metrics import completed_jobs

    empty = {f"classifier_{k}": math.nan for k in ("accuracy", "precision", "recall", "false_small_rate",
                                                   "false_large_rate", "uncertain_rate")}
    if "class" not in folded.columns or weeks.empty or "divider" not in weeks.columns:
        return {**empty, "classifier_n": 0}
    weeks = weeks.sort_values("week")
    week_numbers = weeks["week"].to_numpy(dtype=float)
    starts = weeks["week_start"].to_numpy(dtype=float)
    length = WEEK
    if len(weeks) > 1 and week_numbers[-1] > week_numbers[0]:
        length = (starts[-1] - starts[0]) / (week_numbers[-1] - week_numbers[0])
    start_time = starts[0] - week_numbers[0] * length
    done = completed_jobs(folded)
    week = np.maximum(0, np.floor((done["submission_time"].to_numpy() - start_time) / length))
    position = np.searchsorted(week_numbers, week, side="right") - 1
    dividers = weeks["divider"].to_numpy(dtype=float)
    divider = np.where(position >= 0, dividers[np.clip(position, 0, None)], np.nan)
    known = ~np.isnan(divider) & (done["class"].to_numpy() != "")
    classes = done["class"].to_numpy()[known]
    predicted = classes == JobClass.SMALL.value
    uncertain = int((classes == JobClass.UNCERTAIN.value).sum())
    actual = done["runtime"].to_numpy()[known] < divider[known]
    quality = classification_metrics(predicted, actual)
    result = {f"classifier_{k}": quality[k] for k in ("accuracy", "precision", "recall", "false_small_rate",
                                                       "false_large_rate")}
    result.update({"classifier_n": quality["n"], "classifier_tp": quality["tp"], "classifier_fp": quality["fp"],
                   "classifier_fn": quality["fn"], "classifier_tn": quality["tn"], "classifier_uncertain": uncertain,
                   "classifier_uncertain_rate": uncertain / quality["n"] if quality["n"] else math.nan})
    return result


def analyze_runs(runs: list[RunFiles], tau: float | None = None, workers: int = 1) -> list[RunData]:
    """:func:`analyze_run` over ``runs`` (in a process pool when ``workers > 1``)."""
    if workers > 1 and len(runs) > 1:
        import concurrent.futures

        with concurrent.futures.ProcessPoolExecutor(max_workers=workers) as pool:
            return list(pool.map(analyze_run, runs, [tau] * len(runs)))
    return [analyze_run(run, tau) for run in runs]
