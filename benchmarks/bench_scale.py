"""CPU and peak memory per job against the machine's size and the queue's length: the largest archive traces.

EASY-FCFS base (``python -m batsim_classifier_scheduler simulate TRACE -e ...``) on the first lines of three archive traces, read
from the team's shared folder beside the checkout at run time (never copied into the repository; the slices go
to a temporary folder):

- HPC2N-2002-2.2-cln (240 processors): the baseline, in the same run;
- RICC-2010-2 (8,192 processors, heavily loaded: long queues, thousands of one-core jobs running at once; the
  copy has no header, so the machine size is given with ``--nb-res``);
- CEA-Curie-2011-2.1-cln (93,312 processors, fragmented).

Each simulation runs in a fresh process (its own CPU time, user + system, and peak RSS through ``os.wait4``),
the runs interleaved over ``--repeat`` rounds, bytecode kept between runs; the tables show the best CPU and
the smallest peak of the rounds. Per job: CPU µs and its ratio to HPC2N's at the same number of lines, peak
RSS over the jobs kept; the mean queue length is Little's law (total wait / makespan). ``--lines all`` runs the
whole traces (about three minutes of CPU for the three).

The queue's length apart from the trace's size and the machine's: ``--compress 2,4`` also runs the traces of
``--compress-traces`` (default HPC2N) with their submission times compressed by each factor (the interarrival
times divided, the first submission kept; the same jobs on the same machine, longer queues), on the same lines.

Targets (issue 40): RICC and CEA-Curie at most 2x HPC2N's CPU per job; peak memory at most 2 kB per job.

    python benchmarks/bench_scale.py [--lines 20000,60000] [--repeat 1] [--baseline REV]
        [--compress 2,4,8] [--compress-traces HPC2N,RICC]
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import (  # noqa: E402
    REPO,
    child_env,
    export_revision,
    machine_line,
    markdown_table,
    require_shared,
    run_child,
)

#: (name, file under the shared folder, machine size to give, or None for the header's)
TRACES = (
    ("HPC2N", "workloads/HPC2N-2002-2.2-cln.swf.gz", None),
    ("RICC", "workloads/RICC-2010-2.swf.gz", 8192),
    ("CEA-Curie", "workloads/CEA-Curie-2011-2.1-cln.swf.gz", None),
)
BASELINE = "HPC2N"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lines", default="20000,60000",
                        help="comma-separated numbers of trace lines to simulate, or 'all' (default 20000,60000)")
    parser.add_argument("--repeat", type=int, default=1, help="rounds (default 1: the whole grid is costly)")
    parser.add_argument("--baseline", metavar="REV",
                        help="also run this revision (exported with git archive), interleaved, for its ratios")
    parser.add_argument("--compress", default="",
                        help="comma-separated factors (> 1) the submission times are compressed by, for longer queues")
    parser.add_argument("--compress-traces", default=BASELINE,
                        help=f"comma-separated traces to compress (of {', '.join(name for name, _, _ in TRACES)}; "
                             f"default {BASELINE})")
    args = parser.parse_args(argv)
    names = [name for name, _, _ in TRACES]
    factors = [float(f) for f in args.compress.split(",") if f]
    compressed = [name.strip() for name in args.compress_traces.split(",")]
    if any(factor <= 1 for factor in factors) or not set(compressed) <= set(names):
        parser.error(f"--compress takes factors above 1, --compress-traces names among {', '.join(names)}")
    paths = dict(zip(names, require_shared(*[file for _, file, _ in TRACES])))
    sizes = [None] if args.lines == "all" else [int(n) for n in args.lines.split(",")]
    print(machine_line())
    with tempfile.TemporaryDirectory(prefix="bench_scale_") as tmp:
        folder = Path(tmp)
        roots = {"this checkout": REPO}
        if args.baseline:
            (folder / "baseline").mkdir()
            roots[args.baseline] = export_revision(args.baseline, folder / "baseline")
        runs = {}  # (root, trace, lines, compression) -> (argv, output prefix)
        for lines in sizes:
            for name, _, nb_res in TRACES:
                trace = paths[name] if lines is None else _slice(paths[name], lines, folder / f"{name}_{lines}.swf")
                for factor in [1.0] + (factors if name in compressed else []):
                    if factor != 1:
                        trace = _compress(trace, factor, folder / f"{name}_{lines}_{factor:g}.swf")
                    for label in roots:
                        prefix = folder / "out" / f"{label.replace(' ', '_')}_{name}_{lines}_{factor:g}"
                        argv = [sys.executable, "-m", "batsim_classifier_scheduler", "simulate", str(trace), "--no-progress",
                                "-e", str(prefix)]
                        if nb_res:
                            argv += ["--nb-res", str(nb_res)]
                        runs[label, name, lines, factor] = argv, prefix
        (folder / "out").mkdir()
        for label, root in roots.items():  # a first run compiles the bytecode the timed runs start from
            run_child(runs[label, BASELINE, sizes[0], 1.0][0], cwd=root, env=child_env(root, bytecode=folder / "pyc"))
        best: dict[tuple, tuple[float, float]] = {}
        for _ in range(args.repeat):
            for key, (argv, _) in runs.items():
                child = run_child(argv, cwd=roots[key[0]], env=child_env(roots[key[0]], bytecode=folder / "pyc"))
                cpu, rss = best.get(key, (float("inf"), float("inf")))
                best[key] = min(cpu, child.cpu), min(rss, child.max_rss_mb)
        rows = []
        for key, (argv, prefix) in runs.items():
            label, name, lines, factor = key
            summary = json.loads(Path(f"{prefix}_summary.json").read_text())
            jobs, metrics = summary["workload"]["jobs"], summary["metrics"]
            cpu, rss = best[key]
            base_cpu = best[label, BASELINE, lines, 1.0][0] / json.loads(
                Path(f"{runs[label, BASELINE, lines, 1.0][1]}_summary.json").read_text())["workload"]["jobs"]
            per_job = cpu / jobs
            queue = metrics["mean_wait"] * jobs / metrics["makespan"] if metrics["makespan"] else 0.0
            rows.append((label, name, "all" if lines is None else f"{lines:,}", f"{factor:g}", f"{jobs:,}",
                         f"{summary['nb_machines']:,}", f"{queue:,.0f}", f"{cpu:.2f} s", f"{per_job * 1e6:.0f}",
                         f"{per_job / base_cpu:.2f}x", f"{rss:.0f} MiB", f"{rss * 1024 / jobs:.2f}"))
        print(markdown_table(["revision", "trace", "lines", "time ÷", "jobs", "machines", "mean queue", "CPU best",
                              "µs / job", f"vs {BASELINE}", "peak RSS", "kB / job"], rows))
    return 0


def _slice(trace: Path, lines: int, destination: Path) -> Path:
    """The first ``lines`` lines of ``trace`` (header comments count), written to ``destination``."""
    with gzip.open(trace, "rt") if trace.suffix == ".gz" else open(trace) as source, open(destination, "w") as out:
        for number, line in enumerate(source):
            if number >= lines:
                break
            out.write(line)
    return destination


def _compress(trace: Path, factor: float, destination: Path) -> Path:
    """``trace`` with its submission times (field 2) compressed by ``factor`` towards the first one (the interarrival
    times divided, rounded down to whole seconds), written to ``destination``; comments and other fields as they are."""
    first = None
    with gzip.open(trace, "rt") if trace.suffix == ".gz" else open(trace) as source, open(destination, "w") as out:
        for line in source:
            fields = line.split()
            if not fields or line.lstrip().startswith(";"):
                out.write(line)
                continue
            submit = float(fields[1])
            first = submit if first is None else first
            fields[1] = str(int(first + (submit - first) // factor))
            out.write(" ".join(fields) + "\n")
    return destination


if __name__ == "__main__":
    sys.exit(main())
