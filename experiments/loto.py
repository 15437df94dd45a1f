"""Issue 41, "the promise holds where it was not tuned": each rule on five archive traces (KTH-SP2, SDSC-SP2, HPC2N,
LANL-CM5, SDSC-DS) under EASY-FCFS and EASY-SPF, for the forest's seeds, measured against the bars of issue 41 (those
of issue 32, ``kill_frontier.compare``), and the setting chosen by leave-one-trace-out.

    python experiments/loto.py run RULE [RULE...] -o OUT [--seeds 0,1] [--traces ...] [-j 2]
    python experiments/loto.py table -o OUT [RULE...]      # OUT/loto_points.csv, the bars per run, the LOTO table
    python experiments/loto.py markdown -o OUT [RULE...]   # the same as docs/results.md's tables

Runs go to OUT/<rule>/s<seed>/<trace>_<policy>_jobs.csv, base and class-clairvoyant to OUT/ref/ (they do not read
the forest's seed: run once), at most ``-j`` ``simulate`` processes at a time (under ``nice``), reused when present.
Leave-one-trace-out: for each trace T, the rule chosen on the four others with seed 0 (the most runs meeting every
bar, then the highest least share of class-clairvoyant's reduction; a candidate was run on all five) is reported on
T, with every seed measured there; and the same on the typical runs (``seed_medians``: per rule run with seeds 0-4,
the median over the seeds of each measure; ``limited_summary.py --loto`` judges harm on every run instead). RICC and
CEA-Curie (``--traces RICC,CEA-Curie --policies fcfs``) are reported, never chosen on: ``table`` prints their runs'
bars, the tables leave them out.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "experiments"))

import pandas as pd  # noqa: E402

from kill_frontier import REFERENCES, WORKLOADS, bars_met, compare, measures  # noqa: E402

#: trace -> (SWF file, the machine's options, processors). SDSC-DS's 1,664 (its header's ``MaxProcs: 1664 (72, 1368,
#: 224)``, which the SWF reader now reads too) and LANL-CM5's are given, as they were for every run made.
TRACES = {"KTH-SP2": ("KTH-SP2-1996-2.1-cln.swf.gz", ["--platform", "platforms/kth_sp2.xml"], 100),
          "SDSC-SP2": ("SDSC-SP2-1998-4.2-cln.swf.gz", ["--platform", "platforms/sdsc_sp2.xml"], 128),
          "HPC2N": ("HPC2N-2002-2.2-cln.swf.gz", ["--platform", "platforms/hpc2n.xml"], 240),
          "LANL-CM5": ("LANL-CM5-1994-4.1-cln.swf.gz", ["--nb-res", "1024"], 1024),
          "SDSC-DS": ("SDSC-DS-2004-2.1-cln.swf.gz", ["--nb-res", "1664"], 1664)}
#: The two largest traces: the chosen setting is reported on them (FCFS), never chosen on them (``--traces``).
LARGE_TRACES = {"RICC": ("RICC-2010-2.swf.gz", ["--nb-res", "8192"], 8192),
                "CEA-Curie": ("CEA-Curie-2011-2.1-cln.swf.gz", ["--nb-res", "93312"], 93312)}
#: Every trace a run may name.
ALL_TRACES = {**TRACES, **LARGE_TRACES}
POLICIES = ("fcfs", "spf")
TOLERANT = ["--variant", f"{ROOT / 'experiments' / 'presets' / 'variants.json'}:classification-tolerant"]
#: Every rule tried, by name: its ``simulate`` options (docs/results.md, "The promise where it was not tuned").
OVERDUE = [*TOLERANT, "--promote-overdue", "killed"]
OVERDUE_QUEUE = [*TOLERANT, "--promote-overdue", "queue", "--promote-after", "0"]
GUARDED = [*TOLERANT, "--promote-overdue", "killed-one"]
ORDERED = ["--variant", "classification-ordered"]
#: classification-limited (issue 48, a preset): ordered with the site's limits kept by construction.
LIMITED = ["--variant", f"{ROOT / 'experiments' / 'presets' / 'variants.json'}:classification-limited"]
#: classification-guaranteed: limited with the waits of Q's jobs bounded, one lane per user.
GUARANTEED = ["--variant", "classification-guaranteed"]
#: A bound on the killed jobs' waits tried with it (measured worse): a retry is overdue once it has waited the longest
#: The limits' first setting: trials granted first come, first served, never later (measured first, worse on LANL-CM5).
ARRIVAL = ["--limit-order", "arrival", "--readmit", "none"]
#: A forest of 48 trees (ours has 12): the forest's seed moves fewer answers.
FOREST48 = ["--estimator-options", '{"n_estimators": 48}']



#: The rules that run at this commit. Those needing options that have left the surface (trial gates, budgets, sparing
#: within the longest wait, uncertain jobs in Q, siblings, overdue jobs behind Q_small) ran at commit 71de034, the
#: retries' wait bound beside the limits (--overdue-bound, --overdue-after) at e11e647, the lanes for the retries
#: only (--promote-overdue killed-user) and over every first attempt (queue-user-all) at 72edce3, and the retries ahead
#: of Q's first attempts (--retry-place ahead, ahead-oldest) and trials granted at their start (--grant-at start) on
#: patches of 442f880 and 7e3aaac, W counting a moved job's wait but its lane's hold (alone and with every waiting job
#: watched), the moves taking older waiting jobs along (all of them, the first only) and the head slack held within the
#: bound (alone, and with the 0.6 slack) on patches of 579ad7c, none of them kept: their runs stay in
#: docs/data/loto_points.csv, limited_points.csv and guaranteed_points.csv, and the notebooks say what they measured.
RULES: dict[str, list[str]] = {
    "tolerant": TOLERANT,
    "overdue": OVERDUE,
    "overdue-one": GUARDED,
    "overdue-queue": OVERDUE_QUEUE,
    "overdue-planned": [*TOLERANT, "--promote-overdue", "killed-planned"],
    "no-head-slack": [*TOLERANT, "--head-slack", "0"],
    "promote-ahead": [*TOLERANT, "--promote-scope", "ahead"],
    "promote-head": ORDERED,
    "promote-ahead-one": [*TOLERANT, "--promote-scope", "ahead", "--promote-overdue", "killed-one"],
    "forest48": [*TOLERANT, *FOREST48],
    "ordered48": [*ORDERED, *FOREST48],
    # the limits kept by construction: whom scarce trials go to, and whether a refused job gets one later
    "limited": LIMITED,
    "limited-arrival": [*LIMITED, *ARRIVAL],
    "limited-p-small": [*LIMITED, "--limit-order", "p-small", "--readmit", "none"],
    "limited-value": [*LIMITED, "--readmit", "none"],
    "limited-value-readmit": LIMITED,
    "limited-overdue-one": [*LIMITED, *ARRIVAL, "--promote-overdue", "killed-one"],
    # classification-guaranteed, and each of ordered's four constants moved (leave-one-trace-out over them, seed 0)
    "guaranteed": GUARANTEED,
    "guaranteed-promote-never": [*GUARANTEED, "--promote-after", "0", "--promote-scope", "job"],
    "guaranteed-slack-0": [*GUARANTEED, "--head-slack", "0"],
    "guaranteed-trial-150": [*GUARANTEED, "--probe-limit", "150"],
    "guaranteed-trial-600": [*GUARANTEED, "--probe-limit", "600"],
    "guaranteed-band-0.01": [*GUARANTEED, "--probe-threshold", "0.01"],
    "guaranteed-band-0.05": [*GUARANTEED, "--probe-threshold", "0.05"],
    "guaranteed-slack-0.15": [*GUARANTEED, "--head-slack", "0.15"],
    "guaranteed-slack-0.6": [*GUARANTEED, "--head-slack", "0.6"],
    "guaranteed-promote-3.5": [*GUARANTEED, "--promote-after", "3.5"],
    "guaranteed-promote-14": [*GUARANTEED, "--promote-after", "14"],
    # a move overtakes no older job ahead of it (CEA-Curie's longest wait under its bar, two pairs' gain lost)
    "guaranteed-no-overtaking-ahead": [*GUARANTEED, "--promote-overdue", "queue-user-ahead"],
    # each guarantee lifted alone (a limit of 1 keeps none): what each costs where guaranteed misses a bar
    "guaranteed-no-kill-limit": [*GUARANTEED, "--kill-limit", "1"],
    "guaranteed-no-waste-limit": [*GUARANTEED, "--waste-limit", "1"],
    "guaranteed-no-bound": [*GUARANTEED, "--promote-overdue", "none"],
}


def run_path(out: Path, rule: str, seed: int, trace: str, policy: str) -> Path:
    return out / rule / f"s{seed}" / f"{trace}_{policy}_jobs.csv"


def ref_path(out: Path, variant: str, trace: str, policy: str) -> Path:
    return out / "ref" / f"{trace}_{policy}_{variant}_jobs.csv"


def simulate(jobs: Path, trace: str, policy: str, options: list[str]) -> Path:
    """``jobs`` (a ``_jobs.csv`` path), simulated unless its run is whole (its summary, written last, is there)."""
    if jobs.with_name(jobs.name.replace("_jobs.csv", "_summary.json")).exists():
        return jobs
    swf, machine, _ = ALL_TRACES[trace]
    jobs.parent.mkdir(parents=True, exist_ok=True)
    prefix = jobs.parent / jobs.name.removesuffix("_jobs.csv")
    command = ["nice", "-n", "10", sys.executable, "-m", "batsim_classifier_scheduler", "simulate", str(WORKLOADS / swf), *machine,
               "--policy", policy, "-e", str(prefix), "--no-progress", *options]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
    if done.returncode:
        raise RuntimeError(f"{' '.join(command)}\n{done.stderr[-2000:]}")
    print(f"simulated {prefix}", flush=True)
    return jobs


def row(out: Path, rule: str, seed: int, trace: str, policy: str) -> dict:
    """One run's measures against the references, and its bars (``kill_frontier.compare``)."""
    nb = ALL_TRACES[trace][2]
    ref = {(p, v): measures(ref_path(out, v, trace, p), nb) for p in {"fcfs", policy} for v in REFERENCES}
    run = measures(run_path(out, rule, seed, trace, policy), nb)
    result = compare(rule, trace, policy, run, ref["fcfs", "base"], ref[policy, "base"],
                     ref[policy, "class-clairvoyant"])
    return {**result, "seed": seed, "all_met": "-" not in result["bars_met"]}


