"""Slurm accounting against SWF (issue 50): the same 100,000 jobs simulated from ``sacct --parsable2`` output
and from an SWF trace.

Writes HPC2N's first ``--jobs`` (100,000) jobs into a temporary folder twice: as an SWF trace (its header
keeps ``UnixStartTime`` and ``MaxProcs``, not the time zone, which sacct's times do not carry) and as sacct
output (``batsim_classifier_scheduler.workloads.sacct_write``; ``--steps`` adds a ``.batch`` and an ``.extern`` step per job,
as sacct prints without ``-X``). Then runs ``python -m batsim_classifier_scheduler simulate FILE --variant
base,classification-idempotent,class-clairvoyant --nb-res 240 -e ...`` on each, each run a fresh process,
interleaved over ``--repeat`` rounds, and checks that every variant's ``_jobs.csv`` is the same from both.
Last, the reading alone, in this process (best of 3): ``convert_swf`` against ``convert_sacct``, and its
share of the sacct command's wall time.

Target (issue 50): the sacct command at most 1.2x the SWF command's wall time (best of ``--repeat``).

Needs ``../shared/workloads/HPC2N-2002-2.2-cln.swf.gz`` beside the checkout; skips cleanly without it.

    python benchmarks/bench_sacct.py [--repeat 3] [--jobs 100000] [--steps]
"""

from __future__ import annotations

import argparse
import filecmp
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import (  # noqa: E402
    interleaved_children,
    machine_line,
    markdown_table,
    ratio,
    require_shared,
    seconds,
)

TRACE = "workloads/HPC2N-2002-2.2-cln.swf.gz"
VARIANTS = "base,classification-idempotent,class-clairvoyant"
NB_RES = 240


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=3, help="rounds of the two commands (default 3)")
    parser.add_argument("--jobs", type=int, default=100_000, help="HPC2N's first N jobs (default 100,000)")
    parser.add_argument("--steps", action="store_true", help="write each job's .batch and .extern steps too")
    args = parser.parse_args()
    (trace,) = require_shared(TRACE)

    from batsim_classifier_scheduler.workloads import convert_swf
    from batsim_classifier_scheduler.workloads.sacct import convert_sacct
    from batsim_classifier_scheduler.workloads.sacct_write import write_sacct
    from batsim_classifier_scheduler.workloads.swf import read_swf, write_swf

    with tempfile.TemporaryDirectory(prefix="bench_sacct_") as folder:
        folder = Path(folder)
        read = read_swf(trace)
        jobs = read.jobs.iloc[: args.jobs]
        swf = write_swf(folder / "hpc2n.swf", jobs, {"UnixStartTime": read.unix_start_time, "MaxProcs": NB_RES})
        sacct = write_sacct(folder / "hpc2n.sacct", jobs, unix_start=read.unix_start_time, steps=args.steps)
        print(f"{machine_line()}\nHPC2N's first {len(jobs):,} jobs: {swf.stat().st_size / 1e6:.1f} MB of SWF, "
              f"{sacct.stat().st_size / 1e6:.1f} MB of sacct output{' with steps' if args.steps else ''}\n")

        def command(source: Path, name: str) -> list[str]:
            return [sys.executable, "-m", "batsim_classifier_scheduler", "simulate", str(source), "--variant", VARIANTS,
                    "--nb-res", str(NB_RES), "--no-progress", "-e", str(folder / name)]

        walls, cpus, calibration = interleaved_children(
            {"swf": command(swf, "swf"), "sacct": command(sacct, "sacct")}, args.repeat, folder / "bytecode")
        for variant in VARIANTS.split(","):
            same = filecmp.cmp(folder / f"swf_{variant}_jobs.csv", folder / f"sacct_{variant}_jobs.csv", shallow=False)
            if not same:
                print(f"error: {variant}: the _jobs.csv from sacct differs from the SWF's")
                return 1

        reads = {}
        for name, read_it in (("swf", lambda: convert_swf(swf, nb_res=NB_RES)),
                              ("sacct", lambda: convert_sacct(sacct, nb_res=NB_RES))):
            times = []
            for _ in range(3):
                started = time.perf_counter()
                read_it()
                times.append(time.perf_counter() - started)
            reads[name] = min(times)

    rows = [[name, seconds(walls[name].best), seconds(walls[name].median), seconds(cpus[name]),
             seconds(reads[name]), f"{reads[name] / walls[name].best:.1%}", ratio(walls[name].best, walls["swf"].best),
             ratio(cpus[name], cpus["swf"])]
            for name in ("swf", "sacct")]
    print(markdown_table(["input", "best wall", "median wall", "best CPU", "reading (in process)",
                          "reading's share", "wall vs SWF", "CPU vs SWF"], rows))
    verdict = walls["sacct"].best / walls["swf"].best
    print(f"\nsimulate --variant {VARIANTS}, every _jobs.csv the same from both; calibration loop "
          f"{seconds(calibration.best)} (best)")
    print(f"sacct / SWF: {verdict:.2f}x (target at most 1.2x): {'met' if verdict <= 1.2 else 'MISSED'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
