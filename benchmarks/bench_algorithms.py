"""Every scheduling algorithm's cost against EASY's, as a user runs it: ``simulate -v ALGORITHM``.

Runs, each in a fresh process, ``python -m batsim_classifier_scheduler simulate TRACE -v ALGORITHM -e SCRATCH/...`` (FCFS
order, requested times) for ``easy`` (the baseline), ``easy_bf_fast``, ``conservative_bf``, ``fcfs`` and
``filler``, on two traces:

- ``SDSC-SP2``: ``../shared/workloads/SDSC-SP2-1998-4.2-cln.swf.gz`` (54k jobs after cleaning) on
  ``platforms/sdsc_sp2.xml`` (128 processors), read, cleaned and converted on the fly; skipped when the shared
  folder is absent;
- ``synthetic``: ``generate(N, weeks=N/1000, nb_res=128, seed=1)`` with N = 250,000 by default
  (``--synthetic-jobs``: the same arrival rate and load at every size), written once to a temporary Batsim JSON
  file.

Every child keeps the modules it compiles in a temporary folder (``common.child_env``; a warm-up run of each
algorithm on the shipped sample first). The algorithms are interleaved over ``--repeat`` rounds. For each:
the best and median wall time, the best CPU time (the child's user + system), their ratios to ``easy`` in
the same run, and the CPU time per job. batsched 1.4.0's ``conservative_bf`` takes about 1.6x the CPU time of
its ``easy_bf`` on SDSC-SP2 (quoted, not measured here).

    python benchmarks/bench_algorithms.py [--repeat 3] [--traces SDSC-SP2,synthetic] [--algorithms ...]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import (  # noqa: E402
    REPO,
    child_env,
    interleaved_children,
    machine_line,
    markdown_table,
    ratio,
    run_child,
    seconds,
    shared_path,
    synthetic_trace,
)

SDSC = "workloads/SDSC-SP2-1998-4.2-cln.swf.gz"
TRACES = ("SDSC-SP2", "synthetic")
ALGORITHMS = ("easy", "easy_bf_fast", "conservative_bf", "fcfs", "filler")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=3, help="rounds of runs (default 3)")
    parser.add_argument("--traces", default=",".join(TRACES), help=f"comma-separated, among {', '.join(TRACES)}")
    parser.add_argument("--algorithms", default=",".join(ALGORITHMS),
                        help="comma-separated; easy, the baseline, is always run")
    parser.add_argument("--synthetic-jobs", type=int, default=250_000, help="jobs of the synthetic trace")
    args = parser.parse_args(argv)
    names = [name for name in args.traces.split(",") if name]
    unknown = [name for name in names if name not in TRACES]
    if unknown:
        parser.error(f"unknown trace(s) {', '.join(unknown)}; known: {', '.join(TRACES)}")
    algorithms = ["easy", *(name for name in args.algorithms.split(",") if name and name != "easy")]

    print(f"# The scheduling algorithms against EASY ({machine_line()}; best of {args.repeat}, one fresh "
          f"process per run)")
    with tempfile.TemporaryDirectory(prefix="bench_algorithms_") as scratch:
        warm_up(algorithms, Path(scratch))
        for name, (path, nb_jobs) in prepare(names, Path(scratch), args.synthetic_jobs).items():
            measure(name, path, nb_jobs, algorithms, Path(scratch), args.repeat)
    return 0


def simulate_command(trace: Path, algorithm: str, prefix: Path) -> list[str]:
    platform = ["--platform", str(REPO / "platforms" / "sdsc_sp2.xml")] if trace.name == Path(SDSC).name else []
    return [sys.executable, "-m", "batsim_classifier_scheduler", "simulate", str(trace), *platform, "--algorithm", algorithm,
            "--no-progress", "-e", str(prefix)]


def warm_up(algorithms: list[str], scratch: Path) -> None:
    """Run every algorithm once on the shipped sample, so that the children start with their bytecode."""
    for algorithm in algorithms:
        run_child(simulate_command(REPO / "workloads" / "sample.json", algorithm, scratch / "warm-up"), cwd=REPO,
                  env=child_env(bytecode=scratch / "bytecode"))


def prepare(names: list[str], scratch: Path, synthetic_jobs: int) -> dict[str, tuple[Path, int]]:
    """The trace files to simulate and their job counts (after cleaning), by name."""
    traces = {}
    for name in names:
        if name == "SDSC-SP2":
            path = shared_path(SDSC)
            if path is None:
                print(f"\n{name}: skipped, ../shared/{SDSC} is not there")
                continue
            from batsim_classifier_scheduler.workloads import load_workload

            traces[name] = path, len(load_workload(path))
        else:
            path, workload = synthetic_trace(synthetic_jobs, scratch)
            traces[f"{name} (generate({synthetic_jobs}, weeks={synthetic_jobs / 1000:g}, nb_res=128, seed=1))"] = \
                path, len(workload)
    return traces


def measure(name: str, trace: Path, nb_jobs: int, algorithms: list[str], scratch: Path, rounds: int) -> None:
    commands = {algorithm: simulate_command(trace, algorithm, scratch / f"{name}_{algorithm}")
                for algorithm in algorithms}
    wall, cpu, calibration = interleaved_children(commands, rounds, scratch / "bytecode")
    rows = [[algorithm, seconds(wall[algorithm].best), seconds(wall[algorithm].median), seconds(cpu[algorithm]),
             ratio(wall[algorithm].best, wall["easy"].best), ratio(cpu[algorithm], cpu["easy"]),
             f"{cpu[algorithm] / nb_jobs * 1e6:.0f}"] for algorithm in algorithms]
    print(f"\n## {name} (`{trace.name}`, {nb_jobs:,} jobs)\n")
    print(markdown_table(["algorithm", "wall best", "wall median", "CPU best", "wall / easy", "CPU / easy",
                          "CPU µs / job"], rows))
    print(f"\nCalibration loop in this run: best {seconds(calibration.best)}, median {seconds(calibration.median)}.")


if __name__ == "__main__":
    sys.exit(main())
