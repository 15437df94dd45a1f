"""Time per job from 10k to 250k jobs: does the simulation stay linear in the trace length?

EASY-FCFS on synthetic workloads (``batsim_classifier_scheduler.workloads.synthetic.generate``), two ways:

- ``concat``: one 5,000-job workload, concatenated with itself k times, each copy shifted by a
  whole number of weeks longer than its simulated makespan. The copies never overlap, so every
  copy is scheduled exactly like the first: the per-job work is the same at every size, and any
  growth of the time (or memory) per job is the implementation's (growing tables, heaps,
  garbage collection, caches).
- ``generate``: ``generate(n, weeks=n / --jobs-per-week)`` for each size, so the arrival rate and
  the offered load are the same. Each size is a different draw; the congestion, and with it the
  length of the queue that every EASY pass walks, varies a little, so the mean queue length
  (Little's law: total wait / makespan) is shown.

Each simulation runs in a fresh process (so that one size's heap does not slow the next), the
sizes interleaved over ``--repeat`` rounds; the tables show the best of the rounds. Times are the
simulation's CPU time (``time.process_time``, which other processes on a shared machine disturb far
less than the wall time; the best wall time is shown too). The baseline, in the same run, is the
smallest size: each size reports µs per job and per Batsim message, and their ratio to the smallest
size's. Target (from the project's issue): roughly flat.

Needs nothing beside the checkout.

    python benchmarks/bench_scaling.py [--repeat 3] [--mode concat|generate|both]
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import (  # noqa: E402
    Timing,
    calibration_loop,
    machine_line,
    markdown_table,
    measured_simulation,
    python_child,
    seconds,
)

SIZES = (10_000, 25_000, 50_000, 100_000, 250_000)
BLOCK = 5_000  # the concatenated workload's unit; every size is a multiple of it
WEEK = 7 * 86_400


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=3, help="runs of each size (default 3)")
    parser.add_argument("--mode", choices=("concat", "generate", "both"), default="both")
    parser.add_argument("--sizes", default=",".join(map(str, SIZES)),
                        help=f"comma-separated job counts (multiples of {BLOCK} for concat)")
    parser.add_argument("--nb-res", type=int, default=128, help="machine size (default 128)")
    parser.add_argument("--jobs-per-week", type=float, default=1000.0,
                        help="arrival rate: weeks = jobs / this (default 1000)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--child", nargs=2, metavar=("MODE", "N"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    sizes = sorted(int(s) for s in args.sizes.split(","))

    if args.child:
        return child(args.child[0], int(args.child[1]), max(sizes), args)

    print(f"# Scaling with the trace length, EASY-FCFS ({machine_line()}; best of {args.repeat}, "
          f"one fresh process per run)")
    modes = ("concat", "generate") if args.mode == "both" else (args.mode,)
    if "concat" in modes and any(n % BLOCK for n in sizes):
        parser.error(f"concat needs sizes that are multiples of {BLOCK}")
    for mode in modes:
        measure(mode, sizes, args)
    return 0


# --- the parent: interleaved fresh processes ---------------------------------------------


def measure(mode: str, sizes: list[int], args: argparse.Namespace) -> None:
    passed = ["--sizes", ",".join(map(str, sizes)), "--nb-res", args.nb_res,
              "--jobs-per-week", args.jobs_per_week, "--seed", args.seed]
    runs: dict[int, list[dict]] = {n: [] for n in sizes}
    peaks: dict[int, float] = {n: 0.0 for n in sizes}
    calib = []
    for _ in range(args.repeat):  # interleaved, so that a slow spell of the machine hits every size
        calib.append(calibration_loop())
        for n in sizes:
            figures, process = python_child(Path(__file__), "--child", mode, n, *passed)
            runs[n].append(figures)
            peaks[n] = max(peaks[n], process.max_rss_mb)

    print(f"\n## {mode}: {runs[sizes[0]][0]['description']}\n")
    base = sizes[0]
    base_cpu = min(r["cpu"] for r in runs[base])
    base_job, base_msg = base_cpu / base, base_cpu / runs[base][0]["messages"]
    base_mem = peaks[base]
    rows = []
    for n in sizes:
        cpu = Timing([r["cpu"] for r in runs[n]])
        wall = Timing([r["wall"] for r in runs[n]])
        last = runs[n][-1]
        per_job, per_msg = cpu.best / n, cpu.best / last["messages"]
        rows.append([
            f"{n:,}", seconds(cpu.best), seconds(cpu.median), seconds(wall.best),
            f"{per_job * 1e6:.1f}", f"{per_job / base_job:.2f}x",
            f"{per_msg * 1e6:.1f}", f"{per_msg / base_msg:.2f}x",
            f"{min(r['decisions'] for r in runs[n]):.0%}", f"{last['messages']:,}", f"{last['queue']:.1f}",
            f"{peaks[n]:.0f}", f"{(peaks[n] - base_mem) / (n - base) * 1024:.2f}" if n > base else "",
        ])
    print(markdown_table(
        ["jobs", "CPU best", "CPU median", "wall best", "µs / job", f"vs {base:,}", "µs / message",
         f"vs {base:,}", "in decisions", "messages", "mean queue", "peak MiB", f"KiB / job above {base:,}"],
        rows))
    c = Timing(calib)
    print(f"\nBaseline: the {base:,}-job figures of this run (µs are CPU µs). 'in decisions': share of the "
          f"simulation's wall time spent in the decision core. 'mean queue': mean number of waiting jobs "
          f"(total wait / makespan). 'peak MiB': the process's peak RSS, workload and results included. "
          f"Calibration loop in this run: best "
          f"{seconds(c.best)}, median {seconds(c.median)}.")


# --- the child: build one workload, simulate it once, print the figures as JSON ---------------


def child(mode: str, n: int, largest: int, args: argparse.Namespace) -> int:
    from batsim_classifier_scheduler.config import SchedulerConfig
    from batsim_classifier_scheduler.metrics import summarize

    workload, description = (concatenated if mode == "concat" else generated)(n, largest, args)
    figures, result = measured_simulation(workload, SchedulerConfig(policy="fcfs"), args.nb_res)
    metrics = summarize(result.jobs, nb_machines=args.nb_res)
    busy = result.makespan - float(workload.jobs["subtime"].min())
    figures["queue"] = metrics["mean_wait"] * metrics["nb_completed"] / busy if busy > 0 else math.nan
    figures["description"] = description
    print(json.dumps(figures))
    return 0


def concatenated(n: int, largest: int, args: argparse.Namespace):
    import pandas as pd

    from batsim_classifier_scheduler.config import SchedulerConfig
    from batsim_classifier_scheduler.sim.simulate import simulate
    from batsim_classifier_scheduler.workloads.model import Workload
    from batsim_classifier_scheduler.workloads.synthetic import generate

    weeks = BLOCK / args.jobs_per_week
    block = generate(BLOCK, weeks, args.nb_res, seed=args.seed)
    result, _ = simulate(block, SchedulerConfig(policy="fcfs"), args.nb_res)
    makespan = result.makespan
    period = math.ceil(makespan / WEEK + 1e-9) * WEEK  # whole weeks keep the weekly rhythm
    parts = []
    for k in range(n // BLOCK):
        part = block.jobs.copy()
        part["id"] = f"{k}_" + part["id"].astype(str)
        part["subtime"] = part["subtime"] + k * period
        parts.append(part)
    del result, _
    workload = Workload(jobs=pd.concat(parts, ignore_index=True), nb_res=args.nb_res, name=block.name,
                        source=f"{n // BLOCK} copies of: {block.source}")
    return workload, (f"`generate({BLOCK}, weeks={weeks:g}, nb_res={args.nb_res}, seed={args.seed})` "
                      f"repeated every {period // WEEK} weeks (it ends after {makespan / WEEK:.2f} "
                      f"weeks), so every copy is scheduled alike.")


def generated(n: int, largest: int, args: argparse.Namespace):
    from batsim_classifier_scheduler.workloads.synthetic import generate

    weeks = n / args.jobs_per_week
    workload = generate(n, weeks, args.nb_res, seed=args.seed)
    return workload, (f"`generate(n, weeks=n / {args.jobs_per_week:g}, nb_res={args.nb_res}, seed={args.seed})`: "
                      f"the same arrival rate and offered load at every size.")


if __name__ == "__main__":
    sys.exit(main())
