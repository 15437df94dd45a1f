"""``serve``'s own work per Batsim message, without the socket: decoding, deciding, encoding.

``bench_socket.py`` measures the whole ``serve`` process under ``batsim-peer``; most of that CPU is the transport's
(pyzmq and the kernel's loopback), which no change to the scheduler moves. This benchmark takes the transport out:
it records the Batsim messages of one EASY-FCFS run (this checkout's engine, encoded as Batsim 4.2.1 sends them),
then plays them, in a fresh process per revision, to that revision's decision-process side: its ``SchedulerCodec``
decodes each message, a fresh ``DecisionCore`` (built as ``serve`` builds it) decides, the codec encodes the reply.
Each child plays the recording twice and times the second pass (CPU, ``time.process_time`` around each part); the
revisions are interleaved over ``--repeat`` rounds and the best of each part is kept. The bare REQ/REP echo's CPU
per message (``bench_socket.echo_cpu``) is printed beside it: the floor that the transport puts under ``serve``.

Workload: the KTH-SP2 reference workload (``../shared/reference-schedules/KTH-SP2/``); without ``../shared/``, a
20,000-job synthetic workload.

    python benchmarks/bench_serve_work.py [--repeat 3] [--baseline 65a13a3]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import (add_baselines_option, child_env, machine_line, markdown_table, ratio,  # noqa: E402
                    revision_roots, run_child, shared_path, synthetic_trace)

#: Plays a recording (one message a line) to the decision-process side of the revision on ``PYTHONPATH``; prints the
#: second pass's CPU seconds per part, as JSON. (Older revisions named the package ``scheduler``.)
PLAYER = """
import gc, json, sys, time
try:
    from batsim_classifier_scheduler.batsim.scheduler_codec import SchedulerCodec
    from batsim_classifier_scheduler.batsim.server import DecisionServer
    from batsim_classifier_scheduler.compose import build_core
except ImportError:  # (the package's name before it was renamed)
    from scheduler.batsim.scheduler_codec import SchedulerCodec
    from scheduler.batsim.server import DecisionServer
    from scheduler.compose import build_core
def make_core(server, events):
    if hasattr(server, "_make_core"):  # (older revisions)
        return server._make_core(events, 0)
    return build_core(server._config(events, 0))
with open(sys.argv[1], "rb") as lines:
    messages = lines.read().splitlines()
clock = time.process_time
for _ in range(2):
    gc.disable()
    server, codec, core = DecisionServer(options={}), SchedulerCodec(), None
    parts = [0.0, 0.0, 0.0]
    for message in messages:
        start = clock()
        now, events = codec.decode(message)
        decoded = clock()
        if core is None:
            core = make_core(server, events)
        decisions = core.decide(now, events)
        decided = clock()
        codec.encode(now, decisions)
        parts[0] += decoded - start
        parts[1] += decided - decoded
        parts[2] += clock() - decided
    del core
    gc.enable()
    gc.collect()
print(json.dumps({"decode": parts[0], "decide": parts[1], "encode": parts[2], "messages": len(messages)}))
"""


def record(workload, nb_machines: int, path: Path) -> int:
    """The Batsim messages of an EASY-FCFS run of ``workload``, one a line in ``path``; how many."""
    from batsim_classifier_scheduler.batsim.scheduler_codec import SchedulerCodec
    from batsim_classifier_scheduler.batsim.server import DecisionServer
    from batsim_classifier_scheduler.compose import build_core
    from batsim_classifier_scheduler.sim.engine import BatsimEngine, TimedReply
    from batsim_classifier_scheduler.sim.peer import batsim_codec

    engine = BatsimEngine(workload, nb_machines)
    batsim, ours, server = batsim_codec(engine), SchedulerCodec(), DecisionServer(options={})
    messages: list[bytes] = []
    cores = []

    def decide(now, events):
        message = batsim.encode(now, events)
        messages.append(message)
        now, decoded = ours.decode(message)
        if not cores:
            cores.append(build_core(server._config(decoded, 0)))
        return TimedReply(*batsim.decode_timed(ours.encode(now, cores[0].decide(now, decoded))))

    engine.run(decide)
    if any(b"\n" in message for message in messages):
        raise RuntimeError("a Batsim message holds a newline: the recording is one message a line")
    path.write_bytes(b"\n".join(messages))
    return len(messages)


def workload_to_record(scratch: Path):
    """``(name, workload, machines)``: KTH-SP2's reference workload, or a synthetic one without ``../shared/``."""
    from batsim_classifier_scheduler.workloads import load_workload

    kth = shared_path("reference-schedules", "KTH-SP2")
    if kth:
        from batsim_classifier_scheduler.platforms import read_platform

        return ("KTH-SP2", load_workload(kth / "workload.json.gz"),
                read_platform(kth / "platform.xml").nb_compute_hosts)
    _, workload = synthetic_trace(20_000, scratch)
    return "synthetic 20,000 jobs", workload, workload.nb_res


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_baselines_option(parser)
    parser.add_argument("--repeat", type=int, default=3, help="rounds (default 3)")
    options = parser.parse_args(argv)
    from bench_socket import echo_cpu

    with tempfile.TemporaryDirectory(prefix="bench_serve_work_") as scratch:
        folder = Path(scratch)
        name, workload, nb_machines = workload_to_record(folder)
        recording = folder / "messages.txt"
        count = record(workload, nb_machines, recording)
        roots = revision_roots(options.baseline, folder)
        best: dict[str, dict[str, float]] = {label: {} for label in roots}
        for _ in range(options.repeat):
            for number, (label, root) in enumerate(roots.items()):
                child = run_child([sys.executable, "-c", PLAYER, str(recording)], cwd=folder,
                                  env=child_env(root, bytecode=folder / f"pyc{number}"))
                parts = json.loads(child.stdout.strip().splitlines()[-1])
                for part in ("decode", "decide", "encode"):
                    best[label][part] = min(best[label].get(part, float("inf")), parts[part])
        floor = echo_cpu(min(count, 20_000)) / min(count, 20_000)
    base = options.baseline[0] if options.baseline else "this checkout"
    rows = []
    for label, parts in best.items():
        total = sum(parts.values())
        rows.append([label, *(f"{parts[part] / count * 1e6:.1f} us" for part in ("decode", "decide", "encode")),
                     f"{total / count * 1e6:.1f} us", ratio(total, sum(best[base].values()))])
    print(f"# serve's own work per Batsim message, {name} ({count:,} messages; {machine_line()}; best of "
          f"{options.repeat}, interleaved)\n")
    print(markdown_table(["serve", "decode", "decide", "encode", "own work", f"vs {base}"], rows))
    print(f"\nThe transport's floor (a bare REQ/REP echo process's own CPU): {floor * 1e6:.1f} us per message.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
