"""Every archive trace against a fixed baseline revision, trace by trace, in the same run (issue 49).

EASY-FCFS base (``python -m batsim_classifier_scheduler simulate TRACE -e ...``) on each trace, by this checkout and by the baseline
revision (``--baseline``, default ``bcd199b``: main before the scale round; exported with ``git archive``), each run
a fresh process (its own CPU time, user + system, and peak RSS through ``os.wait4``), the two revisions one after the
other in each of ``--repeat`` rounds (their order alternating), bytecode kept between runs (a first run on a short
slice of KTH-SP2 compiles it, not measured). Each trace is judged against the baseline's run of the same trace,
never against another trace. Per trace: CPU best and median of each revision, the ratio of the bests and of the
medians, peak RSS per job (the whole peak, and the part above the start-up run's peak: the interpreter, the
imports), and whether the two ``_jobs.csv`` are the same, byte for byte.

Traces, read from the team's shared folder beside the checkout at run time (never copied into the repository):
KTH-SP2 (100 processors), SDSC-SP2 (128), HPC2N (240), RICC-2010-2 (8,192; its copy has no header: ``--nb-res
8192``), CEA-Curie-2011-2.1-cln (93,312). ``--lines N`` runs the first N lines of each instead of the whole traces;
RICC and CEA-Curie run ``--repeat-large`` rounds (default 1: about four minutes of CPU for the two revisions).

``--classifier`` adds classification-idempotent against base (this checkout, same rounds) on SDSC-SP2 and HPC2N: the
CPU of scikit-learn's ``fit`` (``BaseForest.fit``) and of its import, each timed in the child with
``time.process_time``, apart from the rest of the run, as a ratio to base's whole run; and that rest split in two by a
third run, ``class-clairvoyant --safeguard kill`` (perfect classes: the two queues, the metadata and the safeguard's
calls, but no forest and no job killed): the simulation under the classes, and the classifier's rest (features,
history, encoding, predictions, and the kills and retries the forest's errors cause). ``--serve`` adds ``serve``
(EASY-FCFS, its own process) driven by ``batsim-peer`` (the embedded Batsim side, in another process) over loopback
TCP on KTH-SP2, this checkout against the baseline: serve's own CPU per Batsim message, same ``_jobs.csv`` checked.

Bars (issue 49): KTH-SP2, SDSC-SP2, HPC2N at most 0.9x the baseline's CPU; RICC and CEA-Curie at most 0.5x; peak
memory at most 2 kB per job; classification-idempotent's CPU outside ``fit`` at most 2x base's; serve at most 0.9x.

    python benchmarks/bench_baseline.py [--baseline bcd199b] [--traces KTH-SP2,SDSC-SP2,HPC2N,RICC,CEA-Curie]
        [--repeat 3] [--repeat-large 1] [--lines N] [--classifier] [--serve]
"""

from __future__ import annotations

import argparse
import filecmp
import gzip
import json
import shutil
import socket
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import (REPO, SHARED, MeasuredChild, child_env, export_revision, machine_line,  # noqa: E402
                    markdown_table, run_child)

#: (name, file under ``SHARED/workloads``, machine size to give or None for the header's, CPU bar, large)
TRACES = [
    ("KTH-SP2", "KTH-SP2-1996-2.1-cln.swf.gz", None, 0.9, False),
    ("SDSC-SP2", "SDSC-SP2-1998-4.2-cln.swf.gz", None, 0.9, False),
    ("HPC2N", "HPC2N-2002-2.2-cln.swf.gz", None, 0.9, False),
    ("RICC", "RICC-2010-2.swf.gz", 8192, 0.5, True),
    ("CEA-Curie", "CEA-Curie-2011-2.1-cln.swf.gz", None, 0.5, True),
]
MEMORY_BAR_KB = 2.0
CLASSIFIER_TRACES, CLASSIFIER_VARIANT, CLASSIFIER_BAR = ("SDSC-SP2", "HPC2N"), "classification-idempotent", 2.0
#: The classifier run's simulation without its forest: perfect classes (none killed) under the same safeguard.
SAFEGUARD_ONLY = "class-clairvoyant --safeguard kill"
SERVE_BAR = 0.9

