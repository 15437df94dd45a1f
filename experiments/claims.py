"""The tables of docs/results.md, generated from the data files beside it (docs/data/*.csv).

    python experiments/claims.py            # rewrite every generated table of docs/results.md
    python experiments/claims.py --check    # exit 1 if one is out of date (a test runs this)

A generated table sits between ``<!-- table: KIND RULE -->`` and ``<!-- end -->`` in docs/results.md. KIND is
``typical`` (per trace and policy, the median over the forest's seeds of each measure: gain is judged on it) or
``every-run`` (per trace and policy, the range over the seeds of each harm: harm is judged on every run), RULE a rule
of ``docs/data/loto_points.csv``, ``limited_points.csv`` or ``guaranteed_points.csv`` (``experiments/loto.py`` made
them); or ``reproduction`` (the paper's Table 7 beside ours, from ``docs/data/reproduction.csv``), RULE the paper's
variant.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "docs" / "results.md"
#: The per-run data files (``experiments/loto.py``'s format), read as one.
POINTS = [ROOT / "docs" / "data" / name for name in ("loto_points.csv", "limited_points.csv", "guaranteed_points.csv")]
REPRODUCTION = ROOT / "docs" / "data" / "reproduction.csv"
TRACES = ("KTH-SP2", "SDSC-SP2", "HPC2N", "LANL-CM5", "SDSC-DS", "RICC", "CEA-Curie")
BLOCK = re.compile(r"(<!-- table: (\S+) (\S+) -->\n)(.*?)(<!-- end -->)", re.S)


def signed(value: float) -> str:
    """A change in whole percent, signed ("+3%", "−10%", "0%")."""
    text = f"{value:+.0%}"
    return "0%" if text in ("+0%", "-0%") else text.replace("-", "−")


def runs(points: pd.DataFrame, rule: str) -> pd.DataFrame:
    """The runs of ``rule``, in the traces' order."""
    chosen = points[points["rule"] == rule].copy()
    if chosen.empty:
        raise SystemExit(f"docs/data: no run of rule {rule!r}")
    chosen["order"] = chosen["trace"].map({trace: i for i, trace in enumerate(TRACES)})
    return chosen.sort_values(["order", "policy", "seed"])


def typical(points: pd.DataFrame, rule: str) -> list[str]:
    """Per trace and policy: the median over the seeds of each measure, and the bars that median misses."""
    lines = ["| trace | policy | seeds | share of CC's reduction | AWF vs CC | large jobs vs base (CC) |",
             "| --- | --- | ---: | ---: | ---: | ---: |"]
    for (trace, policy), group in runs(points, rule).groupby(["order", "policy"], sort=False):
        median = group.median(numeric_only=True)
        lines.append(f"| {group['trace'].iloc[0]} | {policy.upper()} | {len(group)} | {median['share_of_cc']:.3f} | "
                     f"{median['awf_vs_cc']:.2f}× | {signed(median['large_vs_base'])} "
                     f"({signed(median['cc_large_vs_base'])}) |")
    return lines


def every_run(points: pd.DataFrame, rule: str) -> list[str]:
    """Per trace and policy: the range over the seeds of the jobs killed, the work wasted and the longest wait."""
    def span(values: pd.Series, form: str) -> str:
        low, high = values.min(), values.max()
        return format(low, form) if f"{low:{form}}" == f"{high:{form}}" else f"{low:{form}}–{high:{form}}"

    lines = ["| trace | policy | seeds | jobs killed | work wasted | longest wait vs base (CC's) |",
             "| --- | --- | ---: | ---: | ---: | ---: |"]
    for (trace, policy), group in runs(points, rule).groupby(["order", "policy"], sort=False):
        lines.append(f"| {group['trace'].iloc[0]} | {policy.upper()} | {len(group)} | {span(group['killed'], '.1%')} | "
                     f"{span(group['waste'], '.2%')} | {span(group['max_wait_vs_base'], '.2f')}× "
                     f"({group['cc_max_wait_vs_base'].iloc[0]:.2f}×) |")
    return lines


def reproduction(points: pd.DataFrame, rule: str) -> list[str]:
    """The paper's Table 7 beside ours (``rule``: the variant whose reduction the paper reports): the reduction of
    the mean bsld against EASY-FCFS base on the same trace."""
    table = pd.read_csv(REPRODUCTION)
    lines = ["| trace | policy | base | classification-idempotent (paper) | class-clairvoyant |",
             "| --- | --- | ---: | ---: | ---: |"]
    for (trace, policy), group in table.groupby(["trace", "policy"], sort=False):
        bsld = group.set_index("variant")["mean_bsld"]
        fcfs = table[(table["trace"] == trace) & (table["policy"] == "fcfs") & (table["variant"] == "base")]
        reduction = 1 - bsld / fcfs["mean_bsld"].iloc[0]
        paper = group.set_index("variant")["paper_reduction"][rule]
        lines.append(f"| {trace} | EASY-{policy.upper()} | {reduction['base']:.0%} | {reduction[rule]:.0%} "
                     f"({paper:.0%}) | {reduction['class-clairvoyant']:.0%} |")
    return lines


KINDS = {"typical": typical, "every-run": every_run, "reproduction": reproduction}


def render(text: str, points: pd.DataFrame) -> str:
    """``text`` with each generated table made anew from ``points``."""
    def table(match: re.Match) -> str:
        kind, rule = match.group(2), match.group(3)
        if kind not in KINDS:
            raise SystemExit(f"{RESULTS.name}: unknown table kind {kind!r}; known: {', '.join(KINDS)}")
        return match.group(1) + "\n".join(KINDS[kind](points, rule)) + "\n" + match.group(5)

    return BLOCK.sub(table, text)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if a generated table is out of date")
    options = parser.parse_args(argv)
    text = RESULTS.read_text()
    fresh = render(text, pd.concat([pd.read_csv(path) for path in POINTS], ignore_index=True))
    if options.check:
        if fresh != text:
            print(f"{RESULTS}: a generated table is out of date: python experiments/claims.py", file=sys.stderr)
            return 1
        return 0
    RESULTS.write_text(fresh)
    return 0


if __name__ == "__main__":
    sys.exit(main())
