"""One ``python -m batsim_classifier_scheduler simulate`` command, run by this checkout and by other revisions, interleaved.

Each revision is exported with ``git archive`` into a temporary folder and run with ``PYTHONPATH`` there (this
checkout as it is), each run a fresh process keeping its bytecode between runs (one warm-up run first, not
measured), the revisions one after the other in each of ``--repeat`` rounds, so that a slow spell of a shared
machine hits all alike. Shows, per revision, the best and the median CPU time (``os.wait4`` of the process: user +
system), the best wall time, the peak RSS, the CPU ratios to the first ``--baseline``, and whether its
``_jobs.csv`` is this checkout's, byte for byte. Issue 30 measures HPC2N this way:

    python benchmarks/bench_revisions.py --baseline 65a13a3 --baseline 2c4db4d --repeat 3 -- \\
        ../shared/workloads/HPC2N-2002-2.2-cln.swf.gz --variant base

The arguments after ``--`` follow ``simulate`` (paths relative to this checkout, made absolute: each revision
runs from its own folder); ``--no-progress`` and the output prefix are added. Needs nothing beside the checkout
but the inputs it names.
"""

from __future__ import annotations

import argparse
import filecmp
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import (absolute_arguments, add_baselines_option, child_env, machine_line,  # noqa: E402
                    markdown_table, ratio, revision_roots, run_child)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_baselines_option(parser)
    parser.add_argument("--repeat", type=int, default=2, help="rounds (default 2)")
    parser.add_argument("simulate", nargs="+", help="simulate's arguments (after --)")
    options = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bench_revisions_") as scratch:
        folder = Path(scratch)
        roots = revision_roots(options.baseline, folder)
        best = {name: [float("inf")] * 3 for name in roots}  # cpu, wall, peak MiB
        cpus: dict[str, list[float]] = {name: [] for name in roots}
        arguments = absolute_arguments(options.simulate)  # each revision runs from its own folder
        for round_number in range(options.repeat + 1):
            for number, (name, root) in enumerate(roots.items()):
                command = [sys.executable, "-m", "batsim_classifier_scheduler", "simulate", *arguments, "--no-progress",
                           "-e", str(folder / f"out{number}")]
                # from the revision's folder: ``-m`` puts the working directory first on the path
                run = run_child(command, cwd=root, env=child_env(root, bytecode=folder / f"pyc{number}"))
                if round_number:  # the first round compiles the modules: not measured
                    cpu, wall, peak = best[name]
                    best[name] = [min(cpu, run.cpu), min(wall, run.wall), min(peak, run.max_rss_mb)]
                    cpus[name].append(run.cpu)
        outputs = {name: folder / f"out{number}_jobs.csv" for number, name in enumerate(roots)}
        base = options.baseline[0] if options.baseline else "this checkout"
        medians = {name: statistics.median(values) for name, values in cpus.items()}
        rows = [[f"`{name}`", f"{cpu:.2f} s", f"{medians[name]:.2f} s", f"{wall:.2f} s", f"{peak:.0f}",
                 ratio(cpu, best[base][0]), ratio(medians[name], medians[base]),
                 "yes" if filecmp.cmp(outputs[name], outputs["this checkout"], shallow=False) else "no"]
                for name, (cpu, wall, peak) in best.items()]
    print(f"# simulate {' '.join(options.simulate)} ({machine_line()}; {options.repeat} rounds, interleaved)\n")
    print(markdown_table(["revision", "CPU best", "CPU median", "wall best", "peak MiB", f"CPU best vs {base}",
                          f"CPU median vs {base}", "same _jobs.csv as this checkout"], rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
