"""``report``: the tables and figures of the paper's evaluation, from any set of runs.

:func:`write_report` reads the runs under the given folders (:mod:`batsim_classifier_scheduler.experiments.collect`: sweep
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

import re
from pathlib import Path
from typing import Any, Callable, Iterable

import pandas as pd

from batsim_classifier_scheduler.errors import WorkloadError
from batsim_classifier_scheduler.experiments import plots as figures_module
from batsim_classifier_scheduler.experiments.collect import analyze_runs, discover_runs
from batsim_classifier_scheduler.experiments.labels import scheduler_name
from batsim_classifier_scheduler.experiments.report_markdown import markdown_to_html, render_markdown
from batsim_classifier_scheduler.experiments.report_tables import Report
from batsim_classifier_scheduler.util.output_files import atomic_open, write_text

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
