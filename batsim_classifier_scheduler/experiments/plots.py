"""The report's figures (matplotlib, Agg backend), per trace and figure a PNG and an SVG beside it.

Each function takes the report's data and a target path, and returns the PNG's path (or None when the data
needed is missing). Made to be pasted into papers: PNGs at :data:`DPI` (and a vector SVG of the same figure),
axes labelled with their units, logarithmic axes only when the values span more than a factor 30, with
several labelled ticks, integer ticks for counts (months, weeks), and legends outside the plotting area, so
that they cover no data.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import pandas as pd

from batsim_classifier_scheduler.experiments.labels import scheduler_name

DPI = 150
#: Colours per variant, stable across figures.
COLOURS = {
    "base": "#4c72b0",
    "classification": "#dd8452",
    "classification-idempotent": "#55a868",
    "class-clairvoyant": "#c44e52",
    "runtimes-clairvoyant": "#8172b3",
    "classification-probing": "#ccb974",
    "classification-bounded": "#222222",
}
#: Colours of the other variants, in order of appearance: none of them is one of the named variants'.
_EXTRA = ["#937860", "#da8bc3", "#8c8c8c", "#64b5cd", "#e7298a", "#ff7f0e", "#9467bd", "#bcbd22", "#e377c2",
          "#1f1f7a", "#7f3f00", "#006d5b"]


def _pyplot():
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt


def colour(variant: str, variants: Sequence[str]) -> str:
    if variant in COLOURS:
        return COLOURS[variant]
    others = [v for v in variants if v not in COLOURS]
    return _EXTRA[others.index(variant) % len(_EXTRA)] if variant in others else "#333333"


def _scale(ax, values) -> None:
    """A log y axis when the values span more than a factor 30, else linear from zero."""
    values = np.asarray([v for v in np.ravel(values) if v == v and v > 0], dtype=float)
    if len(values) and values.max() / values.min() > 30:
        _log_axis(ax)
    else:
        ax.set_ylim(bottom=0)


def _log_axis(ax) -> None:
    """A log y axis with ticks at 1, 2 and 5 of each decade, labelled as plain numbers (10, 20, 50): over the
    factor 30 that :func:`_scale` asks, at least four of them are labelled."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    ax.set_yscale("log")
    ax.yaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    ax.yaxis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:g}"))
    ax.yaxis.set_minor_locator(LogLocator(base=10, subs=np.arange(2, 10) / 1.0))
    ax.yaxis.set_minor_formatter(NullFormatter())


def _integer_axis(ax, values) -> None:
    """An x axis of whole numbers (months, weeks), wide enough for one value to show as a point."""
    from matplotlib.ticker import MaxNLocator

    values = [v for v in np.ravel(values) if v == v]
    ax.xaxis.set_major_locator(MaxNLocator(integer=True, min_n_ticks=1))
    if values:
        ax.set_xlim(min(values) - 0.5, max(values) + 0.5)


def _grid(n: int) -> tuple[int, int]:
    cols = min(n, 2)
    return math.ceil(n / cols), cols


def _save(fig, path: Path) -> Path:
    """Write the figure as a PNG at :data:`DPI` and, beside it, as an SVG (each atomically); close it."""
    from batsim_classifier_scheduler.util.output_files import atomic_open

    try:
        for target, kind in ((path, "png"), (path.with_suffix(".svg"), "svg")):
            with atomic_open(target, "wb") as stream:
                fig.savefig(stream, format=kind, dpi=DPI, bbox_inches="tight", metadata=_METADATA[kind])
    finally:
        _pyplot().close(fig)
    return path


#: No creation date in the files: the same figure gives the same bytes.
_METADATA = {"png": {"Software": None}, "svg": {"Date": None}}


def _legend_below(fig, axes) -> None:
    """One legend for the figure, below its panels (outside every plotting area)."""
    handles, labels = {}, []
    for ax in np.ravel(axes):
        for handle, label in zip(*ax.get_legend_handles_labels()):
            if label not in handles:
                handles[label] = handle
                labels.append(label)
    if labels:
        fig.legend([handles[label] for label in labels], labels, loc="upper center", bbox_to_anchor=(0.5, 0.0),
                   ncol=min(len(labels), 3), fontsize=8, frameon=False)


def _policy_panels(n: int, height: float):
    """A grid of ``n`` panels, one per policy."""
    rows, cols = _grid(n)
    return _pyplot().subplots(rows, cols, figsize=(5.2 * cols, height * rows), squeeze=False)