def choose(points: pd.DataFrame, traces: list[str]) -> str | None:
    """The rule that does best on ``traces``: the most runs meeting every bar, then the highest least share."""
    on = points[points["trace"].isin(traces)]
    complete = on.groupby("rule")["trace"].nunique() == len(traces)
    on = on[on["rule"].isin(complete[complete].index)]
    if on.empty:
        return None
    score = on.groupby("rule").agg(met=("all_met", "mean"), worst=("share_of_cc", "min"))
    return score.sort_values(["met", "worst"], ascending=False).index[0]


def loto(points: pd.DataFrame, seed: int = 0) -> pd.DataFrame:
    """Leave-one-trace-out: per left-out trace, the rule chosen on the others with ``seed`` (the seed every rule
    was explored with), and its runs on the trace left out, every seed measured."""
    rows = []
    points = points[points["trace"].isin(TRACES)]
    traces = list(dict.fromkeys(points["trace"]))
    explored = points[points["seed"] == seed]
    for left_out in traces:
        ran_here = set(explored[explored["trace"] == left_out]["rule"])
        chosen = choose(explored[explored["rule"].isin(ran_here)], [t for t in traces if t != left_out])
        if chosen is None:
            continue
        for _, run in points[(points["rule"] == chosen) & (points["trace"] == left_out)].iterrows():
            rows.append({"left_out": left_out, "chosen": chosen, "policy": run["policy"], "seed": run["seed"],
                         "share_of_cc": run["share_of_cc"], "killed": run["killed"], "waste": run["waste"],
                         "awf_vs_cc": run["awf_vs_cc"], "large_vs_base": run["large_vs_base"],
                         "max_wait_vs_base": run["max_wait_vs_base"], "bars_met": run["bars_met"]})
    return pd.DataFrame(rows)


