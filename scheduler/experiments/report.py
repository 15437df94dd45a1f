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
- kills and wasted work, utilisation.

Figures, per trace: the cumulative bsld over time, base against the compared variant (Figure 6); the
monthly mean bsld (Figure 7); small- and large-job bars (Figure 8); every variant side by side
(Figure 9); the weekly accuracy, precision and recall of the classifier (Figure 4).
"""

from __future__ import annotations

import html
import math
import re
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

import markdown
import numpy as np
import pandas as pd

from scheduler.config import VARIANTS
from scheduler.errors import ConfigError, WorkloadError
from scheduler.experiments import plots as figures_module
from scheduler.experiments.collect import RunData, analyze_runs, discover_runs
from scheduler.outputs import atomic_open, write_text

POLICY_ORDER = ["fcfs", "wfp", "spf", "saf", "sqf", "lpf"]

#: Values of Zrigui et al. (JPDC 2022) that the report prints beside ours when a trace matches.
PAPER = {
    "reduction": {  # Table 7: reduction of mean bsld relative to EASY-FCFS, classification-idempotent
        ("KTH-SP2", "fcfs"): 0.50, ("KTH-SP2", "spf"): 0.59,
        ("SDSC-SP2", "fcfs"): 0.66, ("SDSC-SP2", "spf"): 0.75,
    },
    "classifier": {  # Tables 5 and 6: precision, recall, false-small rate
        "KTH-SP2": {"precision": 0.79, "recall": 0.90, "false_small_rate": 0.0403},
        "SDSC-SP2": {"precision": 0.89, "recall": 0.91, "false_small_rate": 0.0585},
    },
}


def _known(given: str | None, default: str, names: list[str], option: str, what: str) -> str:
    """``given`` if the runs have it (an error naming ``option`` otherwise), else ``default``."""
    if given is None:
        return default
    if given not in names:
        raise ConfigError(f"{option} {given}: no run has it; the runs' {what}: {', '.join(names)}")
    return given


def policy_key(policy: str) -> tuple:
    return (POLICY_ORDER.index(policy) if policy in POLICY_ORDER else len(POLICY_ORDER), policy)


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
            raise WorkloadError("no run found (no NAME_jobs.csv with a NAME_config.json or NAME_summary.json)")
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
                   "nb_jobs_actual_large", "mean_bsld_small", "mean_bsld_large", "nb_jobs_small", "nb_jobs_large"]
        present = [c for c in columns if c in self.runs.columns]
        return self._sort_variants(self.mean_over_seeds(present))

    def _sort_variants(self, table: pd.DataFrame) -> pd.DataFrame:
        index = sorted(table.index, key=lambda k: (self.traces.index(k[0]), policy_key(k[1]),
                                                    self.variants.index(k[2])))
        return table.reindex(index)

    def classifier(self) -> pd.DataFrame:
        """Tables 5 and 6: the classifier's quality over each run (runs with a classifier)."""
        columns = ["classifier_precision", "classifier_recall", "classifier_accuracy",
                   "classifier_false_small_rate", "classifier_false_large_rate", "classifier_n"]
        if "classifier_n" not in self.runs.columns:
            return pd.DataFrame(columns=columns)
        runs = self.runs[self.runs["classifier_n"].fillna(0) > 0]
        if runs.empty:
            return pd.DataFrame(columns=columns)
        grouped = runs.groupby(["trace", "policy", "variant"], sort=False)
        return self._sort_variants(grouped[columns].mean())

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
        """AWF, P2SF, utilisation, kills and wasted work per trace x policy x variant."""
        columns = ["awf", "p2sf", "mean_wait", "max_wait", "utilisation", "nb_kills", "wasted_core_seconds",
                   "wasted_fraction", "nb_jobs"]
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
                            "NAME_config.json or NAME_summary.json beside it)")
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
    # base, the compared variant (the paper's classification-idempotent), and our extension when it ran
    pair = list(dict.fromkeys(v for v in ("base", report.compare, "classification-probing") if v in report.variants))
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
        if trace in bsld.index.get_level_values(0):
            values = bsld.loc[trace]
            values.index = [f"EASY-{p.upper()}" for p in values.index]
            _add(figures["fig9"], figures_module.grouped_bars(values, f"{trace}: mean bounded slowdown per variant",
                                                     "mean bsld", folder / f"fig9_variants_{slug}.png",
                                                     log=True, variants=report.variants))
        tradeoff = report.tradeoff()
        if "reduction" in tradeoff and trace in tradeoff.index.get_level_values(0):
            _add(figures["tradeoff"], figures_module.tradeoff(tradeoff.loc[trace], report.variants, trace,
                                                             folder / f"tradeoff_{slug}.png"))
        run = report.classifier_run(trace)
        if run is not None:
            label = f"EASY-{run.files.policy.upper()} {run.files.variant}, seed {run.files.seed}"
            _add(figures["fig4"], figures_module.classifier_weeks(run.weeks, trace, label,
                                                         folder / f"fig4_classifier_weeks_{slug}.png"))
    return figures