def _finish_panels(fig, axes, n: int, title: str, path: Path) -> Path:
    """Hide the unused panels, title the figure, put the legend below it and save it."""
    for ax in list(axes.flat)[n:]:
        ax.set_visible(False)
    fig.suptitle(title, fontsize=11)
    fig.tight_layout()
    _legend_below(fig, list(axes.flat)[:n])
    return _save(fig, path)


def cumulative_bsld(curves: dict[tuple[str, str], pd.DataFrame], policies: Sequence[str], variants: Sequence[str],
                    trace: str, path: Path) -> Path | None:
    """Figure 6: the running sum of bsld over submission time, per policy, one line per variant.

    ``curves[(policy, variant)]`` has columns ``days`` and ``cumulative_bsld``."""
    from matplotlib.ticker import StrMethodFormatter

    policies = [p for p in policies if any((p, v) in curves for v in variants)]
    if not policies:
        return None
    fig, axes = _policy_panels(len(policies), height=3.2)
    for ax, policy in zip(axes.flat, policies):
        for variant in variants:
            curve = curves.get((policy, variant))
            if curve is not None and len(curve):
                ax.plot(curve["days"], curve["cumulative_bsld"], label=variant, color=colour(variant, variants),
                        linewidth=1.3)
        ax.set_title(scheduler_name(policy), fontsize=10)
        ax.set_xlabel("submission time (days)", fontsize=8)
        ax.set_ylabel("cumulative bsld", fontsize=8)
        ax.tick_params(labelsize=7)
        ax.yaxis.set_major_formatter(StrMethodFormatter("{x:,.0f}"))
        ax.grid(alpha=0.3)
    return _finish_panels(fig, axes, len(policies), f"{trace}: cumulative bounded slowdown", path)


def monthly_bsld(monthly: dict[tuple[str, str], pd.DataFrame], policies: Sequence[str], variants: Sequence[str],
                 trace: str, path: Path) -> Path | None:
    """Figure 7: mean bsld per 30-day period, per policy, one line per variant (log scale).

    A period the trace covers only in part (its last: the ``days`` column of ``monthly``) is drawn with
    hollow markers, and its tick says how many days it covers."""
    from matplotlib.ticker import FuncFormatter

    policies = [p for p in policies if any((p, v) in monthly for v in variants)]
    if not policies:
        return None
    fig, axes = _policy_panels(len(policies), height=3.0)
    for ax, policy in zip(axes.flat, policies):
        tables = [(variant, monthly.get((policy, variant))) for variant in variants]
        tables = [(variant, table) for variant, table in tables if table is not None and len(table)]
        partial = partial_months(table for _, table in tables)
        for variant, table in tables:
            ax.plot(table["month"] + 1, table["mean_bsld"], marker="o", markersize=3, label=variant,
                    color=colour(variant, variants), linewidth=1.2)
            part = table[(table["month"] + 1).isin(list(partial))]
            ax.plot(part["month"] + 1, part["mean_bsld"], linestyle="none", marker="o", markersize=5,
                    markerfacecolor="white", color=colour(variant, variants))
        _scale(ax, [table["mean_bsld"] for _, table in tables])
        _integer_axis(ax, [table["month"] + 1 for _, table in tables])
        ax.xaxis.set_major_formatter(FuncFormatter(
            lambda value, _: f"{value:g}" + (f"\n(only {_days(partial[value])})" if value in partial else "")))
        ax.set_title(scheduler_name(policy), fontsize=10)
        ax.set_xlabel("month (30-day periods from the first submission)", fontsize=8)
        ax.set_ylabel("mean bsld", fontsize=8)
        ax.tick_params(labelsize=7)
        ax.grid(alpha=0.3, which="major")
    return _finish_panels(fig, axes, len(policies), f"{trace}: monthly mean bounded slowdown", path)


def partial_months(tables) -> dict[float, float]:
    """{month number (from 1): days covered} of the 30-day periods the traces cover only in part."""
    partial: dict[float, float] = {}
    for table in tables:
        if "days" in table:
            for month, days in zip(table["month"] + 1, table["days"]):
                if days < 30 - 1e-9:
                    partial[float(month)] = min(float(days), partial.get(float(month), math.inf))
    return partial


def _days(days: float) -> str:
    return "under 1 day" if days < 1 else f"{days:.0f} day{'s' if round(days) != 1 else ''}"