#: Runs ``python -m batsim_classifier_scheduler ARGS`` with scikit-learn's forest ``fit`` timed (process CPU), written to a JSON file.
_TIMED_FIT = """
import json, runpy, sys, time
report, sys.argv = sys.argv[1], ["scheduler", *sys.argv[2:]]
started = time.process_time()
from sklearn.ensemble._forest import BaseForest
spent = [0.0, 0, time.process_time() - started]  # fit's CPU, fits, the import's CPU
fit = BaseForest.fit
def timed(self, *args, **kwargs):
    started = time.process_time()
    try:
        return fit(self, *args, **kwargs)
    finally:
        spent[0] += time.process_time() - started
        spent[1] += 1
BaseForest.fit = timed
import batsim_classifier_scheduler.cli as cli
command = cli.main
def main():
    try:
        return command()
    finally:
        with open(report, "w") as out:
            json.dump(spent, out)
cli.main = main
runpy.run_module("batsim_classifier_scheduler", run_name="__main__")  # ends as base's run does
"""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline", default="bcd199b", help="the revision every trace is judged against "
                                                             "(default bcd199b)")
    parser.add_argument("--traces", default=",".join(name for name, *_ in TRACES),
                        help="comma-separated, of " + ", ".join(name for name, *_ in TRACES))
    parser.add_argument("--repeat", type=int, default=3, help="rounds of the smaller traces (default 3)")
    parser.add_argument("--repeat-large", type=int, default=1, help="rounds of RICC and CEA-Curie (default 1)")
    parser.add_argument("--lines", type=int, help="the first LINES lines of each trace (default: whole traces)")
    parser.add_argument("--classifier", action="store_true",
                        help=f"{CLASSIFIER_VARIANT}'s CPU outside scikit-learn's fit, against base")
    parser.add_argument("--serve", action="store_true", help="serve under batsim-peer on KTH-SP2 vs the baseline")
    parser.add_argument("--no-simulate", action="store_true", help="skip the base runs of every trace")
    parser.add_argument("--outputs", metavar="DIR", help="keep this checkout's TRACE_jobs.csv of each base run in DIR")
    args = parser.parse_args(argv)
    wanted = [name.strip() for name in args.traces.split(",") if name.strip()]
    traces = [trace for trace in TRACES if trace[0] in wanted and (SHARED / "workloads" / trace[1]).exists()]
    if not traces:
        print(f"skipped: none of {', '.join(wanted)} in {SHARED / 'workloads'}")
        return 0
    print(f"# Every trace against `{args.baseline}` ({machine_line()})\n")
    with tempfile.TemporaryDirectory(prefix="bench_baseline_") as scratch:
        folder = Path(scratch)
        (folder / "base").mkdir()
        roots = {"this checkout": REPO, args.baseline: export_revision(args.baseline, folder / "base")}
        envs = {label: child_env(root, bytecode=folder / f"pyc{number}")
                for number, (label, root) in enumerate(roots.items())}
        startup = _warm_up(roots, envs, folder)
        if not args.no_simulate:
            _simulate_table(args, traces, roots, envs, startup, folder)
        if args.classifier:
            _classifier_table(args, [trace for trace in traces if trace[0] in CLASSIFIER_TRACES], envs, folder)
        if args.serve:
            _serve_table(args, roots, envs, folder)
    return 0


