"""``serve``'s CPU per job on the largest machine against KTH-SP2's, driven by ``batsim-peer``.

``python -m batsim_classifier_scheduler serve`` (EASY-FCFS, a fresh process, as under a real Batsim) is driven by
``batsim-peer`` (the embedded engine, in this process) over loopback TCP (``bench_socket.serve_run``) on:

- KTH-SP2: the reference workload and platform (``../shared/reference-schedules/KTH-SP2/``, 100 machines);
- CEA-Curie: the first ``--lines`` lines (default 40,000) of ``../shared/workloads/CEA-Curie-2011-2.1-cln.swf.gz``
  (93,312 machines), converted with ``convert`` into a temporary folder (never into the repository).

The runs are interleaved over ``--repeat`` rounds. Measured: the ``serve`` process's own CPU (user + system,
``os.wait4``; best of the rounds) and peak RSS, per job and per Batsim message, and CEA-Curie's CPU per job as a
ratio to KTH-SP2's. Target (issue 40): at most 2x. Without the shared folder it says so and exits (status 0).

    python benchmarks/bench_serve_scale.py [--repeat 3] [--lines 40000]
"""

from __future__ import annotations

import argparse
import gzip
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_socket import serve_run  # noqa: E402
from common import REPO, machine_line, markdown_table, require_shared, run_child, seconds  # noqa: E402

from batsim_classifier_scheduler.platforms import read_platform  # noqa: E402
from batsim_classifier_scheduler.workloads import load_workload  # noqa: E402

KTH = "reference-schedules/KTH-SP2"
CURIE = "workloads/CEA-Curie-2011-2.1-cln.swf.gz"
TARGET = 2.0


def curie_slice(trace: Path, lines: int, scratch: Path) -> tuple[Path, Path]:
    """The first ``lines`` lines of ``trace`` converted to a Batsim workload and platform in ``scratch``."""
    swf = scratch / "curie.swf"
    with gzip.open(trace, "rt") as source, open(swf, "w") as out:
        for number, line in enumerate(source):
            if number >= lines:
                break
            out.write(line)
    workload, platform = scratch / "curie.json", scratch / "curie.xml"
    run_child([sys.executable, "-m", "batsim_classifier_scheduler", "convert", str(swf), "-o", str(workload),
               "--platform-out", str(platform)], cwd=REPO)
    return workload, platform


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=3, help="rounds (default 3)")
    parser.add_argument("--lines", type=int, default=40_000, help="CEA-Curie lines to keep (default 40000)")
    args = parser.parse_args(argv)
    kth, curie = require_shared(KTH, CURIE)
    with tempfile.TemporaryDirectory(prefix="bench_serve_scale_") as scratch:
        workload, platform = curie_slice(curie, args.lines, Path(scratch))
        cases = {"KTH-SP2": (load_workload(kth / "workload.json.gz"), read_platform(kth / "platform.xml")),
                 f"CEA-Curie ({args.lines:,} lines)": (load_workload(workload), read_platform(platform))}
        runs: dict[str, list] = {name: [] for name in cases}
        for _ in range(args.repeat):  # interleaved: a slow spell of the machine hits both alike
            for name, (jobs, machines) in cases.items():
                runs[name].append(serve_run(REPO, jobs, machines.nb_compute_hosts)[0])
    best = {name: min(values, key=lambda run: run.cpu) for name, values in runs.items()}
    per_job = {name: run.cpu / len(cases[name][0].jobs) for name, run in best.items()}
    base = per_job["KTH-SP2"]
    rows = []
    for name, run in best.items():
        jobs, machines = len(cases[name][0].jobs), cases[name][1].nb_compute_hosts
        rows.append([name, f"{machines:,}", f"{jobs:,}", f"{run.messages:,}", seconds(run.cpu),
                     f"{per_job[name] * 1e6:.0f}", f"{run.cpu / run.messages * 1e6:.0f}",
                     f"{per_job[name] / base:.2f}x", f"{run.rss_mb:.0f} MiB", f"{run.rss_mb * 1024 / jobs:.2f}"])
    print(f"# serve (EASY-FCFS) driven by batsim-peer ({machine_line()}; best of {args.repeat}, interleaved)\n")
    print(markdown_table(["workload", "machines", "jobs", "messages", "serve CPU", "µs / job", "µs / message",
                          "vs KTH-SP2", "peak RSS", "kB / job"], rows))
    curie_ratio = max(per_job[name] / base for name in per_job if name != "KTH-SP2")
    print(f"\nTarget (issue 40): CEA-Curie's CPU per job at most {TARGET:g}x KTH-SP2's: "
          + ("yes" if curie_ratio <= TARGET else "**no**") + f" ({curie_ratio:.2f}x).")
    return 0


if __name__ == "__main__":
    sys.exit(main())