def grouped_bars(values: pd.DataFrame, title: str, ylabel: str, path: Path, log: bool = False,
                 variants: Sequence[str] | None = None, xlabel: str = "scheduler (EASY and its queue order)") -> Path | None:
    """Bars: one group per row of ``values`` (index), one bar per column (e.g. variants)."""
    values = values.dropna(how="all")
    if values.empty:
        return None
    plt = _pyplot()
    columns = list(values.columns)
    variants = variants or columns
    n = len(columns)
    width = 0.8 / n
    x = np.arange(len(values))
    fig, ax = plt.subplots(figsize=(max(5.0, 1.1 * len(values) * max(1, n / 3)), 3.4))
    for i, column in enumerate(columns):
        heights = values[column].to_numpy(dtype=float)
        ax.bar(x + (i - (n - 1) / 2) * width, heights, width, label=str(column),
               color=colour(str(column), variants) if str(column) in variants else None)
    ax.set_xticks(x)
    ax.set_xticklabels([str(i) for i in values.index], fontsize=8)
    ax.set_xlabel(xlabel, fontsize=8)
    if log:
        _scale(ax, values.to_numpy())
    ax.set_ylabel(ylabel, fontsize=8)
    ax.tick_params(labelsize=7)
    ax.grid(alpha=0.3, axis="y", which="major")
    ax.set_title(title, fontsize=10)
    fig.tight_layout()
    _legend_below(fig, [ax])
    return _save(fig, path)


def class_bars(table: pd.DataFrame, variants: Sequence[str], trace: str, path: Path) -> Path | None:
    """Figure 8: mean bsld of small and of large jobs (actual classes), per policy, one bar per variant.

    ``table`` has columns policy, variant, small, large."""
    if table.empty:
        return None
    plt = _pyplot()
    policies = list(dict.fromkeys(table["policy"]))
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.4), squeeze=False)
    present = [v for v in variants if v in set(table["variant"])]
    width = 0.8 / max(len(present), 1)
    x = np.arange(len(policies))
    for ax, name in zip(axes.flat, ("small", "large")):
        for i, variant in enumerate(present):
            rows = table[table["variant"] == variant].set_index("policy").reindex(policies)
            ax.bar(x + (i - (len(present) - 1) / 2) * width, rows[name].to_numpy(dtype=float), width, label=variant,
                   color=colour(variant, variants))
        ax.set_xticks(x)
        ax.set_xticklabels([scheduler_name(p) for p in policies], fontsize=8)
        ax.set_xlabel("scheduler (EASY and its queue order)", fontsize=8)
        _scale(ax, table[name].to_numpy(dtype=float))
        ax.set_title(f"{name} jobs", fontsize=10)
        ax.set_ylabel("mean bsld", fontsize=8)
        ax.tick_params(labelsize=7)
        ax.grid(alpha=0.3, axis="y", which="major")
    fig.suptitle(f"{trace}: bounded slowdown of small and large jobs", fontsize=11)
    fig.tight_layout()
    _legend_below(fig, [axes.flat[0]])
    return _save(fig, path)


def classifier_weeks(weeks: pd.DataFrame, trace: str, label: str, path: Path) -> Path | None:
    """Figure 4: the classifier's weekly accuracy, precision and recall."""
    known = weeks[weeks.get("n_known", pd.Series(0, index=weeks.index)) > 0] if "n_known" in weeks else weeks
    if known.empty or "accuracy" not in known:
        return None
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(8, 3.0))
    for name, style in (("accuracy", "-"), ("precision", "--"), ("recall", ":")):
        ax.plot(known["week"], known[name], style, marker="o", markersize=2.5, linewidth=1.2, label=name)
    ax.set_ylim(0, 1.02)
    _integer_axis(ax, known["week"])
    ax.set_xlabel("week (7-day periods from the first submission)", fontsize=8)
    ax.set_ylabel("accuracy, precision, recall (0 to 1)", fontsize=8)
    ax.tick_params(labelsize=7)
    ax.grid(alpha=0.3)
    ax.set_title(f"{trace}: weekly classifier quality ({label})", fontsize=10)
    fig.tight_layout()
    _legend_below(fig, [ax])
    return _save(fig, path)