def _warm_up(roots: dict[str, Path], envs: dict[str, dict], folder: Path) -> dict[str, float]:
    """Each revision compiles its bytecode on KTH-SP2's first 2,000 lines; the peak RSS of such a run (MiB): the
    interpreter, the imports and a small run, what a run's memory per job is counted above."""
    small = _slice(SHARED / "workloads" / TRACES[0][1], 2000, folder / "warm.swf")
    peaks = {}
    for label, root in roots.items():
        peaks[label] = min(run_child([sys.executable, "-m", "batsim_classifier_scheduler", "simulate", str(small), "--no-progress",
                                      "-e", str(folder / "warm")], cwd=root, env=envs[label]).max_rss_mb
                           for _ in range(2))
    return peaks


def _simulate_table(args, traces, roots, envs, startup, folder: Path) -> None:
    rows = []
    for name, file, nb_res, bar, large in traces:
        trace = SHARED / "workloads" / file
        if args.lines:
            trace = _slice(trace, args.lines, folder / f"{name}.swf")
        cpus: dict[str, list[float]] = {label: [] for label in roots}
        peaks: dict[str, float] = {label: float("inf") for label in roots}
        rounds = args.repeat_large if large else args.repeat
        for number in range(rounds):
            order = list(roots) if number % 2 == 0 else list(roots)[::-1]  # (alternating: neither always runs first)
            for label in order:
                argv = [sys.executable, "-m", "batsim_classifier_scheduler", "simulate", str(trace), "--no-progress",
                        "-e", str(folder / f"{name}_{_slug(label)}")]
                if nb_res:
                    argv += ["--nb-res", str(nb_res)]
                run = run_child(argv, cwd=roots[label], env=envs[label])
                cpus[label].append(run.cpu)
                peaks[label] = min(peaks[label], run.max_rss_mb)
        outputs = [folder / f"{name}_{_slug(label)}_jobs.csv" for label in roots]
        same = filecmp.cmp(*outputs, shallow=False)
        if args.outputs:
            Path(args.outputs).mkdir(parents=True, exist_ok=True)
            shutil.copyfile(outputs[0], Path(args.outputs) / f"{name}_jobs.csv")
        jobs = json.loads((folder / f"{name}_{_slug('this checkout')}_summary.json").read_text())["workload"]["jobs"]
        this, base = "this checkout", args.baseline
        best = {label: min(values) for label, values in cpus.items()}
        median = {label: statistics.median(values) for label, values in cpus.items()}
        kb = {label: peaks[label] * 1024 / jobs for label in roots}
        above = {label: (peaks[label] - startup[label]) * 1024 / jobs for label in roots}
        meets = best[this] <= bar * best[base] and kb[this] <= MEMORY_BAR_KB
        rows.append([name, f"{jobs:,}", str(rounds), f"{best[this]:.2f} s", f"{best[base]:.2f} s",
                     f"**{best[this] / best[base]:.2f}x**", f"{median[this] / median[base]:.2f}x",
                     f"{peaks[this]:.0f} MiB", f"{kb[this]:.2f} ({kb[base]:.2f})",
                     f"{above[this]:.2f} ({above[base]:.2f})", "yes" if same else "**NO**",
                     f"≤ {bar}x, ≤ {MEMORY_BAR_KB:g} kB: " + ("yes" if meets else "**no**")])
        print(f"{name}: {best[this]:.2f} s against {best[base]:.2f} s", file=sys.stderr, flush=True)
    lines = f"first {args.lines:,} lines" if args.lines else "whole traces"
    print(f"EASY-FCFS base, {lines}; CPU (user + system) best of the rounds, peak RSS the smallest; start-up run's "
          f"peak (KTH-SP2's first 2,000 lines): {startup['this checkout']:.0f} MiB "
          f"({startup[args.baseline]:.0f} MiB for `{args.baseline}`).\n")
    print(markdown_table(["trace", "jobs", "rounds", "CPU", f"CPU `{args.baseline}`", "ratio (best)", "ratio (median)",
                          "peak RSS", f"kB / job (`{args.baseline}`)", "kB / job above start-up", "same _jobs.csv",
                          "bars"], rows))
    print()


