"""``report``: the tables and figures of the paper's evaluation, from any set of runs.

:func:`write_report` reads the runs under the given folders (:mod:`scheduler.experiments.collect`: sweep
output, ``simulate -e`` output, or Batsim ``NAME_jobs.csv`` files with a ``NAME_config.json``),
recomputes their metrics from the ``_jobs.csv`` files, and writes into the output folder:

- ``REPORT.md`` (and ``REPORT.html``, the same content) with the tables below and the figures;
- ``runs.csv``: every recomputed metric of every run (one row per run);
- ``tables/*.csv``: each table of the report, unformatted;
- ``img/*.png`` and ``img/*.svg``: the figures.

Tables (values averaged over seeds when a grid has several):

- mean bounded slowdown per trace x policy x variant;
- its reduction relative to the reference run, EASY-FCFS base by default (the paper's Table 7):
  ``1 - bsld / bsld_ref``;
- mean bsld of small and large jobs (the paper's Figure 8), by actual class (runtime below the median
  runtime of the trace's jobs) and, for runs with a classifier, by predicted class;
- the classifier's quality (Tables 5 and 6): precision, recall, accuracy, false-small and false-large
  rates, over the whole run and per week;
- the runtime predictors' accuracy (runs with a predictor): MAE, R² and share of under-predictions of
  the predictions at submission, Talby et al.'s time-weighted RA and AI, deadline misses;
- AWF and P2SF (packing and fairness costs, Goponenko et al.);
- utilisation (of useful work), jobs killed and their share, killed attempts and wasted work.

Figures, per trace: the cumulative bsld over time (Figure 6) and the monthly mean bsld (Figure 7), every
variant that ran (:attr:`Report.plotted_variants`); small- and large-job bars (Figure 8); every variant side by
side (Figure 9); the weekly accuracy, precision and recall of the classifier (Figure 4); gain against harm.
A figure that would compare nothing (Figure 9 of a single run, the trade-off of a trace without any variant
but the reference) is not drawn, and the report says why (:meth:`Report.why_not`).
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

import pandas as pd

from scheduler.config import VARIANTS
from scheduler.errors import UsageError, WorkloadError
from scheduler.experiments import plots as figures_module
from scheduler.experiments.collect import RunData, analyze_runs, discover_runs
from scheduler.experiments.labels import scheduler_name, split_label
from scheduler.experiments.report_markdown import markdown_to_html, render_markdown
from scheduler.metrics import report_columns
from scheduler.outputs import atomic_open, write_text

POLICY_ORDER = ["fcfs", "wfp", "spf", "saf", "sqf", "lpf"]


def _known(given: str | None, default: str, names: list[str], option: str, what: str) -> str:
    """``given`` if the runs have it (a command-line mistake naming ``option`` otherwise), else ``default``."""
    if given is None:
        return default
    if given not in names:
        raise UsageError(f"{option} {given}: no run has it; the runs' {what}: {', '.join(names)}")
    return given


def policy_key(label: str) -> tuple:
    """Sort key of a queue-order label: EASY's first, then by algorithm; the paper's orders first, in its order."""
    algorithm, policy = split_label(label)
    return (algorithm != "easy", algorithm,
            POLICY_ORDER.index(policy) if policy in POLICY_ORDER else len(POLICY_ORDER), policy)


def variant_order(variants: Iterable[str]) -> list[str]:
    variants = list(dict.fromkeys(variants))
    return [v for v in VARIANTS if v in variants] + sorted(v for v in variants if v not in VARIANTS)


class Report:
    """The runs' data and the tables made from them."""

    def __init__(self, data: list[RunData], reference_policy: str | None = None, reference_variant: str | None = None,
                 compare: str | None = None) -> None:
        """``reference_policy`` and ``reference_variant`` name the reference of the reduction table (default
        EASY-FCFS base), ``compare`` the variant shown against base in Figures 4, 6, 7 (default
        classification-idempotent). A name given must be one of the runs'; a default may be absent."""
        if not data:
            raise WorkloadError("no run found (no NAME_jobs.csv with a NAME_config.json, NAME_summary.json or "
                                "NAME_schedule.csv)")
        self.data = data
        self.runs = pd.DataFrame([d.row for d in data])
        self.traces = list(dict.fromkeys(self.runs["trace"]))
        self.policies = sorted(set(self.runs["policy"]), key=policy_key)
        self.variants = variant_order(self.runs["variant"])
        self.reference = (_known(reference_policy, "fcfs", self.policies, "--reference-policy", "policies"),
                          _known(reference_variant, "base", self.variants, "--reference-variant", "variants"))
        self.compare = _known(compare, "classification-idempotent", self.variants, "--compare", "variants")

    # --- tables ------------------------------------------------------------------------------------

    def mean_over_seeds(self, columns: Sequence[str]) -> pd.DataFrame:
        """Per trace x policy x variant, the mean of ``columns`` over seeds (and ``seeds``: their count)."""
        grouped = self.runs.groupby(["trace", "policy", "variant"], sort=False)
        table = grouped[list(columns)].mean(numeric_only=True)
        table["seeds"] = grouped.size()
        return table

    def pivot(self, column: str) -> pd.DataFrame:
        """``column`` (mean over seeds) as rows trace x policy and columns variants."""
        table = self.mean_over_seeds([column])[column].unstack("variant")
        table = table.reindex(columns=[v for v in self.variants if v in table.columns])
        return self._sort_rows(table)

    def _sort_rows(self, table: pd.DataFrame) -> pd.DataFrame:
        index = sorted(table.index, key=lambda k: (self.traces.index(k[0]), policy_key(k[1])) + tuple(k[2:]))
        return table.reindex(index)

    def reduction(self) -> pd.DataFrame:
        """Table 7: ``1 - bsld / bsld(reference)`` per trace x policy (rows) and variant (columns)."""
        bsld = self.pivot("mean_bsld")
        policy, variant = self.reference
        reference = {}
        for trace in self.traces:
            try:
                reference[trace] = bsld.loc[(trace, policy), variant]
            except KeyError:
                reference[trace] = math.nan
        factor = pd.Series([reference[t] for t, _ in bsld.index], index=bsld.index)
        return 1.0 - bsld.div(factor, axis=0)

    def classes(self) -> pd.DataFrame:
        """Figure 8's numbers: mean bsld of actual small and large jobs, and of predicted ones."""
        columns = ["mean_bsld_actual_small", "mean_bsld_actual_large", "nb_jobs_actual_small",
                   "nb_jobs_actual_large", "mean_bsld_small", "mean_bsld_large", "nb_jobs_small", "nb_jobs_large",
                   "nb_jobs_uncertain"]
        present = [c for c in columns if c in self.runs.columns]
        return self._sort_variants(self.mean_over_seeds(present))

    def _sort_variants(self, table: pd.DataFrame) -> pd.DataFrame:
        index = sorted(table.index, key=lambda k: (self.traces.index(k[0]), policy_key(k[1]),
                                                    self.variants.index(k[2])))
        return table.reindex(index)

    def classifier(self) -> pd.DataFrame:
        """Tables 5 and 6: the classifier's quality over each run (runs with a classifier)."""
        columns = ["classifier_precision", "classifier_recall", "classifier_accuracy",
                   "classifier_false_small_rate", "classifier_false_large_rate", "classifier_uncertain",
                   "classifier_uncertain_rate", "classifier_n"]
        if "classifier_n" not in self.runs.columns:
            return pd.DataFrame(columns=columns)
        runs = self.runs[self.runs["classifier_n"].fillna(0) > 0]
        if runs.empty:
            return pd.DataFrame(columns=columns)
        grouped = runs.groupby(["trace", "policy", "variant"], sort=False)
        return self._sort_variants(grouped[[c for c in columns if c in runs.columns]].mean())

    def predictions(self) -> pd.DataFrame:
        """The runtime predictors' accuracy per trace x policy x variant (runs with a predictor)."""
        columns = ["prediction_mae", "prediction_r2", "prediction_under", "prediction_ra", "prediction_ai",
                   "prediction_deadline_misses", "prediction_nb_jobs"]
        if "prediction_nb_jobs" not in self.runs.columns:
            return pd.DataFrame(columns=columns)
        runs = self.runs[self.runs["prediction_nb_jobs"].fillna(0) > 0]
        if runs.empty:
            return pd.DataFrame(columns=columns)
        return self._sort_variants(runs.groupby(["trace", "policy", "variant"], sort=False)[columns].mean())

    def costs(self) -> pd.DataFrame:
        """The metrics of the costs table (AWF, P2SF, waits, utilisation:
        :func:`~scheduler.metrics.report_columns`), kills and wasted
        work per trace x policy x variant."""
        columns = [m.key for m in report_columns()] + ["nb_jobs_killed", "share_jobs_killed", "nb_kills",
                                                       "wasted_core_seconds", "wasted_fraction", "nb_jobs"]
        return self._sort_variants(self.mean_over_seeds([c for c in columns if c in self.runs.columns]))

    def tradeoff(self) -> pd.DataFrame:
        """Gain against harm, per trace x policy x variant: the reduction of mean bsld (as in :meth:`reduction`),
        the wasted work, the actually-large jobs' mean bsld and the longest wait, each against base under the
        same policy (``large_vs_base`` is a relative change, ``max_wait_vs_base`` a ratio; NaN without base)."""
        reduction = self.reduction().stack().rename("reduction")
        columns = [c for c in ("wasted_fraction", "mean_bsld_actual_large", "max_wait") if c in self.runs.columns]
        table = self.mean_over_seeds(columns).join(reduction, how="left")
        if "base" in self.variants:
            base = table.xs("base", level="variant")
            for column, name, change in (("mean_bsld_actual_large", "large_vs_base", True),
                                         ("max_wait", "max_wait_vs_base", False)):
                if column in table:
                    reference = pd.Series([base[column].get((t, p), math.nan) for t, p, _ in table.index],
                                          index=table.index)
                    table[name] = table[column] / reference - (1.0 if change else 0.0)
        return self._sort_variants(table)

    @property
    def plotted_variants(self) -> list[str]:
        """The variants Figures 6 and 7 draw: every variant that ran, in the report's order."""
        return list(self.variants)

    def why_not(self, figure: str, trace: str) -> str | None:
        """Why ``figure`` (``fig9`` or ``tradeoff``) is not drawn for ``trace``, or None when it is: a figure
        that would compare nothing is left out."""
        if figure == "fig9":
            bsld = self.pivot("mean_bsld")
            cells = int(bsld.loc[trace].notna().to_numpy().sum()) if trace in bsld.index.get_level_values(0) else 0
            if cells < 2:
                return (f"No Figure 9 for {trace}: it sets runs side by side, and the trace has "
                        f"{'one run' if cells else 'no run'} (one queue order, one variant).")
        if figure == "tradeoff":
            policy, variant = self.reference
            others = [v for v in self.runs.loc[self.runs["trace"] == trace, "variant"] if v != variant]
            if not others:
                return (f"No gain-against-harm figure for {trace}: it sets each variant against {variant}, and "
                        f"only {variant} ran.")
        return None

    def pick(self, trace: str, policy: str, variant: str) -> RunData | None:
        """The run of the lowest seed of a trace x policy x variant."""
        candidates = [d for d in self.data if (d.files.trace, d.files.policy, d.files.variant) == (trace, policy, variant)]
        return min(candidates, key=lambda d: d.files.seed) if candidates else None

    def classifier_run(self, trace: str) -> RunData | None:
        """The run whose weekly classifier report Figure 4 shows: the compared variant under the
        reference policy if it has one, else the first run of the trace with a weekly report."""
        preferred = self.pick(trace, self.reference[0], self.compare)
        if preferred is not None and preferred.weeks is not None:
            return preferred
        with_weeks = [d for d in self.data if d.files.trace == trace and d.weeks is not None]
        with_weeks.sort(key=lambda d: (policy_key(d.files.policy), self.variants.index(d.files.variant), d.files.seed))
        return with_weeks[0] if with_weeks else None


