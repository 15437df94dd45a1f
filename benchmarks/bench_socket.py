"""The socket run against the in-process run: what does speaking Batsim over ZeroMQ cost?

``python -m scheduler serve`` (our scheduler, its own process, as with a real Batsim) driven by
``batsim-peer`` (the embedded engine playing Batsim, in this process) over loopback TCP, against
``simulate`` in-process, on the same workload and platform, in the same run. Both give the same
``_jobs.csv`` (checked). Target: the socket run takes at most 3x the in-process run.

A second baseline, also measured in this run, is the transport's floor: a bare pyzmq REQ/REP
ping-pong between two processes, with as many round trips as the simulation has messages and a
typical message, doing nothing else. Whatever the socket run costs above that floor is ours
(JSON encoding and validation on both sides, the decisions themselves).

It also reports the decision latency per message as the server measures it (decode, decide,
encode; median and 99th percentile), on 100 processors and on 24,048 (the same workload with
every request multiplied by 240): the latency must not grow with the machine size.

Workload: the KTH-SP2 reference workload when ``../shared/`` is beside the checkout, else a
20,000-job synthetic one.

    python benchmarks/bench_socket.py [--repeat 3]
"""

from __future__ import annotations

import argparse
import socket
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import zmq  # noqa: E402
from common import REPO, machine_line, markdown_table, ratio, seconds, shared_path  # noqa: E402

from scheduler.config import SchedulerConfig  # noqa: E402
from scheduler.sim.peer import run_peer  # noqa: E402
from scheduler.sim.simulate import simulate  # noqa: E402
from scheduler.workloads import load_workload  # noqa: E402
from scheduler.workloads.synthetic import generate  # noqa: E402


def free_endpoint() -> str:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return f"tcp://127.0.0.1:{probe.getsockname()[1]}"


ECHO = """
import sys, zmq
socket = zmq.Context().socket(zmq.REP)
socket.bind(sys.argv[1])
for _ in range(int(sys.argv[2])):
    socket.send(socket.recv())
"""
MESSAGE = (b'{"now": 3600.0, "events": [{"timestamp": 3600.0, "type": "JOB_COMPLETED", "data": {"job_id": '
           b'"w0!1234", "job_state": "COMPLETED_SUCCESSFULLY", "return_code": 0, "alloc": "0-15"}}]}')


def ping_pong(round_trips: int) -> float:
    """Seconds for ``round_trips`` bare REQ/REP exchanges with another process."""
    endpoint = free_endpoint()
    echo = subprocess.Popen([sys.executable, "-c", ECHO, endpoint, str(round_trips)])
    client = zmq.Context.instance().socket(zmq.REQ)
    client.connect(endpoint)
    started = time.perf_counter()
    for _ in range(round_trips):
        client.send(MESSAGE)
        client.recv()
    elapsed = time.perf_counter() - started
    client.close()
    echo.wait()
    return elapsed


def socket_run(workload, nb_machines):
    endpoint = free_endpoint()
    server = subprocess.Popen([sys.executable, "-m", "scheduler", "serve", "-s", endpoint, "--timeout", "120",
                               "--verbose"], cwd=REPO, stderr=subprocess.PIPE, text=True)
    started = time.perf_counter()
    result = run_peer(workload, endpoint, nb_machines, timeout=120)
    elapsed = time.perf_counter() - started
    _, log = server.communicate(timeout=60)
    return elapsed, result, log.strip().splitlines()[-1]


def in_process_run(workload, nb_machines):
    started = time.perf_counter()
    result, _ = simulate(workload, SchedulerConfig(), nb_machines)
    return time.perf_counter() - started, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    reference = shared_path("reference-schedules", "KTH-SP2", "workload.json.gz")
    if reference:
        workload, name = load_workload(reference), "KTH-SP2"
    else:
        workload, name = generate(20000, weeks=20, nb_res=100, seed=1), "synthetic 20k"
    big = load_workload(reference) if reference else generate(20000, weeks=20, nb_res=100, seed=1)
    big.jobs["res"] *= 240

    rows, latency_rows = [], []
    for label, load, machines in ((f"{name}, 100", workload, 100), (f"{name}, 24,048", big, 24048)):
        local, remote, floor, log = [], [], [], ""
        for _ in range(args.repeat):
            seconds_local, result_local = in_process_run(load, machines)
            seconds_remote, result_remote, log = socket_run(load, machines)
            assert result_remote.jobs.equals(result_local.jobs), "socket and in-process schedules differ"
            floor.append(ping_pong(result_remote.nb_messages))
            local.append(seconds_local)
            remote.append(seconds_remote)
        best_local, best_remote, best_floor = min(local), min(remote), min(floor)
        rows.append([label, seconds(best_local), seconds(best_floor), seconds(best_remote),
                     ratio(best_remote, best_local), ratio(best_remote - best_floor, best_local),
                     "yes" if best_remote <= 3 * best_local else "NO"])
        latency_rows.append([label, result_remote.nb_messages, log])
    print(f"# Socket run vs in-process run ({machine_line()}; best of {args.repeat})\n")
    print(markdown_table(["workload, processors", "in-process", "bare ping-pong (floor)", "serve + batsim-peer",
                          "socket / in-process", "(socket - floor) / in-process", "<= 3x"], rows))
    print("\nThe server's own account (decode + decide + encode per message), last round:\n")
    print(markdown_table(["workload, processors", "messages", "serve's summary line"], latency_rows))


if __name__ == "__main__":
    main()