def seed_medians(points: pd.DataFrame, seeds: int = 5) -> pd.DataFrame:
    """Per rule, trace and policy run with ``seeds`` seeds: the median over the seeds of each measure (the typical
    run), and the bars that median meets."""
    points = points[points["trace"].isin(TRACES)]
    keys = ["rule", "trace", "policy"]
    counts = points.groupby(keys)["seed"].nunique()
    complete = points.set_index(keys).loc[counts[counts == seeds].index]
    if complete.empty:
        return pd.DataFrame()
    medians = complete.drop(columns=["seed", "all_met", "bars_met"]).groupby(level=keys, sort=False).median()
    medians = medians.reset_index()
    medians["bars_met"] = [bars_met(row, row["policy"]) for row in medians.to_dict("records")]
    medians["all_met"] = ~medians["bars_met"].str.contains("-", regex=False)
    return medians


def loto_medians(medians: pd.DataFrame) -> pd.DataFrame:
    """Leave-one-trace-out on the typical runs: per left-out trace, the rule whose seed medians do best on the other
    four (``choose``), and its seed medians on the trace left out."""
    traces = list(dict.fromkeys(medians["trace"]))
    rows = []
    for left_out in traces:
        chosen = choose(medians, [t for t in traces if t != left_out])
        if chosen is not None:
            rows += medians[(medians["rule"] == chosen) & (medians["trace"] == left_out)].to_dict("records")
    return pd.DataFrame([{**row, "left_out": row["trace"], "chosen": row["rule"]} for row in rows])


