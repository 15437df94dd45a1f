"""Issue 32, "know, don't kill": each kill rule on KTH-SP2, SDSC-SP2 and HPC2N under EASY-FCFS and EASY-SPF,
measured against the issue's six criteria, and the frontier they draw (reduction as a share of class-clairvoyant's
against the share of jobs killed).

    python experiments/kill_frontier.py run RULE [RULE...] -o OUT     # simulate what is missing, print the criteria
    python experiments/kill_frontier.py table -o OUT                  # every rule run so far: OUT/points.csv
    python experiments/kill_frontier.py plot POINTS.csv -o DIR        # DIR/kill_frontier_<trace>.png (and .svg)
    python experiments/kill_frontier.py gap RULE -o OUT               # where its mean bsld differs from CC's

Runs go to OUT/<rule>/<trace>_<policy>_jobs.csv (base and class-clairvoyant under OUT/ref/), one ``simulate``
process at a time (under ``nice``), and are reused when present. The traces are read from ../shared/workloads
beside the checkout. The criteria (docs/notebook/2026-12-05-results.md, "Know, don't kill"): the reduction of mean bsld against
EASY-FCFS base as a share of class-clairvoyant's under the same policy; the share of jobs killed at least once;
the wasted work (killed attempts' processor-seconds over the useful ones); AWF against class-clairvoyant's;
the actually-large jobs' (runtime >= the median) mean bsld against base under the same policy; the longest wait
against base's and class-clairvoyant's.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from functools import lru_cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import pandas as pd  # noqa: E402

from batsim_classifier_scheduler.metrics import bounded_slowdown, fold_attempts, summarize  # noqa: E402
from batsim_classifier_scheduler.sim.batsim_files import read_jobs_csv  # noqa: E402

WORKLOADS = ROOT.parent / "shared" / "workloads"
#: trace -> (SWF file, platform, processors)
TRACES = {"KTH-SP2": ("KTH-SP2-1996-2.1-cln.swf.gz", "platforms/kth_sp2.xml", 100),
          "SDSC-SP2": ("SDSC-SP2-1998-4.2-cln.swf.gz", "platforms/sdsc_sp2.xml", 128),
          "HPC2N": ("HPC2N-2002-2.2-cln.swf.gz", "platforms/hpc2n.xml", 240)}
POLICIES = ("fcfs", "spf")
BOUNDED = ["--variant", "classification-bounded"]
ORDER = ["--variant", "classification-blocking"]
TOLERANT = ["--variant", "classification-tolerant"]
#: tolerant with blocking's trials (half a divider, 300 s at most); HALF10: and promotion after ten requests
HALF = [*TOLERANT, "--probe-length", "0.5"]
HALF10 = [*HALF, "--promote-after", "10"]
#: Every rule tried, by name: its ``simulate`` options (docs/notebook/2026-12-05-results.md lists what each means).
RULES: dict[str, list[str]] = {
    "idempotent": ["--variant", "classification-idempotent"],
    "bounded": BOUNDED,
    "demand": [*BOUNDED, "--kill-on", "demand"],
    "blocking": [*BOUNDED, "--kill-on", "blocking"],
    "blocking-p0.05": [*BOUNDED, "--kill-on", "blocking", "--probe-threshold", "0.05"],
    "blocking-p0.1": [*BOUNDED, "--kill-on", "blocking", "--probe-threshold", "0.1"],
    "blocking-cap120": [*BOUNDED, "--kill-on", "blocking", "--probe-limit", "120"],
    "blocking-cap600": [*BOUNDED, "--kill-on", "blocking", "--probe-limit", "600"],
    "blocking-slack1": [*BOUNDED, "--kill-on", "blocking", "--kill-slack", "1"],
    "blocking-siblings": [*BOUNDED, "--kill-on", "blocking", "--running-siblings", "large"],
    "blocking-siblings-p0.05": [*BOUNDED, "--kill-on", "blocking", "--running-siblings", "large",
                                "--probe-threshold", "0.05"],
    "blocking-ahead": [*BOUNDED, "--kill-on", "blocking", "--retry-queue", "ahead"],
    "patient": [*BOUNDED, "--kill-on", "patient"],
    "blocking-policy": [*BOUNDED, "--kill-on", "blocking", "--kill-for", "policy"],
    "blocking-policy-w0.5": [*BOUNDED, "--kill-on", "blocking", "--kill-for", "policy", "--probe-max-width", "0.5"],
    "blocking-order": ORDER,
    "blocking-order-siblings": [*ORDER, "--running-siblings", "large"],
    "blocking-order-fresh": [*ORDER, "--retry-queue", "fresh"],
    "blocking-order-slack1": [*ORDER, "--kill-slack", "1"],
    "blocking-order-p0.05": [*ORDER, "--probe-threshold", "0.05"],
    "blocking-order-waiting0.2-promote10": [*ORDER, "--head-slack", "0.2", "--promote-after", "10"],
    "tolerant-half-order-planned": [*HALF10, "--order-by", "planned"],  # tolerant as it was before --order-by
    "tolerant-half": HALF10,
    "tolerant-half-head0.2": [*HALF10, "--head-slack", "0.2"],
    "tolerant-half-head0.4": [*HALF10, "--head-slack", "0.4"],
    "tolerant-half-promote7": [*HALF, "--promote-after", "7"],
    "tolerant-half-promote15": [*HALF, "--promote-after", "15"],
    "tolerant-half-retry-ahead": [*HALF10, "--retry-queue", "ahead"],
    "tolerant-half-threshold0.4": [*HALF10, "--classifier-threshold", "0.4"],
    "tolerant-promote10": [*TOLERANT, "--promote-after", "10"],
    "tolerant-promote10-limit600": [*TOLERANT, "--promote-after", "10", "--probe-limit", "600"],
    # blocking-order, --head-slack 0.3 --promote-after 7 --order-by estimate --probe-length 1
    "tolerant": TOLERANT,
}
#: Rules measured on a core whose options were dropped or changed since, by the commit they run at (``git worktree
#: add DIR COMMIT``, then ``simulate`` with the same options there): ``run`` refuses them here, ``table`` reads their
#: runs. At f0674ec, ``--head-slack`` also spared a job whose kill would let the waiting job start now.
MEASURED_AT: dict[str, dict[str, list[str]]] = {
    "f0674ec": {
        "blocking-order-head0.05": [*ORDER, "--head-slack", "0.05"],
        "blocking-order-head0.1": [*ORDER, "--head-slack", "0.1"],
        "blocking-order-head0.25": [*ORDER, "--head-slack", "0.25"],
        "blocking-order-head1": [*ORDER, "--head-slack", "1"],
        **{f"blocking-order-head{slack}-promote{after}": [*ORDER, "--head-slack", slack, "--promote-after", after]
           for slack, after in (("0.1", "1"), ("0.05", "5"), ("0.05", "10"), ("0.1", "10"), ("0.15", "10"),
                                ("0.2", "10"))},
    },
    "f0348ce": {
        "blocking-order-uncertain-heads-spared": [*ORDER, "--kill-for", "known"],
        "blocking-order-start-now": [*ORDER, "--kill-buys", "start"],
        "blocking-order-uncertain-in-q": [*ORDER, "--uncertain-queue", "large"],
        "blocking-order-uncertain-in-q-head0.25": [*ORDER, "--uncertain-queue", "large", "--head-slack", "0.25"],
        "blocking-order-head0.25-small0.25": [*ORDER, "--head-slack", "0.25", "--small-slack", "0.25"],
        "blocking-order-head0.1-watched": [*ORDER, "--head-slack", "0.1", "--tolerated", "watched"],
        "blocking-order-head0.1-promote-killed": [*ORDER, "--head-slack", "0.1", "--promote", "killed"],
        "blocking-order-head0.25-promote-killed": [*ORDER, "--head-slack", "0.25", "--promote", "killed"],
    },
}
#: The same, by rule: (commit, options).
PATCHED = {rule: (commit, flags) for commit, rules in MEASURED_AT.items() for rule, flags in rules.items()}
#: The rule of the variant we recommend, ``classification-tolerant``.
CHOSEN = "tolerant"
REFERENCES = {"base": ["--variant", "base"], "class-clairvoyant": ["--variant", "class-clairvoyant"]}


def simulate(trace: str, policy: str, prefix: Path, options: list[str]) -> Path:
    """``prefix``_jobs.csv, simulated unless it exists."""
    jobs = prefix.parent / f"{prefix.name}_jobs.csv"
    if jobs.exists():
        return jobs
    swf, platform, _ = TRACES[trace]
    prefix.parent.mkdir(parents=True, exist_ok=True)
    command = ["nice", "-n", "10", sys.executable, "-m", "batsim_classifier_scheduler", "simulate", str(WORKLOADS / swf),
               "--platform", platform, "--policy", policy, "-e", str(prefix), "--no-progress", *options]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, env=env)
    if done.returncode:
        sys.exit(f"{' '.join(command)}\n{done.stderr[-2000:]}")
    return jobs


@lru_cache(maxsize=None)
def measures(jobs_csv: Path, nb_machines: int) -> dict[str, float]:
    """The aggregates the criteria read, with the share of jobs killed at least once (once per file)."""
    jobs = read_jobs_csv(jobs_csv)
    summary = summarize(jobs, nb_machines, recomputed=True)
    folded = fold_attempts(jobs)
    return {"mean_bsld": summary["mean_bsld"], "killed": float((folded["attempts"] > 1).mean()),
            "waste": summary["wasted_core_seconds"] / summary["useful_core_seconds"], "awf": summary["awf"],
            "large_bsld": summary["mean_bsld_actual_large"], "max_wait": summary["max_wait"]}


def criteria(rule: str, trace: str, policy: str, out: Path) -> dict:
    """One rule's row: its measures against base (EASY-FCFS and the same policy) and class-clairvoyant."""
    nb = TRACES[trace][2]
    ref = {(p, v): measures(simulate(trace, p, out / "ref" / f"{trace}_{p}_{v}", options), nb)
           for p in {"fcfs", policy} for v, options in REFERENCES.items()}
    base0, base, cc = ref["fcfs", "base"], ref[policy, "base"], ref[policy, "class-clairvoyant"]
    prefix = out / rule / f"{trace}_{policy}"
    if rule in PATCHED and not prefix.with_name(f"{prefix.name}_jobs.csv").exists():
        commit, flags = PATCHED[rule]
        sys.exit(f"{rule} was measured on a core since changed: simulate it at commit {commit} with "
                 f"{' '.join(flags)}, into {prefix}")
    return compare(rule, trace, policy, measures(simulate(trace, policy, prefix, RULES.get(rule, [])), nb),
                   base0, base, cc)


