"""The decision core alone: one ``simulate`` run's calls to ``DecisionCore.decide``, played back to other revisions.

This checkout runs the ``simulate`` command once and records every ``decide(now, events)`` call and its reply
(events, jobs and decisions kept as class names and field values, so that a revision whose classes differ a
little can rebuild them). Each revision (this checkout and each ``--baseline``, exported with ``git archive``)
then replays the calls to fresh cores of its own, each round in a fresh process, the revisions interleaved:
the CPU time of the calls alone (``time.process_time``, the cyclic collector paused as ``simulate`` pauses it),
best and median, and whether every reply is the recorded one. ``--instructions`` adds each revision's
instruction count for the calls alone (valgrind ``cachegrind``, one playback less a run that builds everything
but makes no call; ``PYTHONHASHSEED=0``, ``setarch -R``: they repeat to the instruction). Issue 30 measured it so:

    python benchmarks/bench_core.py --baseline 65a13a3 --baseline main --instructions -- \\
        ../shared/reference-schedules/KTH-SP2/workload.json.gz \\
        --platform ../shared/reference-schedules/KTH-SP2/platform.xml --policy fcfs

The arguments after ``--`` follow ``simulate`` (``--no-progress`` is added). A revision reads them with its own
command line, so it must know every option given.
"""

from __future__ import annotations

import argparse
import dataclasses
import gc
import json
import os
import pickle
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import (REPO, absolute_arguments, add_baselines_option, child_env, machine_line,  # noqa: E402
                    markdown_table, ratio, revision_roots)


# --- in the children: record, replay -------------------------------------------------------------


def encode(value):
    """Events, decisions and jobs as (class name, fields), nested; a job's extra fields as a dict."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        if type(value).__name__ == "Job":
            return ("Job", value.id, value.subtime, value.res, value.walltime, value.profile, value.runtime,
                    dict(value.extras), type(value.extras).__name__)
        return (type(value).__name__, {f.name: encode(getattr(value, f.name)) for f in dataclasses.fields(value)})
    if isinstance(value, (list, tuple)):
        return type(value)(encode(item) for item in value)
    return value


def decoder():
    """:func:`encode` undone with the classes of the revision on the path (fields it does not know dropped)."""
    from batsim_classifier_scheduler.core import messages as events, job as job_module

    job_fields, indexes = getattr(job_module, "JobFields", None), {}

    def decode(value):
        if isinstance(value, tuple) and value and value[0] == "Job":
            _, job_id, subtime, res, walltime, profile, runtime, extras, kind = value
            if kind == "JobFields" and job_fields is not None:  # as the embedded engine gives static jobs
                index = indexes.setdefault(tuple(extras), {name: i for i, name in enumerate(extras)})
                extras = job_fields(index, tuple(extras.values()))
            return job_module.Job(job_id, subtime, res, walltime, profile, runtime, extras)
        if isinstance(value, tuple) and len(value) == 2 and isinstance(value[1], dict):
            cls = getattr(events, value[0])
            known = {f.name for f in dataclasses.fields(cls)}
            return cls(**{name: decode(item) for name, item in value[1].items() if name in known})
        if isinstance(value, list):
            return [decode(item) for item in value]
        return value

    return decode


class _Stop(BaseException):
    """Raised by the patched ``run_one`` with the config the command line made."""


def config_of(arguments: list[str]):
    """The scheduler config this revision's ``simulate`` makes of ``arguments`` (stopped before simulating)."""
    import batsim_classifier_scheduler.cli.simulate as command
    from batsim_classifier_scheduler.cli import main

    def stop(workload, config, *args, **kwargs):
        raise _Stop(config)

    command.run_one = stop
    try:
        with open(os.devnull, "w") as devnull:
            sys.stdout, stdout = devnull, sys.stdout
            try:
                main(["simulate", *arguments, "--no-progress"])
            finally:
                sys.stdout = stdout
    except _Stop as stopped:
        return stopped.args[0]
    raise SystemExit("simulate ended before simulating")


def record(arguments: list[str], path: str) -> None:
    from batsim_classifier_scheduler.cli import main
    from batsim_classifier_scheduler.core.decision import DecisionCore

    calls = []
    decide = DecisionCore.decide

    def recorder(self, now, events):
        events = list(events)
        request = encode(events)
        reply = decide(self, now, events)
        calls.append((now, request, encode(list(reply))))
        return reply

    DecisionCore.decide = recorder
    with open(os.devnull, "w") as devnull:
        sys.stdout, stdout = devnull, sys.stdout
        try:
            status = main(["simulate", *arguments, "--no-progress"])
        finally:
            sys.stdout = stdout
    if status:
        raise SystemExit(f"simulate exited with {status}")
    with open(path, "wb") as stream:
        pickle.dump({"arguments": arguments, "calls": calls}, stream, protocol=pickle.HIGHEST_PROTOCOL)