def _classifier_table(args, traces, envs, folder: Path) -> None:
    rows = []
    env = envs["this checkout"]
    for name, file, nb_res, _, _ in traces:
        trace = SHARED / "workloads" / file
        if args.lines:
            trace = _slice(trace, args.lines, folder / f"{name}.swf")
        base_cpu, whole_cpu, fit_cpu, import_cpu, safeguard_cpu = [], [], [], [], []
        for _ in range(args.repeat):
            argv = [sys.executable, "-m", "batsim_classifier_scheduler", "simulate", str(trace), "--no-progress", "-e",
                    str(folder / f"{name}_base")]
            base_cpu.append(run_child(argv, cwd=REPO, env=env).cpu)
            cpu, _, imported = _timed_fit(trace, SAFEGUARD_ONLY, env, folder / f"{name}_safeguard")
            safeguard_cpu.append(cpu - imported)
            cpu, (spent, fits), imported = _timed_fit(trace, CLASSIFIER_VARIANT, env, folder / f"{name}_classified")
            whole_cpu.append(cpu)
            fit_cpu.append(spent)
            import_cpu.append(imported)
        base = min(base_cpu)
        outside = [whole - fit for whole, fit in zip(whole_cpu, fit_cpu)]
        rest = [whole - fit - imported - min(safeguard_cpu)
                for whole, fit, imported in zip(whole_cpu, fit_cpu, import_cpu)]
        rows.append([name, f"{base:.2f} s", f"{min(whole_cpu):.2f} s",
                     f"{min(fit_cpu):.2f} s ({fits} fits)", f"{min(import_cpu):.2f} s", f"{min(outside):.2f} s",
                     f"**{min(outside) / base:.2f}x**", f"≤ {CLASSIFIER_BAR:g}x: "
                     + ("yes" if min(outside) <= CLASSIFIER_BAR * base else "**no**"),
                     f"{min(safeguard_cpu) / base:.2f}x", f"**{min(rest) / base:.2f}x**",
                     "≤ 1x: " + ("yes" if min(rest) <= base else "**no**")])
    print(f"{CLASSIFIER_VARIANT} against base (this checkout, {args.repeat} rounds interleaved, best of each): "
          "scikit-learn's fit and its import apart (BaseForest.fit and the import, process CPU in the child). "
          f"The classes and the safeguard without a forest: `{SAFEGUARD_ONLY}` (perfect classes, so no job is "
          "killed, under the same safeguard's calls), less its import. The classifier's rest: the run less its fit, "
          "its import and that run (features, history, encoding, predictions, and the kills and retries the "
          "forest's errors cause).\n")
    print(markdown_table(["trace", "base CPU", f"{CLASSIFIER_VARIANT} CPU", "of it, fit", "of it, import",
                          "outside fit", "outside fit / base", "bar", "classes and safeguard, no forest / base",
                          "classifier's rest / base", "issue's aim"], rows))
    print()


def _timed_fit(trace: Path, variant: str, env: dict, prefix: Path) -> tuple[float, tuple[float, int], float]:
    """One ``simulate`` run of ``variant`` (its options after ``--variant``) with scikit-learn's fit timed in the
    child: its CPU, ``(fit's CPU, fits)`` and the CPU of scikit-learn's import."""
    report = prefix.with_name("fit.json")
    argv = [sys.executable, "-c", _TIMED_FIT, str(report), "simulate", str(trace), "--variant", *variant.split(),
            "--no-progress", "-e", str(prefix)]
    cpu = run_child(argv, cwd=REPO, env=env).cpu
    spent, fits, imported = json.loads(report.read_text())
    return cpu, (spent, fits), imported


