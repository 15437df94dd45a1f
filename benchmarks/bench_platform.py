"""Time per decision on 100 processors and on 24,048: does the machine size cost anything?

One workload sized for 100 processors, and a copy of it whose requests (``res``) are multiplied by
240, simulated on 24,048 processors (240 x 100, plus 48 that no job can use since every request is a
multiple of 240). The two runs make the same decisions at the same times: job for job the same start
times and final states, and allocations that are the small run's scaled by 240. The benchmark checks
that, then compares the cost per Batsim message. Target (from the project's design): the same.

Workloads: the KTH-SP2 reference workload (100 processors) when ``../shared/`` is beside the
checkout, and always a synthetic one (``generate(20000, weeks=20, nb_res=100)``).

Each simulation runs in a fresh process, the cases interleaved over ``--repeat`` rounds; the table
shows the best CPU time of the rounds (``time.process_time``, which other processes on a shared
machine disturb far less than the wall time). The baseline, in the same run, is the 100-processor
run of the same workload: the table gives µs per message for the whole simulation and for the
decision core alone, and the 24,048/100 ratio of each.

    python benchmarks/bench_platform.py [--repeat 5]
"""

from __future__ import annotations

import argparse
import hashlib
import json
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
    shared_path,
)

SMALL = 100
FACTOR = 240
LARGE = 24_048
KTH = ("reference-schedules", "KTH-SP2", "workload.json.gz")
SYNTHETIC = dict(n_jobs=20_000, weeks=20, nb_res=SMALL, seed=1)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=5, help="runs of each case (default 5)")
    parser.add_argument("--child", nargs=2, metavar=("WORKLOAD", "SIZE"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        return child(args.child[0], int(args.child[1]))

    workloads = ["synthetic"]
    if shared_path(*KTH):
        workloads.insert(0, "kth")
    else:
        print(f"note: {Path('..', *KTH)} is not there; measuring the synthetic workload only\n")
    print(f"# Cost per decision: {SMALL} vs {LARGE:,} processors ({machine_line()}; best of {args.repeat}, "
          f"one fresh process per run)\n")

    runs: dict[tuple[str, int], list[dict]] = {(w, n): [] for w in workloads for n in (SMALL, LARGE)}
    calib = []
    for _ in range(args.repeat):  # interleaved, so that a slow spell of the machine hits every case
        calib.append(calibration_loop())
        for case in runs:
            runs[case].append(python_child(Path(__file__), "--child", *case)[0])

    rows = []
    for name in workloads:
        small, large = runs[(name, SMALL)], runs[(name, LARGE)]
        same = (small[0]["schedule"] == large[0]["schedule"] and small[0]["messages"] == large[0]["messages"])
        base = None
        for n, figures in ((SMALL, small), (LARGE, large)):
            messages = figures[0]["messages"]
            cpu = Timing([f["cpu"] for f in figures])
            core = Timing([f["core"] for f in figures])
            per_msg, per_core = cpu.best / messages, core.best / messages
            if base is None:
                base = (per_msg, per_core)
            rows.append([
                f"{figures[0]['name']}", f"{n:,}", f"{figures[0]['jobs']:,}", f"{messages:,}",
                seconds(cpu.best), seconds(cpu.median), f"{per_msg * 1e6:.1f}", f"{per_msg / base[0]:.2f}x",
                f"{per_core * 1e6:.1f}", f"{per_core / base[1]:.2f}x",
                "baseline" if n == SMALL else ("yes" if same else "**no**"),
            ])
    print(markdown_table(
        ["workload", "processors", "jobs", "messages", "CPU best", "CPU median", "µs / message",
         f"vs {SMALL}", "core µs / message", f"vs {SMALL}", "same schedule"],
        rows))
    c = Timing(calib)
    print(f"\nBaseline: the {SMALL}-processor run of the same workload, in this run. 'µs / message': the whole "
          f"simulation (engine, decision core, jobs table) per Batsim message, CPU time; 'core µs / "
          f"message': inside the decision core only (wall time, best run). 'same schedule': same "
          f"messages, start times and final states, allocations scaled by {FACTOR}. Calibration loop in "
          f"this run: best {seconds(c.best)}, median {seconds(c.median)}.")
    return 0


def child(name: str, size: int) -> int:
    from batsim_classifier_scheduler.config import SchedulerConfig
    from batsim_classifier_scheduler.workloads import load_workload
    from batsim_classifier_scheduler.workloads.model import Workload
    from batsim_classifier_scheduler.workloads.synthetic import generate

    if name == "kth":
        workload = load_workload(shared_path(*KTH), nb_res=SMALL)
        label = "KTH-SP2"
    else:
        workload = generate(**SYNTHETIC)
        label = f"synthetic {SYNTHETIC['n_jobs'] // 1000}k"
    if size == LARGE:
        table = workload.jobs.copy()
        table["res"] = table["res"] * FACTOR
        workload = Workload(jobs=table, nb_res=LARGE, name=workload.name, source=workload.source,
                            header=workload.header)
    if int(workload.jobs["res"].max()) > size:
        raise SystemExit(f"{label}: a job requests more than {size} processors")
    figures, result = measured_simulation(workload, SchedulerConfig(policy="fcfs"), size)
    figures["core"] = result.scheduling_time
    figures["name"] = label
    figures["schedule"] = schedule_digest(result.jobs, FACTOR if size == LARGE else 1)
    print(json.dumps(figures))
    return 0


def schedule_digest(jobs, factor: int) -> str:
    """A digest of the schedule: job ids, start times, final states, and allocations divided by
    ``factor`` (blocks of ``factor`` machines become one machine)."""
    digest = hashlib.sha256()
    for job_id, start, state, alloc in zip(jobs["job_id"], jobs["starting_time"], jobs["final_state"],
                                           jobs["allocated_resources"]):
        digest.update(f"{job_id},{start!r},{state},{scaled(alloc, factor)};".encode())
    return digest.hexdigest()


def scaled(alloc: str, factor: int) -> str:
    """``alloc`` with each block ``[factor*i, factor*i + factor - 1]`` read as machine ``i``."""
    if factor == 1 or not alloc:
        return alloc
    parts = []
    for interval in alloc.split():
        first, _, last = interval.partition("-")
        last = last or first
        lo, hi = int(first), int(last) + 1
        if lo % factor or hi % factor:
            return f"unaligned {alloc}"
        lo, hi = lo // factor, hi // factor - 1
        parts.append(str(lo) if lo == hi else f"{lo}-{hi}")
    return " ".join(parts)


if __name__ == "__main__":
    sys.exit(main())