def _add(paths: list[Path], path: Path | None) -> None:
    if path is not None:
        paths.append(path)


# --- Markdown ---------------------------------------------------------------------------------------

def _number(value: Any, digits: int = 2) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    if isinstance(value, (int, np.integer)):
        return f"{int(value):,}"
    value = float(value)
    if abs(value) >= 10000 or digits == 0:
        return f"{value:,.0f}"
    return f"{value:.{digits}f}"


def _count(value: Any) -> str:
    """A count (a mean over seeds may make it fractional)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    value = float(value)
    return f"{value:,.0f}" if value.is_integer() else f"{value:,.1f}"


def _percent(value: Any, digits: int = 0) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    return f"{100 * float(value):.{digits}f}%"


def markdown_table(header: Sequence[str], rows: Iterable[Sequence[str]], align: str | None = None) -> str:
    """A GitHub Markdown table; ``align`` is one letter per column (l, r)."""
    rows = [list(map(str, r)) for r in rows]
    align = align or "l" + "r" * (len(header) - 1)
    marks = ["---:" if a == "r" else "---" for a in align]
    lines = ["| " + " | ".join(header) + " |", "| " + " | ".join(marks) + " |"]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


def _label(key: tuple) -> list[str]:
    trace, policy, *rest = key
    return [trace, f"EASY-{policy.upper()}", *rest]


def render_markdown(report: Report, tables: dict[str, pd.DataFrame], figures: dict[str, list[Path]],
                    roots: Sequence[str], tau: float | None) -> str:
    """The whole REPORT.md."""
    out: list[str] = []
    runs = report.runs
    taus = sorted(set(runs["tau"])) if tau is None else [tau]
    ref_policy, ref_variant = report.reference
    out.append("# Scheduling report\n")
    out.append(f"{len(runs)} run(s) from {', '.join(f'`{r}`' for r in roots)}: {len(report.traces)} trace(s), "
               f"{len(report.policies)} polic(ies), {len(report.variants)} variant(s). Every metric is recomputed "
               f"from the runs' `_jobs.csv` files (`scheduler.metrics`, resubmitted attempts folded into their "
               f"original job), bounded slowdown with τ = {', '.join(f'{t:g}' for t in taus)} s. Values are means "
               f"over seeds where a grid has several.\n")
    overview = runs.groupby("trace", sort=False).agg(jobs=("nb_jobs", "max"), machines=("nb_machines", "max"),
                                                      runs=("path", "size"), origin=("origin", lambda s: ", ".join(sorted(set(s)))))
    out.append(markdown_table(["trace", "jobs", "machines", "runs", "from"],
                              [[t, _count(r.jobs), _count(r.machines), _count(r.runs), r.origin] for t, r in overview.iterrows()], "lrrrl"))
    out.append("")

    # Mean bsld
    bsld = tables["mean_bsld"]
    out.append("## Mean bounded slowdown\n")
    out.append(markdown_table(["trace", "policy", *bsld.columns],
                              [_label(k) + [_number(v) for v in row] for k, row in bsld.iterrows()], "ll" + "r" * len(bsld.columns)))
    out.append("")
    for path in figures.get("fig9", []):
        out.append(f"![Figure 9: variants]({path.parent.name}/{path.name})\n")

    # Reduction
    reduction = tables["reduction"]
    out.append(f"## Reduction of mean bsld relative to EASY-{ref_policy.upper()} {ref_variant} (Table 7)\n")
    out.append(f"`1 - bsld / bsld(EASY-{ref_policy.upper()} {ref_variant})` of the same trace; positive is better.")
    paper = PAPER["reduction"]
    has_paper = any((t, p) in paper for t, p in reduction.index)
    compare = report.compare if report.compare in reduction.columns else None
    header = ["trace", "policy", *reduction.columns]
    if has_paper and compare:
        header.append(f"paper, {compare}")
        out.append(f"The last column is Zrigui et al.'s Table 7 for {compare}, where we have it.")
    out.append("")
    rows = []
    for key, row in reduction.iterrows():
        cells = _label(key) + [_percent(v) for v in row]
        if has_paper and compare:
            cells.append(_percent(paper.get(key)) if key in paper else "–")
        rows.append(cells)
    out.append(markdown_table(header, rows, "ll" + "r" * (len(header) - 2)))
    out.append("")
    for path in figures.get("fig6", []):
        out.append(f"![Figure 6: cumulative bsld]({path.parent.name}/{path.name})\n")
    for path in figures.get("fig7", []):
        out.append(f"![Figure 7: monthly mean bsld]({path.parent.name}/{path.name})\n")

    # Classes
    classes = tables["classes"]
    out.append("## Small and large jobs (Figure 8)\n")
    divider = runs.groupby("trace", sort=False)["class_divider"].median()
    out.append("Actual classes: a job is small when its runtime is below the median runtime of the trace's jobs ("
               + ", ".join(f"{t}: {_number(v, 0)} s" for t, v in divider.items())
               + "), the same jobs in every run. Predicted classes: the `class=` metadata the scheduler set (runs "
               "with a classifier only; a job killed by the safeguard counts as predicted small).\n")
    rows = []
    for key, row in classes.iterrows():
        rows.append(_label(key) + [
            _number(row.get("mean_bsld_actual_small")), _number(row.get("mean_bsld_actual_large")),
            _number(row.get("mean_bsld_small")), _number(row.get("mean_bsld_large")),
            _count(row.get("nb_jobs_small"))])
    out.append(markdown_table(["trace", "policy", "variant", "bsld actual small", "bsld actual large",
                               "bsld predicted small", "bsld predicted large", "jobs predicted small"], rows, "lll" + "r" * 5))
    out.append("")
    for path in figures.get("fig8", []):
        out.append(f"![Figure 8: small and large jobs]({path.parent.name}/{path.name})\n")

    # Classifier
    quality = tables["classifier"]
    out.append("## Classifier quality (Tables 5 and 6)\n")
    if quality.empty:
        out.append("No run with a classifier.\n")
    else:
        out.append("Small is the positive class. Over every job classified while a divider was defined (after the "
                   "first week): the predicted class is the first `class=` of the job's attempts; the actual class "
                   "compares its runtime with the divider in force the week it was submitted. False-small: large jobs "
                   "predicted small, as a share of all jobs (false-large likewise).\n")
        rows = []
        for key, row in quality.iterrows():
            rows.append(_label(key) + [_percent(row["classifier_precision"], 1), _percent(row["classifier_recall"], 1),
                                       _percent(row["classifier_accuracy"], 1),
                                       _percent(row["classifier_false_small_rate"], 2),
                                       _percent(row["classifier_false_large_rate"], 2), _count(row["classifier_n"])])
        out.append(markdown_table(["trace", "policy", "variant", "precision", "recall", "accuracy", "false-small",
                                   "false-large", "jobs"], rows, "lll" + "r" * 6))
        out.append("")
        paper_rows = [[t, _percent(v["precision"]), _percent(v["recall"]), _percent(v["false_small_rate"], 2)]
                      for t, v in PAPER["classifier"].items() if t in report.traces]
        if paper_rows:
            out.append("The paper's values (Zrigui et al., Tables 5 and 6). Its Table 6 prints False Small as "
                       "FS/(FS+TS), which is 1 - precision and cannot give 4.03% beside Table 5's 79% precision: the "
                       "two tables do not come from one confusion matrix (docs/results.md).\n")
            out.append(markdown_table(["trace", "precision", "recall", "false-small"], paper_rows))
            out.append("")
        for path in figures.get("fig4", []):
            out.append(f"![Figure 4: weekly classifier quality]({path.parent.name}/{path.name})\n")
        for trace in report.traces:
            run = report.classifier_run(trace)
            if run is None or run.weeks is None:
                continue
            weeks = run.weeks
            weeks = weeks[weeks["n_known"] > 0] if "n_known" in weeks else weeks
            out.append(f'<details markdown="1"><summary>{trace}: per week '
                       f"(EASY-{run.files.policy.upper()} {run.files.variant}, seed {run.files.seed})</summary>\n")
            out.append(markdown_table(
                ["week", "divider (s)", "jobs", "predicted small", "accuracy", "precision", "recall", "false-small",
                 "false-large"],
                [[_count(r.week), _number(r.divider, 0), _count(r.n_known), _count(r.n_predicted_small),
                  _percent(r.accuracy, 1), _percent(r.precision, 1), _percent(r.recall, 1),
                  _percent(r.false_small_rate, 1), _percent(r.false_large_rate, 1)] for r in weeks.itertuples()],
                "r" * 9))
            out.append("\n</details>\n")

    # Predictions
    accuracy = tables["predictions"]
    if not accuracy.empty:
        out.append("## Runtime prediction accuracy\n")
        out.append("Over the terminated jobs (attempts) of runs with a runtime predictor. MAE, R² and under-predicted "
                   "(share of jobs whose prediction is below their runtime) judge the prediction at submission; RA "
                   "(accuracy min(P, R)/max(P, R), 1 is perfect) and AI (inaccuracy |P − R|/R, 0 is perfect) are "
                   "Talby et al.'s, time-weighted over each job's successive predictions; deadline misses: jobs still "
                   "running at their predicted end (each triggers a correction).\n")
        rows = [_label(k) + [_number(r["prediction_mae"], 0), _number(r["prediction_r2"]),
                             _percent(r["prediction_under"], 1), _number(r["prediction_ra"], 3),
                             _number(r["prediction_ai"]), _count(r["prediction_deadline_misses"]),
                             _count(r["prediction_nb_jobs"])] for k, r in accuracy.iterrows()]
        out.append(markdown_table(["trace", "policy", "variant", "MAE (s)", "R²", "under-predicted", "RA", "AI",
                                   "deadline misses", "jobs"], rows, "lll" + "r" * 7))
        out.append("")

    # Costs
    costs = tables["costs"]
    out.append("## Packing and fairness costs: AWF and P2SF\n")
    out.append("AWF: area-weighted average flow (s); P2SF: priority-weighted specific flow, α = 2 (s) — Goponenko "
               "et al., SBAC-PAD 2022. Lower is better.\n")
    rows = [_label(k) + [_number(r["awf"], 0), _number(r["p2sf"], 0), _number(r["mean_wait"], 0),
                         _number(r["max_wait"], 0), _number(r["utilisation"], 3)] for k, r in costs.iterrows()]
    out.append(markdown_table(["trace", "policy", "variant", "AWF", "P2SF", "mean wait", "max wait", "utilisation"],
                              rows, "lll" + "r" * 5))
    out.append("")
    out.append("## Kills and wasted work\n")
    out.append("Kills: attempts killed by the safeguard (small-classified jobs that outlived the divider, resubmitted "
               "as large). Wasted work: the processor-hours of the killed attempts, and their share of the useful "
               "work (processor-time of the final attempts).\n")
    killing = costs[costs["nb_kills"] > 0] if "nb_kills" in costs else costs.iloc[0:0]
    if killing.empty:
        out.append("No run killed a job.\n")
    else:
        rows = [_label(k) + [_count(r["nb_kills"]), _percent(r["nb_kills"] / r["nb_jobs"], 1),
                             _number(r["wasted_core_seconds"] / 3600.0, 0), _percent(r["wasted_fraction"], 2)]
                for k, r in killing.iterrows()]
        out.append(markdown_table(["trace", "policy", "variant", "kills", "of jobs", "wasted processor-hours",
                                   "of useful work"], rows, "lll" + "r" * 4))
        out.append("")
    tradeoff = tables["tradeoff"]
    if "large_vs_base" in tradeoff and tradeoff["wasted_fraction"].gt(0).any():
        out.append("## Gain against harm\n")
        out.append(f"Each variant's reduction of mean bsld (relative to EASY-{ref_policy.upper()} {ref_variant}) against "
                   "what it costs: the wasted work (share of the useful work), the actually-large jobs' mean bsld and "
                   "the longest wait, each against base under the same policy.\n")
        rows = [_label(k) + [_percent(r["reduction"]), _percent(r["wasted_fraction"], 2),
                             f"{r['large_vs_base']:+.0%}" if r["large_vs_base"] == r["large_vs_base"] else "–",
                             _number(r.get("max_wait_vs_base"), 2)] for k, r in tradeoff.iterrows()]
        out.append(markdown_table(["trace", "policy", "variant", "reduction", "wasted work", "large jobs vs base",
                                   "longest wait vs base"], rows, "lll" + "r" * 4))
        out.append("")
        for path in figures.get("tradeoff", []):
            out.append(f"![Gain against harm]({path.parent.name}/{path.name})\n")
    out.append("## Files\n")
    out.append("`runs.csv` holds every recomputed metric of every run; `tables/*.csv` the tables above, unrounded; "
               "`img/` the figures, each as a PNG and, for print, an SVG of the same name.\n")
    return "\n".join(out)


def markdown_to_html(text: str, title: str = "Report") -> str:
    """``text`` as a standalone HTML page, converted by Python-Markdown (tables, and Markdown inside
    ``<details markdown="1">`` blocks)."""
    body = markdown.markdown(text, extensions=["tables", "md_in_html"], output_format="html")
    style = ("body{font-family:sans-serif;max-width:70em;margin:2em auto;padding:0 1em}"
             "table{border-collapse:collapse;margin:1em 0;font-size:90%}td,th{border:1px solid #ccc;padding:2px 6px}"
             "th{background:#f3f3f3}img{max-width:100%}code{background:#f3f3f3}")
    return (f"<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>{html.escape(title)}</title>"
            f"<style>{style}</style></head><body>\n{body}\n</body></html>\n")
