"""The Markdown of ``report`` (``REPORT.md``) and its HTML page, from a
:class:`~batsim_classifier_scheduler.experiments.report_tables.Report` and its tables (see :mod:`batsim_classifier_scheduler.experiments.report`)."""

from __future__ import annotations

import html
import math
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Sequence

import markdown
import numpy as np
import pandas as pd

from batsim_classifier_scheduler.experiments.labels import scheduler_name
from batsim_classifier_scheduler.metrics import report_columns

if TYPE_CHECKING:
    from batsim_classifier_scheduler.experiments.report_tables import Report

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


def _counted(count: int, noun: str, plural: str | None = None) -> str:
    """``1 run``, ``3 runs``; ``1 policy``, ``2 policies``."""
    return f"{count:,} {noun if count == 1 else plural or noun + 's'}"


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
    return [trace, scheduler_name(policy), *rest]


def truncated(runs: pd.DataFrame) -> dict[str, int]:
    """The traces whose runs are of their first jobs only (a sweep's ``max_jobs``), with that number."""
    if "max_jobs" not in runs:
        return {}
    cut = runs.dropna(subset=["max_jobs"]).groupby("trace", sort=False)["max_jobs"].max()
    return {trace: int(count) for trace, count in cut.items()}


def _truncation_note(cut: dict[str, int]) -> str:
    return ("Truncated runs: " + "; ".join(f"{trace}, the first {count:,} jobs only" for trace, count in cut.items())
            + " (the sweep's `max_jobs`). The paper's figures are for whole traces: beside such runs they are no "
              "like-for-like comparison.")