def replay(path: str, calls_made: bool = True, check: bool = True) -> dict:
    """Play the recorded calls back to a fresh core (none with ``calls_made`` false); ``check``: compare the
    replies with the recorded ones (after the clock)."""
    with open(path, "rb") as stream:
        recorded = pickle.load(stream)
    config = config_of(recorded["arguments"])
    try:
        from batsim_classifier_scheduler.compose import build_core
    except ImportError:  # before the composition root: the core built its own parts
        from batsim_classifier_scheduler.core.decision import DecisionCore as build_core
    decode = decoder()
    calls = [(now, decode(events)) for now, events, _ in recorded["calls"]]
    core = build_core(config)
    decide, replies = core.decide, []
    gc.collect()
    gc.disable()
    started = time.process_time()
    if calls_made:
        replies = [decide(now, events) for now, events in calls]
    cpu = time.process_time() - started
    differing = sum(encode(list(reply)) != expected
                    for reply, (_, _, expected) in zip(replies, recorded["calls"])) if check else None
    return {"cpu": cpu, "calls": len(replies), "differing": differing}


# --- the orchestrator ------------------------------------------------------------------------------


def child(root: Path, *arguments: str, valgrind: bool = False) -> subprocess.CompletedProcess:
    command = [sys.executable, __file__, "--root", str(root), *arguments]
    env = child_env(root)
    env["OPENBLAS_NUM_THREADS"] = "1"
    if valgrind:
        command = ["setarch", "-R", "valgrind", "--tool=cachegrind", "--cache-sim=no",
                   "--cachegrind-out-file=/dev/null", *command]
    return subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, check=True)


def instructions(root: Path, record_path: Path) -> int:
    """The instructions of the calls alone: a playback less a run that makes no call."""
    counts = []
    for mode in ("--count", "--build-only"):
        log = child(root, mode, str(record_path), valgrind=True).stderr
        counts.append(int(next(line for line in log.splitlines() if "I" in line and "refs:" in line)
                          .split(":")[1].replace(",", "").strip()))
    return counts[0] - counts[1]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_baselines_option(parser)
    parser.add_argument("--repeat", type=int, default=5, help="playbacks per revision (default 5)")
    parser.add_argument("--instructions", action="store_true", help="count instructions too (valgrind)")
    parser.add_argument("--root", help=argparse.SUPPRESS)
    parser.add_argument("--record", help=argparse.SUPPRESS)
    parser.add_argument("--replay", help=argparse.SUPPRESS)
    parser.add_argument("--count", help=argparse.SUPPRESS)
    parser.add_argument("--build-only", help=argparse.SUPPRESS)
    parser.add_argument("simulate", nargs="*", help="simulate's arguments (after --)")
    options = parser.parse_args(argv)
    if options.root:  # a child: the revision's checkout first (common put this one on the path)
        sys.path.insert(0, options.root)
    if options.record:
        record(options.simulate, options.record)
        return 0
    if options.replay:
        print(json.dumps(replay(options.replay)))
        return 0
    if options.count or options.build_only:  # under valgrind: no check of the replies
        print(json.dumps(replay(options.count or options.build_only, bool(options.count), check=False)))
        return 0
    if options.instructions and not shutil.which("valgrind"):
        parser.error("--instructions needs valgrind")
    with tempfile.TemporaryDirectory(prefix="bench_core_") as scratch:
        folder = Path(scratch)
        roots = revision_roots(options.baseline, folder)
        arguments = absolute_arguments(options.simulate)
        record_path = folder / "calls.pickle"
        child(REPO, "--record", str(record_path), "--", *arguments)
        cpus: dict[str, list[float]] = {name: [] for name in roots}
        same: dict[str, bool] = {}
        for _ in range(options.repeat):
            for name, root in roots.items():
                result = json.loads(child(root, "--replay", str(record_path)).stdout.splitlines()[-1])
                cpus[name].append(result["cpu"])
                same[name] = same.get(name, True) and result["differing"] == 0
                calls = result["calls"]
        counts = {name: instructions(root, record_path) for name, root in roots.items()} \
            if options.instructions else {}
    base = options.baseline[0] if options.baseline else "this checkout"
    rows = []
    for name in roots:
        row = [f"`{name}`", f"{min(cpus[name]):.3f} s", f"{statistics.median(cpus[name]):.3f} s",
               ratio(min(cpus[name]), min(cpus[base])), f"{min(cpus[name]) / calls * 1e6:.2f} µs"]
        if counts:
            row += [f"{counts[name] / 1e6:,.0f} M", ratio(counts[name], counts[base])]
        rows.append(row + ["yes" if same[name] else "**no**"])
    headers = ["revision", "CPU best", "CPU median", f"best vs {base}", "per call"]
    if counts:
        headers += ["instructions", f"vs {base}"]
    print(f"# decide, {calls:,} calls of simulate {' '.join(options.simulate)} "
          f"({machine_line()}; {options.repeat} playbacks each, interleaved)\n")
    print(markdown_table(headers + ["the recorded replies"], rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