def compare(rule: str, trace: str, policy: str, run: dict, base0: dict, base: dict, cc: dict) -> dict:
    """A run's row: its measures against EASY-FCFS base (``base0``), base and class-clairvoyant under its policy,
    and ``bars_met``: one + or - per bar of issue 32 (six under FCFS, five under SPF)."""
    reduction = 1 - run["mean_bsld"] / base0["mean_bsld"]
    cc_reduction = 1 - cc["mean_bsld"] / base0["mean_bsld"]
    row = {"rule": rule, "trace": trace, "policy": policy, "reduction": reduction, "cc_reduction": cc_reduction,
           "share_of_cc": reduction / cc_reduction, "killed": run["killed"], "waste": run["waste"],
           "awf_vs_cc": run["awf"] / cc["awf"], "large_vs_base": run["large_bsld"] / base["large_bsld"] - 1,
           "cc_large_vs_base": cc["large_bsld"] / base["large_bsld"] - 1,
           "max_wait_vs_base": run["max_wait"] / base["max_wait"],
           "cc_max_wait_vs_base": cc["max_wait"] / base["max_wait"]}
    row["bars_met"] = bars_met(row, policy)
    return row


def bars_met(row: dict, policy: str) -> str:
    """One + or - per bar of issue 32 that a run's measures (``compare``'s row) meet: six under FCFS, five under
    SPF."""
    checks = [row["share_of_cc"] >= 0.9, row["killed"] <= 0.10, row["waste"] <= 0.010, row["awf_vs_cc"] <= 1.10]
    if policy == "fcfs":
        checks += [row["large_vs_base"] <= 0.10,
                   row["max_wait_vs_base"] <= max(1.5, 1.1 * row["cc_max_wait_vs_base"])]
    else:
        checks += [row["large_vs_base"] <= row["cc_large_vs_base"] + 0.10]
    return "".join("+" if ok else "-" for ok in checks)