#: The bars' names, in ``bars_met``'s order (SPF has no longest-wait bar).
BAR_NAMES = ["share", "killed", "waste", "AWF", "large", "max wait"]


def missed_bars(run: pd.Series) -> list[str]:
    """The names of the bars a run misses."""
    return [name for name, ok in zip(BAR_NAMES, run["bars_met"]) if ok == "-"]


def cell(run: pd.Series) -> str:
    """A run as a table cell: its share of class-clairvoyant's reduction, the jobs killed, the bars it misses."""
    missed = missed_bars(run)
    return f"{run['share_of_cc']:.3f}, {run['killed']:.1%}" + (f", **{' '.join(missed)}**" if missed else " ✓")


def grid(runs: pd.DataFrame, first: str) -> list[str]:
    """A Markdown table of ``runs`` indexed by (row, trace, policy): a row per value of the first level (headed
    ``first``), a column per trace and policy, a ``cell`` each (empty: not run)."""
    columns = [(t, p) for t in TRACES for p in POLICIES]
    lines = [f"| {first} | " + " | ".join(f"{t} {p.upper()}" for t, p in columns) + " |",
             f"| {'---' if first == 'rule' else '---:'} |" + " ---: |" * len(columns)]
    for row in dict.fromkeys(runs.index.get_level_values(0)):
        cells = [cell(runs.loc[row, t, p].rename(None).to_frame().T.assign(policy=p).iloc[0])
                 if (row, t, p) in runs.index else "" for t, p in columns]
        lines.append(f"| {row} | " + " | ".join(cells) + " |")
    return lines


def loto_table(chosen: pd.DataFrame, heading: str, seeds: bool) -> list[str]:
    """A Markdown table of leave-one-trace-out's choices (``loto`` or ``loto_medians``), with each run's seed if
    ``seeds``."""
    seed = " seed |" if seeds else ""
    lines = [f"| left out | {heading} | policy |{seed} share | killed | wasted | AWF vs CC | large vs base | "
             "max wait vs base | bars missed |", "| --- | --- | --- |" + (" ---: |" if seeds else "") + " ---: |" * 7]
    for _, run in chosen.iterrows():
        lines.append(f"| {run['left_out']} | {run['chosen']} | {run['policy'].upper()} |"
                     + (f" {run['seed']} |" if seeds else "")
                     + f" {run['share_of_cc']:.3f} | {run['killed']:.1%} | {run['waste']:.2%} | "
                     f"{run['awf_vs_cc']:.2f}× | {run['large_vs_base']:+.0%} | {run['max_wait_vs_base']:.2f}× | "
                     f"{' '.join(missed_bars(run)) or 'none'} |")
    return lines


