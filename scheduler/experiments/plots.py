"""The report's figures (matplotlib, Agg backend), one PNG per trace and figure.

Each function takes the report's data and a target path, and returns the path written (or None when
the data needed is missing). Figures are kept small (about 100 dpi) so each PNG stays well under 200 KB.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Sequence

import numpy as np
import pandas as pd

DPI = 90
#: Colours per variant, stable across figures.
COLOURS = {
    "base": "#4c72b0",
    "classification": "#dd8452",
    "classification-idempotent": "#55a868",
    "class-clairvoyant": "#c44e52",
    "runtimes-clairvoyant": "#8172b3",
    "classification-probing": "#ccb974",
}
_EXTRA = ["#937860", "#da8bc3", "#8c8c8c", "#64b5cd"]


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
    """A log y axis labelled with plain numbers (10, 20, 40 rather than 4 x 10^1)."""
    from matplotlib.ticker import FuncFormatter

    def minor(value: float, _pos) -> str:  # label 2 and 5 of each decade
        mantissa = value / 10 ** math.floor(math.log10(value)) if value > 0 else 0
        return f"{value:g}" if round(mantissa, 6) in (2.0, 5.0) else ""

    ax.set_yscale("log")
    ax.yaxis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:g}"))
    ax.yaxis.set_minor_formatter(FuncFormatter(minor))


def _grid(n: int) -> tuple[int, int]:
    cols = min(n, 2)
    return math.ceil(n / cols), cols


def _save(fig, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=DPI, bbox_inches="tight")
    _pyplot().close(fig)
    return path


def _policy_panels(n: int, height: float):
    """A grid of ``n`` panels, one per policy."""
    rows, cols = _grid(n)
    return _pyplot().subplots(rows, cols, figsize=(5.2 * cols, height * rows), squeeze=False)


def _finish_panels(fig, axes, n: int, title: str, path: Path) -> Path:
    """Hide the unused panels, title the figure and save it."""
    for ax in list(axes.flat)[n:]:
        ax.set_visible(False)
    fig.suptitle(title, fontsize=11)
    fig.tight_layout()
    return _save(fig, path)


def cumulative_bsld(curves: dict[tuple[str, str], pd.DataFrame], policies: Sequence[str], variants: Sequence[str],
                    trace: str, path: Path) -> Path | None:
    """Figure 6: the running sum of bsld over submission time, per policy, one line per variant.

    ``curves[(policy, variant)]`` has columns ``days`` and ``cumulative_bsld``."""
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
        ax.set_title(f"EASY-{policy.upper()}", fontsize=10)
        ax.set_xlabel("submission time (days)", fontsize=8)
        ax.set_ylabel("cumulative bsld", fontsize=8)
        ax.tick_params(labelsize=7)
        ax.ticklabel_format(axis="y", style="sci", scilimits=(0, 3))
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    return _finish_panels(fig, axes, len(policies), f"{trace}: cumulative bounded slowdown", path)


def monthly_bsld(monthly: dict[tuple[str, str], pd.DataFrame], policies: Sequence[str], variants: Sequence[str],
                 trace: str, path: Path) -> Path | None:
    """Figure 7: mean bsld per 30-day period, per policy, one line per variant (log scale)."""
    policies = [p for p in policies if any((p, v) in monthly for v in variants)]
    if not policies:
        return None
    fig, axes = _policy_panels(len(policies), height=3.0)
    for ax, policy in zip(axes.flat, policies):
        for variant in variants:
            table = monthly.get((policy, variant))
            if table is not None and len(table):
                ax.plot(table["month"], table["mean_bsld"], marker="o", markersize=3, label=variant,
                        color=colour(variant, variants), linewidth=1.2)
        _log_axis(ax)
        ax.set_title(f"EASY-{policy.upper()}", fontsize=10)
        ax.set_xlabel("month (30-day periods from the first submission)", fontsize=8)
        ax.set_ylabel("mean bsld", fontsize=8)
        ax.tick_params(labelsize=7)
        ax.grid(alpha=0.3, which="both")
        ax.legend(fontsize=7)
    return _finish_panels(fig, axes, len(policies), f"{trace}: monthly mean bounded slowdown", path)


def grouped_bars(values: pd.DataFrame, title: str, ylabel: str, path: Path, log: bool = False,
                 variants: Sequence[str] | None = None) -> Path | None:
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
    if log:
        _scale(ax, values.to_numpy())
    ax.set_ylabel(ylabel, fontsize=8)
    ax.tick_params(labelsize=7)
    ax.grid(alpha=0.3, axis="y", which="both")
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=7, ncol=min(n, 3))
    fig.tight_layout()
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
        ax.set_xticklabels([f"EASY-{p.upper()}" for p in policies], fontsize=8)
        _scale(ax, table[name].to_numpy(dtype=float))
        ax.set_title(f"{name} jobs", fontsize=10)
        ax.set_ylabel("mean bsld", fontsize=8)
        ax.tick_params(labelsize=7)
        ax.grid(alpha=0.3, axis="y", which="both")
    axes.flat[0].legend(fontsize=7)
    fig.suptitle(f"{trace}: bounded slowdown of small and large jobs", fontsize=11)
    fig.tight_layout()
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
    ax.set_xlabel("week", fontsize=8)
    ax.tick_params(labelsize=7)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, loc="lower right")
    ax.set_title(f"{trace}: weekly classifier quality ({label})", fontsize=10)
    fig.tight_layout()
    return _save(fig, path)