def tradeoff(table: pd.DataFrame, variants: Sequence[str], trace: str, path: Path) -> Path | None:
    """Gain against harm: each variant's reduction of mean bsld against its wasted work (left) and against
    its actually-large jobs' loss relative to base (right); one marker per queue order (``table``: rows
    policy x variant, columns ``reduction``, ``wasted_fraction``, ``large_vs_base``)."""
    table = table.dropna(subset=["reduction"])
    if table.empty or "large_vs_base" not in table:
        return None
    plt = _pyplot()
    markers = "osD^vP*X"
    policies = list(dict.fromkeys(table.index.get_level_values("policy")))
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.8), squeeze=False)
    panels = (("wasted_fraction", "wasted work (% of the useful work)"),
              ("large_vs_base", "actually-large jobs' mean bsld vs base, same order (%)"))
    for ax, (column, label) in zip(axes.flat, panels):
        for (policy, variant), row in table.iterrows():
            ax.scatter(100 * row[column], 100 * row["reduction"], color=colour(str(variant), variants),
                       marker=markers[policies.index(policy) % len(markers)], s=36, edgecolors="black",
                       linewidths=0.4, label=f"{variant}, {scheduler_name(str(policy))}")
        ax.set_xlabel(label, fontsize=8)
        ax.set_ylabel("reduction of mean bsld (%)", fontsize=8)
        ax.tick_params(labelsize=7)
        ax.grid(alpha=0.3)
    axes.flat[1].axvline(0, color="#888888", linewidth=0.6)
    fig.suptitle(f"{trace}: gain against harm (up and left is better)", fontsize=11)
    fig.tight_layout()
    _legend_below(fig, [axes.flat[0]])
    return _save(fig, path)


def kill_frontier(points: pd.DataFrame, trace: str, path: Path, highlight: str | None = None,
                  rules: Sequence[str] | None = None) -> Path | None:
    """Issue 32's frontier: each kill rule's reduction of mean bsld as a share of class-clairvoyant's against the
    share of jobs it killed at least once, one colour per rule and one marker per queue order (``points``: rows
    with ``rule``, ``policy``, ``share_of_cc`` and ``killed``, as ``experiments/kill_frontier.py`` writes them);
    the bars (90% of class-clairvoyant's reduction, 10% of the jobs killed) dashed, the ``highlight`` rule
    larger. ``rules`` fixes the colours (by position: the same in every trace's figure); default: as they come."""
    points = points.dropna(subset=["share_of_cc", "killed"])
    if points.empty:
        return None
    plt = _pyplot()
    from matplotlib.lines import Line2D

    markers = "osD^vP*X"
    policies = list(dict.fromkeys(points["policy"]))
    order = list(rules or dict.fromkeys(points["rule"]))
    rules = [rule for rule in order if rule in set(points["rule"])]
    twenty, forty = plt.get_cmap("tab20"), plt.get_cmap("tab20b")

    def palette(index: int) -> Any:  # forty colours
        return (twenty if index % 40 < 20 else forty)(index % 20)

    columns = 1 if len(rules) <= 24 else 2  # the legend beside the axes, its height within the figure's
    rows = -(-(len(rules) + len(policies)) // columns)
    fig, ax = plt.subplots(figsize=(7.5 + 2.4 * (columns - 1), max(4.6, 0.13 * rows + 0.8)))
    ax.axvline(10, color="#1b7837", linewidth=0.8, linestyle="--")
    ax.axhline(90, color="#1b7837", linewidth=0.8, linestyle="--")
    for row in points.itertuples():
        chosen = row.rule == highlight
        ax.scatter(100 * row.killed, 100 * row.share_of_cc, color=palette(order.index(row.rule)),
                   marker=markers[policies.index(row.policy) % len(markers)], s=110 if chosen else 40,
                   edgecolors="black", linewidths=1.4 if chosen else 0.4, zorder=4 if chosen else 3)
    handles = [Line2D([], [], linestyle="", marker="o", markersize=6, markeredgecolor="black",
                      markerfacecolor=palette(order.index(rule)),
                      markeredgewidth=1.4 if rule == highlight else 0.4, label=rule) for rule in rules]
    handles += [Line2D([], [], linestyle="", marker=markers[i % len(markers)], markersize=6, color="#888888",
                       label=scheduler_name(policy)) for i, policy in enumerate(policies)]
    ax.set_xlabel("jobs killed at least once (% of all jobs)", fontsize=8)
    ax.set_ylabel("reduction of mean bsld (% of class-clairvoyant's)", fontsize=8)
    ax.set_xlim(left=0)
    ax.tick_params(labelsize=7)
    ax.grid(alpha=0.3)
    ax.set_title(f"{trace}: gain against kills (the bars: up and left of the dashed lines)", fontsize=10)
    ax.legend(handles=handles, fontsize=6.5, loc="center left", bbox_to_anchor=(1.01, 0.5), frameon=False,
              ncol=columns)
    fig.tight_layout()
    return _save(fig, path)