def markdown(points: pd.DataFrame) -> str:
    """The frontier (every rule, seed 0), leave-one-trace-out, the typical runs and leave-one-trace-out on them, and
    every seed of the rules run with more than one, as Markdown."""
    keys = ["rule", "trace", "policy"]
    lines = grid(points[points["seed"] == 0].set_index(keys), "rule")
    lines += ["", *loto_table(loto(points), "chosen on the other four", seeds=True)]
    medians = seed_medians(points)
    if not medians.empty:
        lines += ["", "The typical run: per rule run with the five seeds, the median over the seeds of each measure, "
                  "and the bars it misses:", "", *grid(medians.set_index(keys), "rule"), "",
                  *loto_table(loto_medians(medians), "chosen on the other four (medians)", seeds=False)]
    for rule in dict.fromkeys(points["rule"]):
        runs = points[points["rule"] == rule].set_index(["seed", "trace", "policy"])
        if runs.index.get_level_values("seed").nunique() >= 2:
            lines += ["", f"{rule}, every seed run:", "", *grid(runs.sort_index(level=0, sort_remaining=False), "seed")]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("command", choices=("run", "table", "markdown"))
    parser.add_argument("rules", nargs="*", help="rule names (default for table: every rule run so far)")
    parser.add_argument("-o", "--output", type=Path, required=True)
    parser.add_argument("--traces", default=",".join(TRACES))
    parser.add_argument("--policies", default=",".join(POLICIES))
    parser.add_argument("--seeds", help="the forest's seeds (default: run 0, table 0-4)")
    parser.add_argument("-j", "--jobs", type=int, default=2, help="simulations at a time")
    options = parser.parse_args(argv)
    out, traces, policies = options.output, options.traces.split(","), options.policies.split(",")
    seeds = [int(seed) for seed in (options.seeds or ("0" if options.command == "run" else "0,1,2,3,4")).split(",")]
    unknown = [rule for rule in options.rules if rule not in RULES]
    if unknown:
        sys.exit(f"unknown rule(s) {', '.join(unknown)}; known: {', '.join(RULES)}")
    if options.command == "run":
        tasks = [(ref_path(out, v, t, p), t, p, flags) for t in traces for p in {"fcfs", *policies}
                 for v, flags in REFERENCES.items()]
        tasks += [(run_path(out, rule, seed, t, p), t, p, [*RULES[rule], "--seed", str(seed)])
                  for seed in seeds for t in traces for p in policies for rule in options.rules]
        with ThreadPoolExecutor(options.jobs) as pool:
            list(pool.map(lambda task: simulate(*task), tasks))
    rules = options.rules or list(RULES)
    points = pd.DataFrame([row(out, rule, seed, t, p) for rule in rules for seed in seeds for t in traces
                           for p in policies if run_path(out, rule, seed, t, p).exists()])
    if points.empty:
        sys.exit("no run found")
    for _, point in points.iterrows():
        print(f"{point['rule']:28s} s{point['seed']} {point['trace']:8s} {point['policy']:4s} "
              f"{point['share_of_cc']:.3f} of CC, killed {point['killed']:.1%}, waste {point['waste']:.2%}, "
              f"AWF {point['awf_vs_cc']:.2f}x CC, large {point['large_vs_base']:+.0%} "
              f"(CC {point['cc_large_vs_base']:+.0%}), max wait {point['max_wait_vs_base']:.2f}x base "
              f"(CC {point['cc_max_wait_vs_base']:.2f}x) [{point['bars_met']}]")
    points.to_csv(out / "loto_points.csv", index=False, float_format="%.6f")
    if options.command == "table":
        print(loto(points).to_string(index=False, float_format=lambda x: f"{x:.3f}"))
        medians = seed_medians(points)
        if not medians.empty:
            print("\nleave-one-trace-out on the seed medians:")
            print(loto_medians(medians)[["left_out", "chosen", "policy", "share_of_cc", "killed", "max_wait_vs_base",
                                         "bars_met"]].to_string(index=False, float_format=lambda x: f"{x:.3f}"))
    if options.command == "markdown":
        print(markdown(points))


if __name__ == "__main__":
    main()
