"""``simulate`` against ``batsim-peer`` + ``serve`` on whole traces: every row of ``_jobs.csv`` (issue 29).

For each trace (the archive's SWF traces in ``../shared/workloads/``, converted with ``convert`` into a
temporary folder, with their platform), variant and policy, it runs, each in its own process, as a user
would:

- ``python -m batsim_classifier_scheduler simulate TRACE.json --platform TRACE.xml --variant V --policy P -e sim``;
- ``python -m batsim_classifier_scheduler serve --variant V --policy P`` on a free loopback port, driven by
  ``python -m batsim_classifier_scheduler batsim-peer -p TRACE.xml -w TRACE.json -e peer --enable-dynamic-jobs`` (the flag
  the safeguard needs, as the README runs Batsim; ``--batsim-flags`` adds others, e.g.
  ``--enable-profile-reuse``; with ``--acknowledge-dynamic-jobs`` simulate is given it too);

then compares the two ``_jobs.csv`` files: byte for byte, and, where they differ, the share of jobs that
start at the same time and the first start that differs. It prints a Markdown table and exits 1 if any
pair differs. This is a check, not a timing: it takes about an hour for the default grid on a 2-core
machine (HPC2N's socket runs are the longest).

    python benchmarks/check_serve_equals_simulate.py [--traces kth,sdsc,hpc2n] [--policies fcfs,spf]
        [--variants base,classification-idempotent,...] [--batsim-flags=--enable-profile-reuse]
"""

from __future__ import annotations

import argparse
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import REPO, child_env, markdown_table, require_shared

import pandas as pd

TRACES = {
    "kth": "KTH-SP2-1996-2.1-cln.swf.gz",
    "sdsc": "SDSC-SP2-1998-4.2-cln.swf.gz",
    "hpc2n": "HPC2N-2002-2.2-cln.swf.gz",
}
#: The README quick start's variants, and a preset (``--variant FILE.json:NAME``).
VARIANTS = ["base", "classification-idempotent", "class-clairvoyant", "classification-ordered",
            "experiments/presets/variants.json:classification-tolerant"]


def scheduler(*arguments: object, **popen: object) -> subprocess.Popen:
    """``python -m batsim_classifier_scheduler ARGUMENTS`` with this checkout first on the path."""
    return subprocess.Popen([sys.executable, "-m", "batsim_classifier_scheduler", *map(str, arguments)], cwd=REPO, env=child_env(),
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, **popen)


def finished(process: subprocess.Popen, what: str) -> None:
    """Wait for ``process``; fail with its last error lines if it did not exit 0."""
    _, err = process.communicate()
    if process.returncode != 0:
        raise RuntimeError(f"{what} failed ({process.returncode}): {err.decode(errors='replace')[-1500:]}")


def free_endpoint() -> str:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return f"tcp://127.0.0.1:{probe.getsockname()[1]}"


def convert(trace: Path, folder: Path) -> tuple[Path, Path]:
    """The trace as a Batsim JSON workload and its platform, written into ``folder``."""
    workload, platform = folder / (trace.name.split(".")[0] + ".json"), folder / (trace.name.split(".")[0] + ".xml")
    finished(scheduler("convert", trace, "-o", workload, "--platform-out", platform), f"convert {trace.name}")
    return workload, platform


def compare(peer: Path, simulated: Path) -> tuple[bool, int, int, float, str]:
    """(identical bytes, rows under serve, rows under simulate, share of equal starts, first differing start)."""
    identical = peer.read_bytes() == simulated.read_bytes()
    a, b = (pd.read_csv(path, dtype={"job_id": str}).set_index("job_id") for path in (peer, simulated))
    starts = a.starting_time.to_frame("serve").join(b.starting_time.to_frame("simulate"), how="outer")
    equal = starts.serve.eq(starts.simulate) | (starts.serve.isna() & starts.simulate.isna())
    first = starts[~equal].min(axis=1).min() if not equal.all() else None
    return identical, len(a), len(b), float(equal.mean()), "" if first is None else f"{first:,.0f} s"


def one_pair(label: str, workload: Path, platform: Path, variant: str, policy: str, flags: list[str],
             folder: Path) -> list:
    stem = folder / f"{workload.stem}_{variant.rpartition(':')[2]}_{policy}"
    started = time.perf_counter()
    simulate = scheduler("simulate", workload, "--platform", platform, "--variant", variant, "--policy", policy,
                         "-e", f"{stem}_sim", "--no-progress",
                         *(["--acknowledge-dynamic-jobs"] if "--acknowledge-dynamic-jobs" in flags else []))
    finished(simulate, f"simulate {variant} {policy}")
    endpoint = free_endpoint()
    serve = scheduler("serve", "-s", endpoint, "--variant", variant, "--policy", policy)
    peer = scheduler("batsim-peer", "-p", platform, "-w", workload, "-e", f"{stem}_peer", "-s", endpoint, *flags)
    finished(peer, f"batsim-peer {variant} {policy}")
    finished(serve, f"serve {variant} {policy}")
    identical, rows_serve, rows_sim, equal, first = compare(Path(f"{stem}_peer_jobs.csv"), Path(f"{stem}_sim_jobs.csv"))
    return [label, variant, policy, f"{rows_sim:,}", f"{rows_serve:,}", "yes" if identical else "**no**",
            f"{equal:.2%}", first or "–", f"{time.perf_counter() - started:.0f} s"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--traces", default=",".join(TRACES), help=f"comma-separated, of {', '.join(TRACES)}")
    parser.add_argument("--variants", default=",".join(VARIANTS))
    parser.add_argument("--policies", default="fcfs,spf")
    parser.add_argument("--batsim-flags", default="", help="batsim-peer flags beyond --enable-dynamic-jobs")
    args = parser.parse_args()
    names = args.traces.split(",")
    traces = dict(zip(names, require_shared(*(f"workloads/{TRACES[name]}" for name in names))))
    flags = ["--enable-dynamic-jobs", *args.batsim_flags.split()]
    rows, failures = [], 0
    with tempfile.TemporaryDirectory(prefix="serve_equals_simulate_") as scratch:
        for label, trace in traces.items():
            workload, platform = convert(trace, Path(scratch))
            for variant in args.variants.split(","):
                for policy in args.policies.split(","):
                    rows.append(one_pair(label, workload, platform, variant, policy, flags, Path(scratch)))
                    failures += rows[-1][5] != "yes"
                    print(" | ".join(rows[-1]), file=sys.stderr, flush=True)
    print(f"batsim-peer flags: {' '.join(flags)}\n")
    print(markdown_table(["trace", "variant", "policy", "rows (simulate)", "rows (serve)", "identical _jobs.csv",
                          "equal starts", "first difference", "time"], rows))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
