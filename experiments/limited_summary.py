"""Issue 48: a rule's runs summarised per trace and policy over the forest's seeds (``loto.py table`` first writes
OUT/loto_points.csv), against the bars of issue 48: every run kills at most 10% of the jobs, wastes at most 1.0% of
the useful work and, under FCFS, waits at most max(1.5x base's, 1.1x class-clairvoyant's) longest wait; the typical
run (the median over the seeds of each measure) falls short of class-clairvoyant's reduction by at most max(10% of
it, 3 points), its AWF is at most 1.10x class-clairvoyant's, its large jobs' mean bsld at most +10% against base
(FCFS) or class-clairvoyant's change plus 10 points (SPF).

    python experiments/limited_summary.py OUT/loto_points.csv RULE [RULE...]
"""

from __future__ import annotations

import sys

import pandas as pd

KEYS = ["rule", "trace", "policy"]


def every_run(run: pd.Series) -> list[str]:
    """The bars of every run a run misses."""
    missed = []
    if run["killed"] > 0.10:
        missed.append("killed")
    if run["waste"] > 0.010:
        missed.append("waste")
    if run["policy"] == "fcfs" and run["max_wait_vs_base"] > max(1.5, 1.1 * run["cc_max_wait_vs_base"]):
        missed.append("max wait")
    return missed


def typical(median: pd.Series) -> list[str]:
    """The bars of the typical run its medians miss."""
    missed = []
    if median["reduction"] < median["cc_reduction"] - max(0.1 * median["cc_reduction"], 0.03):
        missed.append("share")
    if median["awf_vs_cc"] > 1.10:
        missed.append("AWF")
    limit = 0.10 if median["policy"] == "fcfs" else median["cc_large_vs_base"] + 0.10
    if median["large_vs_base"] > limit:
        missed.append("large")
    return missed


def summary(points: pd.DataFrame) -> pd.DataFrame:
    rows = []
    for (rule, trace, policy), runs in points.groupby(KEYS, sort=False):
        median = runs.drop(columns=["bars_met", "all_met"]).median(numeric_only=True)
        median["policy"] = policy
        runs_missed = sorted({bar for _, run in runs.iterrows() for bar in every_run(run)})
        rows.append({"rule": rule, "trace": trace, "policy": policy, "seeds": len(runs),
                     "share": median["share_of_cc"],
                     "killed": f"{runs['killed'].min():.1%}–{runs['killed'].max():.1%}",
                     "wasted": f"{runs['waste'].min():.2%}–{runs['waste'].max():.2%}",
                     "max wait x base": f"{runs['max_wait_vs_base'].min():.2f}–{runs['max_wait_vs_base'].max():.2f}",
                     "AWF/CC": median["awf_vs_cc"], "large": median["large_vs_base"],
                     "CC large": median["cc_large_vs_base"],
                     "missed (every run)": " ".join(runs_missed) or "none",
                     "missed (typical)": " ".join(typical(median)) or "none"})
    return pd.DataFrame(rows)


def markdown(table: pd.DataFrame) -> str:
    lines = ["| rule | trace | policy | seeds | share of CC (median) | killed | wasted | longest wait × base | AWF / CC "
             "| large jobs vs base (CC) | bars missed, every run | bars missed, typical run |",
             "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- |"]
    for _, row in table.iterrows():
        lines.append(f"| {row['rule']} | {row['trace']} | {row['policy'].upper()} | {row['seeds']} | {row['share']:.3f} | "
                     f"{row['killed']} | {row['wasted']} | {row['max wait x base']} | {row['AWF/CC']:.2f} | "
                     f"{row['large']:+.0%} ({row['CC large']:+.0%}) | {row['missed (every run)']} | "
                     f"{row['missed (typical)']} |")
    return "\n".join(lines)


if __name__ == "__main__":
    points = pd.read_csv(sys.argv[1])
    points = points[points["rule"].isin(sys.argv[2:])] if len(sys.argv) > 2 else points
    print(markdown(summary(points)))