def gap_by_class(run_csv: Path, cc_csv: Path) -> pd.DataFrame:
    """Where a run's mean bsld differs from class-clairvoyant's: the jobs grouped by the class the run gave them
    (its first attempt's ``class=`` metadata), whether they are actually small (runtime below the run's median) and
    whether they were killed; per group the jobs, and each side's sum of bsld over the trace's job count (so that
    the groups' differences add up to the difference of the means)."""
    run, cc = read_jobs_csv(run_csv), read_jobs_csv(cc_csv)
    folded = fold_attempts(run).set_index("job_id")
    first = run[~run["job_id"].astype(str).str.contains("#", regex=False)]
    classes = first.set_index(first["job_id"].astype(str))["metadata"].str.extract(r"class=(\w+)")[0]
    cc_folded = fold_attempts(cc).set_index("job_id")
    jobs = pd.DataFrame({"class": classes.reindex(folded.index.astype(str)).to_numpy(),
                         "small": folded["runtime"] < folded["runtime"].median(), "killed": folded["attempts"] > 1,
                         "run": bounded_slowdown(folded["wait"], folded["runtime"]),
                         "cc": bounded_slowdown(cc_folded["wait"], cc_folded["runtime"]).reindex(folded.index)})
    table = jobs.groupby(["class", "small", "killed"]).agg(jobs=("run", "size"), run=("run", "sum"), cc=("cc", "sum"))
    table[["run", "cc"]] /= len(jobs)
    table["difference"] = table["run"] - table["cc"]
    return table