def render_markdown(report: Report, tables: dict[str, pd.DataFrame], figures: dict[str, list[Path]],
                    roots: Sequence[str], tau: float | None) -> str:
    """The whole REPORT.md."""
    out: list[str] = []
    runs = report.runs
    taus = sorted(set(runs["tau"])) if tau is None else [tau]
    ref_policy, ref_variant = report.reference
    out.append("# Scheduling report\n")
    out.append(f"{_counted(len(runs), 'run')} from {', '.join(f'`{r}`' for r in roots)}: "
               f"{_counted(len(report.traces), 'trace')}, {_counted(len(report.policies), 'policy', 'policies')}, "
               f"{_counted(len(report.variants), 'variant')}. Every metric is recomputed "
               f"from the runs' `_jobs.csv` files (`batsim_classifier_scheduler.metrics`, resubmitted attempts folded into their "
               f"original job), bounded slowdown with τ = {', '.join(f'{t:g}' for t in taus)} s. Values are means "
               f"over seeds where a grid has several.\n")
    overview = runs.groupby("trace", sort=False).agg(jobs=("nb_jobs", "max"), machines=("nb_machines", "max"),
                                                      runs=("path", "size"), origin=("origin", lambda s: ", ".join(sorted(set(s)))))
    cut = truncated(runs)
    out.append(markdown_table(["trace", "jobs", "machines", "runs", "from"],
                              [[t, _count(r.jobs) + (f" (the trace's first {cut[t]:,})" if t in cut else ""), _count(r.machines),
                                _count(r.runs), r.origin] for t, r in overview.iterrows()], "lrrrl"))
    out.append("")
    if cut:
        out.append(_truncation_note(cut) + "\n")

    # Mean bsld
    bsld = tables["mean_bsld"]
    out.append("## Mean bounded slowdown\n")
    out.append(markdown_table(["trace", "policy", *bsld.columns],
                              [_label(k) + [_number(v) for v in row] for k, row in bsld.iterrows()], "ll" + "r" * len(bsld.columns)))
    out.append("")
    for path in figures.get("fig9", []):
        out.append(f"![Figure 9: variants]({path.parent.name}/{path.name})\n")
    if figures:
        out += [f"{note}\n" for note in filter(None, (report.why_not("fig9", t) for t in report.traces))]

    # Reduction
    reduction = tables["reduction"]
    out.append(f"## Reduction of mean bsld relative to {scheduler_name(ref_policy)} {ref_variant} (Table 7)\n")
    out.append(f"`1 - bsld / bsld({scheduler_name(ref_policy)} {ref_variant})` of the same trace; positive is better.")
    paper = PAPER["reduction"]
    has_paper = any((t, p) in paper for t, p in reduction.index)
    compare = report.compare if report.compare in reduction.columns else None
    header = ["trace", "policy", *reduction.columns]
    if has_paper and compare:
        header.append(f"paper, {compare}")
        out.append(f"The last column is Zrigui et al.'s Table 7 for {compare}, where we have it"
                   + (", for the whole trace: beside runs of its first jobs only, marked \"whole trace\", it is "
                      "no like-for-like comparison." if any(t in cut for t, _ in reduction.index) else "."))
    out.append("")
    rows = []
    for key, row in reduction.iterrows():
        cells = _label(key) + [_percent(v) for v in row]
        if has_paper and compare:
            cells.append(_percent(paper.get(key)) + (" (whole trace)" if key[0] in cut else "") if key in paper else "–")
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
               + "), the same jobs in every run. Predicted classes: the first `class=` metadata the scheduler set "
               "on a job's attempts (runs with a classifier only; a job killed by the safeguard counts by its first "
               "class). Jobs predicted small: classified small; the uncertain jobs (probing: run early on trial) "
               "are neither small nor large here and are counted in their own column.\n")
    rows = []
    for key, row in classes.iterrows():
        rows.append(_label(key) + [
            _number(row.get("mean_bsld_actual_small")), _number(row.get("mean_bsld_actual_large")),
            _number(row.get("mean_bsld_small")), _number(row.get("mean_bsld_large")),
            _count(row.get("nb_jobs_small")), _count(row.get("nb_jobs_uncertain"))])
    out.append(markdown_table(["trace", "policy", "variant", "bsld actual small", "bsld actual large",
                               "bsld predicted small", "bsld predicted large", "jobs predicted small",
                               "jobs uncertain"], rows, "lll" + "r" * 6))
    out.append("")
    for path in figures.get("fig8", []):
        out.append(f"![Figure 8: small and large jobs]({path.parent.name}/{path.name})\n")

    # Classifier
    quality = tables["classifier"]
    out.append("## Classifier quality (Tables 5 and 6)\n")
    if quality.empty:
        out.append("No run with a classifier.\n")
    else:
        out.append("Small is the positive class, and predicted small means classified *small*. Over every job "
                   "classified while a divider was defined (after the first week): the predicted class is the first "
                   "`class=` of the job's attempts; the actual class compares its runtime with the divider in force "
                   "the week it was submitted. False-small: large jobs classified small, as a share of all jobs "
                   "(false-large: small jobs not classified small). Uncertain jobs (probing: not small, yet not "
                   "called large with confidence; they run early on trial under the safeguard) count as not small "
                   "in every rate; the uncertain column gives their share of the jobs.\n")
        rows = []
        for key, row in quality.iterrows():
            rows.append(_label(key) + [_percent(row["classifier_precision"], 1), _percent(row["classifier_recall"], 1),
                                       _percent(row["classifier_accuracy"], 1),
                                       _percent(row["classifier_false_small_rate"], 2),
                                       _percent(row["classifier_false_large_rate"], 2),
                                       _percent(row.get("classifier_uncertain_rate"), 2), _count(row["classifier_n"])])
        out.append(markdown_table(["trace", "policy", "variant", "precision", "recall", "accuracy", "false-small",
                                   "false-large", "uncertain", "jobs"], rows, "lll" + "r" * 7))
        out.append("")
        paper_rows = [[t + (" (whole trace)" if t in cut else ""), _percent(v["precision"]), _percent(v["recall"]),
                       _percent(v["false_small_rate"], 2)] for t, v in PAPER["classifier"].items() if t in report.traces]
        if paper_rows and any(t in cut for t in PAPER["classifier"]):
            out.append(_truncation_note({t: n for t, n in cut.items() if t in PAPER["classifier"]}) + "\n")
        if paper_rows:
            out.append("The paper's values (Zrigui et al., Tables 5 and 6). Its Table 6 prints False Small as "
                       "FS/(FS+TS), which is 1 - precision and cannot give 4.03% beside Table 5's 79% precision: the "
                       "two tables do not come from one confusion matrix (docs/notebook/2026-12-05-results.md).\n")
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
                       f"({scheduler_name(run.files.policy)} {run.files.variant}, seed {run.files.seed})</summary>\n")
            out.append(markdown_table(
                ["week", "divider (s)", "jobs", "predicted small", "uncertain", "accuracy", "precision", "recall",
                 "false-small", "false-large"],
                [[_count(r.week), _number(r.divider, 0), _count(r.n_known), _count(r.n_predicted_small),
                  _count(getattr(r, "n_uncertain", None)), _percent(r.accuracy, 1), _percent(r.precision, 1),
                  _percent(r.recall, 1), _percent(r.false_small_rate, 1), _percent(r.false_large_rate, 1)]
                 for r in weeks.itertuples()],
                "r" * 10))
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
               "et al., SBAC-PAD 2022. Lower is better. Utilisation: the processor-time of useful work (the jobs' "
               "final attempts) over the machine's processors times the span from the first submission to the "
               "last end; the killed attempts are not in it, they are the wasted work below.\n")
    shown = report_columns()
    rows = [_label(k) + [_number(r.get(m.key), m.digits) for m in shown] for k, r in costs.iterrows()]
    out.append(markdown_table(["trace", "policy", "variant", *(m.report for m in shown)], rows,
                              "lll" + "r" * len(shown)))
    out.append("")
    out.append("## Kills and wasted work\n")
    out.append("Jobs killed: jobs the safeguard killed at least once (small-classified or uncertain jobs that "
               "outlived their bound, resubmitted), and their share of all jobs. Killed attempts: every attempt "
               "it killed (a job killed twice counts twice). Wasted work: the processor-hours of the killed "
               "attempts, and their share of the useful work (processor-time of the final attempts).\n")
    if "nb_kills" in costs:
        rows = [_label(k) + [_count(r.get("nb_jobs_killed")), _percent(r.get("share_jobs_killed"), 2),
                             _count(r["nb_kills"]), _number(r["wasted_core_seconds"] / 3600.0, 0),
                             _percent(r["wasted_fraction"], 2)]
                for k, r in costs.iterrows()]
        out.append(markdown_table(["trace", "policy", "variant", "jobs killed", "of all jobs", "killed attempts",
                                   "wasted processor-hours", "of useful work"], rows, "lll" + "r" * 5))
        out.append("")
    if figures:
        out += [f"{note}\n" for note in filter(None, (report.why_not("tradeoff", t) for t in report.traces))]
    tradeoff = tables["tradeoff"]
    if "large_vs_base" in tradeoff and tradeoff["wasted_fraction"].gt(0).any():
        out.append("## Gain against harm\n")
        out.append(f"Each variant's reduction of mean bsld (relative to {scheduler_name(ref_policy)} {ref_variant}) against "
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