# --- the report file ------------------------------------------------------------------------------

def write_report(roots: Iterable[str | Path] | str | Path, output: str | Path, *, tau: float | None = None,
                 reference_policy: str | None = None, reference_variant: str | None = None,
                 compare: str | None = None, plots: bool = True, workers: int = 1,
                 log: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Read every run under ``roots`` and write the report into ``output`` (see the module doc; the
    reference and compared names as :class:`Report` takes them).

    Returns ``{"report": path of REPORT.md, "html": path, "plots": [paths], "tables": [paths], "runs": n}``."""
    if isinstance(roots, (str, Path)):
        roots = [roots]
    files = discover_runs(roots, log=log)
    if not files:
        raise WorkloadError(f"no run found in {', '.join(map(str, roots))} (no NAME_jobs.csv with a "
                            "NAME_config.json, NAME_summary.json or NAME_schedule.csv beside it)")
    data = analyze_runs(files, tau=tau, workers=workers)
    for run in data:
        for warning in run.warnings:
            if log:
                log(f"warning: {warning}")
    report = Report(data, reference_policy, reference_variant, compare)
    output = Path(output)
    written_tables = []
    _write_csv(output / "runs.csv", report.runs, index=False)
    tables = {
        "mean_bsld": report.pivot("mean_bsld"),
        "reduction": report.reduction(),
        "classes": report.classes(),
        "classifier": report.classifier(),
        "predictions": report.predictions(),
        "costs": report.costs(),
        "tradeoff": report.tradeoff(),
    }
    for name, table in tables.items():
        path = output / "tables" / f"{name}.csv"
        _write_csv(path, table)
        written_tables.append(path)
    figures = _figures(report, output / "img") if plots else {}
    text = render_markdown(report, tables, figures, roots=[str(r) for r in roots], tau=tau)
    markdown_path = write_text(output / "REPORT.md", text)
    html_path = write_text(output / "REPORT.html", markdown_to_html(text, title="Scheduling report"))
    return {"report": markdown_path, "html": html_path, "plots": [p for ps in figures.values() for p in ps],
            "tables": written_tables, "runs": len(data)}


def _write_csv(path: Path, table: pd.DataFrame, index: bool = True) -> None:
    with atomic_open(path, newline="") as stream:
        table.to_csv(stream, index=index)


def _figures(report: Report, folder: Path) -> dict[str, list[Path]]:
    """Every figure, per trace: {figure name: [paths]}."""
    figures: dict[str, list[Path]] = {"fig6": [], "fig7": [], "fig8": [], "fig9": [], "fig4": [], "tradeoff": []}
    pair = report.plotted_variants
    for trace in report.traces:
        slug = re.sub(r"[^A-Za-z0-9._-]+", "_", trace)
        curves = {(p, v): d.cumulative for p in report.policies for v in pair
                  if (d := report.pick(trace, p, v)) is not None}
        monthly = {(p, v): d.monthly for p in report.policies for v in pair
                   if (d := report.pick(trace, p, v)) is not None}
        _add(figures["fig6"], figures_module.cumulative_bsld(curves, report.policies, pair, trace,
                                                    folder / f"fig6_cumulative_bsld_{slug}.png"))
        _add(figures["fig7"], figures_module.monthly_bsld(monthly, report.policies, pair, trace,
                                                 folder / f"fig7_monthly_bsld_{slug}.png"))
        classes = report.classes()
        if "mean_bsld_actual_small" in classes.columns:
            rows = classes.loc[trace].reset_index() if trace in classes.index.get_level_values(0) else pd.DataFrame()
            if not rows.empty:
                rows = rows.rename(columns={"mean_bsld_actual_small": "small", "mean_bsld_actual_large": "large"})
                rows = rows[rows["variant"].isin(report.variants)]
                _add(figures["fig8"], figures_module.class_bars(rows[["policy", "variant", "small", "large"]], report.variants,
                                                       trace, folder / f"fig8_classes_{slug}.png"))
        bsld = report.pivot("mean_bsld")
        if trace in bsld.index.get_level_values(0) and not report.why_not("fig9", trace):
            values = bsld.loc[trace]
            values.index = [scheduler_name(p) for p in values.index]
            _add(figures["fig9"], figures_module.grouped_bars(values, f"{trace}: mean bounded slowdown per variant",
                                                     "mean bsld", folder / f"fig9_variants_{slug}.png",
                                                     log=True, variants=report.variants))
        tradeoff = report.tradeoff()
        if ("reduction" in tradeoff and trace in tradeoff.index.get_level_values(0)
                and not report.why_not("tradeoff", trace)):
            _add(figures["tradeoff"], figures_module.tradeoff(tradeoff.loc[trace], report.variants, trace,
                                                             folder / f"tradeoff_{slug}.png"))
        run = report.classifier_run(trace)
        if run is not None:
            label = f"{scheduler_name(run.files.policy)} {run.files.variant}, seed {run.files.seed}"
            _add(figures["fig4"], figures_module.classifier_weeks(run.weeks, trace, label,
                                                         folder / f"fig4_classifier_weeks_{slug}.png"))
    return figures


def _add(paths: list[Path], path: Path | None) -> None:
    if path is not None:
        paths.append(path)