def _serve_table(args, roots, envs, folder: Path) -> None:
    """serve driven by batsim-peer (each its own process) on KTH-SP2, this checkout and the baseline."""
    trace = SHARED / "workloads" / TRACES[0][1]
    if args.lines:
        trace = _slice(trace, args.lines, folder / "KTH-SP2.swf")
    run_child([sys.executable, "-m", "batsim_classifier_scheduler", "convert", str(trace), "-o", str(folder / "kth.json"),
               "--platform-out", str(folder / "kth.xml")], cwd=REPO, env=envs["this checkout"])
    cpus: dict[str, list[float]] = {label: [] for label in roots}
    messages, outputs = {}, {}
    for number in range(args.repeat + 1):  # (a first round not measured)
        order = list(roots) if number % 2 == 0 else list(roots)[::-1]
        for label in order:
            cpu, messages[label], outputs[label] = _serve_run(roots[label], envs, label, folder)
            if number:
                cpus[label].append(cpu)
    same = filecmp.cmp(*outputs.values(), shallow=False)
    this, base = "this checkout", args.baseline
    best = {label: min(values) for label, values in cpus.items()}
    rows = [[label, f"{messages[label]:,}", f"{best[label]:.2f} s", f"{best[label] / messages[label] * 1e6:.1f} µs",
             f"{best[label] / best[base]:.2f}x", f"{statistics.median(cpus[label]) / statistics.median(cpus[base]):.2f}x"]
            for label in roots]
    print(f"`serve` (EASY-FCFS) driven by `batsim-peer` over loopback TCP on KTH-SP2 (converted), each its own process, "
          f"{args.repeat} rounds interleaved; serve's own CPU (user + system); same _jobs.csv: "
          f"{'yes' if same else '**NO**'}; bar ≤ {SERVE_BAR}x: "
          f"{'yes' if best[this] <= SERVE_BAR * best[base] else '**no**'}.\n")
    print(markdown_table(["serve", "messages", "CPU best", "CPU / message", "ratio (best)", "ratio (median)"], rows))
    print()


def _serve_run(root: Path, envs: dict, label: str, folder: Path) -> tuple[float, int, Path]:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        endpoint = f"tcp://127.0.0.1:{probe.getsockname()[1]}"
    prefix = folder / f"serve_{_slug(label)}"
    with tempfile.TemporaryFile() as err:
        server = MeasuredChild([sys.executable, "-m", "batsim_classifier_scheduler", "serve", "-s", endpoint, "--timeout", "600"],
                               cwd=root, env=envs[label], stderr=err)
        try:
            peer = run_child([sys.executable, "-m", "batsim_classifier_scheduler", "batsim-peer", "-w", str(folder / "kth.json"), "-p",
                              str(folder / "kth.xml"), "-s", endpoint, "-e", str(prefix), "--timeout", "600"],
                             cwd=REPO, env=envs["this checkout"], stderr=True)
        except BaseException:
            server.kill()
            raise
        code, usage = server.wait()
        if code != 0:
            err.seek(0)
            raise RuntimeError(f"serve ({label}) failed:\n{err.read().decode(errors='replace')[-2000:]}")
    summary = json.loads(Path(f"{prefix}_summary.json").read_text()) if Path(f"{prefix}_summary.json").exists() else {}
    messages = summary.get("messages") or _messages(peer.stdout)
    return usage.cpu, messages, Path(f"{prefix}_jobs.csv")


def _messages(text: str) -> int:
    """The number of Batsim messages batsim-peer reports (0 if it does not say)."""
    for line in text.splitlines():
        if "message" in line:
            digits = "".join(ch for ch in line.split("message")[0].split()[-1] if ch.isdigit())
            if digits:
                return int(digits)
    return 0


def _slice(trace: Path, lines: int, destination: Path) -> Path:
    """The first ``lines`` lines of ``trace`` (header comments count), written to ``destination``."""
    with gzip.open(trace, "rt") as source, open(destination, "w") as out:
        for number, line in enumerate(source):
            if number >= lines:
                break
            out.write(line)
    return destination


def _slug(label: str) -> str:
    return label.replace(" ", "_")


if __name__ == "__main__":
    sys.exit(main())