def show(row: dict) -> str:
    return (f"{row['rule']:24s} {row['trace']:8s} {row['policy']:4s} {row['share_of_cc']:.2f} of CC "
            f"({row['reduction']:.1%} vs {row['cc_reduction']:.1%}), killed {row['killed']:.1%}, "
            f"waste {row['waste']:.2%}, AWF {row['awf_vs_cc']:.2f}x CC, large {row['large_vs_base']:+.0%} "
            f"(CC {row['cc_large_vs_base']:+.0%}), max wait {row['max_wait_vs_base']:.2f}x base "
            f"(CC {row['cc_max_wait_vs_base']:.2f}x) [{row['bars_met']}]")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("command", choices=("run", "table", "plot", "gap"))
    parser.add_argument("args", nargs="*", help="run: rule names (all: every rule); plot: the points CSV; gap: a rule")
    parser.add_argument("-o", "--output", type=Path, required=True)
    parser.add_argument("--traces", default=",".join(TRACES))
    parser.add_argument("--policies", default=",".join(POLICIES))
    options = parser.parse_args(argv)
    traces, policies = options.traces.split(","), options.policies.split(",")
    if options.command == "gap":
        for trace in traces:
            for policy in policies:
                cc = options.output / "ref" / f"{trace}_{policy}_class-clairvoyant_jobs.csv"
                print(f"{options.args[0]}, {trace} {policy} (mean bsld against class-clairvoyant's, per group):")
                print(gap_by_class(options.output / options.args[0] / f"{trace}_{policy}_jobs.csv", cc).round(3))
        return
    if options.command == "plot":
        from batsim_classifier_scheduler.experiments.plots import kill_frontier

        points = pd.read_csv(options.args[0])
        for trace in dict.fromkeys(points["trace"]):
            slug = trace.split("-")[0].lower()
            print(kill_frontier(points[points["trace"] == trace], trace, options.output / f"kill_frontier_{slug}.png",
                                highlight=CHOSEN, rules=[*RULES, *PATCHED]))
        return
    known = [*RULES, *PATCHED]
    rules = known if options.command == "table" else list(RULES) if options.args == ["all"] else options.args
    unknown = [rule for rule in rules if rule not in known]
    if unknown:
        sys.exit(f"unknown rule(s) {', '.join(unknown)}; known: {', '.join(known)}")
    rows = []
    for rule in rules:
        for trace in traces:
            for policy in policies:
                if options.command == "table" and not (options.output / rule / f"{trace}_{policy}_jobs.csv").exists():
                    continue
                rows.append(criteria(rule, trace, policy, options.output))
                print(show(rows[-1]), flush=True)
    if options.command == "table":
        pd.DataFrame(rows).to_csv(options.output / "points.csv", index=False, float_format="%.6f")


if __name__ == "__main__":
    main()
