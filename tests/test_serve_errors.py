"""A ``serve`` that must stop tells Batsim so (a NOTIFY Batsim aborts on), and ``batsim-peer`` stops
at once with the scheduler's error in its own message: nobody waits forever."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
import time

import pytest

from batsim_classifier_scheduler.batsim import BatsimCodec, SchedulerCodec
from batsim_classifier_scheduler.batsim.server import DecisionServer
from batsim_classifier_scheduler.cli import main
from batsim_classifier_scheduler.errors import ProtocolError
from batsim_classifier_scheduler.sim.peer import run_peer
from batsim_classifier_scheduler.workloads.synthetic import generate

from tests.helpers import REPO


def free_endpoint() -> str:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return f"tcp://127.0.0.1:{probe.getsockname()[1]}"


@pytest.mark.slow
def test_a_refused_option_stops_batsim_peer_and_serve_with_one_line(tmp_path, capsys):
    endpoint = free_endpoint()
    server = subprocess.Popen([sys.executable, "-m", "batsim_classifier_scheduler", "serve", "-s", endpoint, "--timeout", "20",
                               "--variant", "classification-idempotent"], cwd=REPO, stderr=subprocess.PIPE, text=True)
    try:
        started = time.perf_counter()
        code = main(["batsim-peer", "-p", str(REPO / "platforms" / "small-16.xml"), "-w",
                     str(REPO / "workloads" / "sample.json"), "-e", str(tmp_path / "out"), "-s", endpoint,
                     "--timeout", "20"])
        assert time.perf_counter() - started < 15
        _, stderr = server.communicate(timeout=20)
    finally:
        server.kill()
    peer_error = capsys.readouterr().err
    assert code == 1 and "unknown NOTIFY type 'scheduler error: " in peer_error and "--enable-dynamic-jobs" in peer_error
    assert server.returncode == 1
    assert stderr.count("\n") == 1 and stderr.startswith("error: ") and "--enable-dynamic-jobs" in stderr


def test_a_protocol_error_mid_run_stops_batsim_peer(monkeypatch):
    """The peer's 10th message is broken: serve refuses it, tells Batsim, and both stop."""
    encode = BatsimCodec.encode

    def broken_tenth(codec, now, events):
        text = encode(codec, now, events)
        return text.replace(b'"timestamp"', b'"timestamp":"x","t"', 1) if codec.messages == 10 else text

    monkeypatch.setattr(BatsimCodec, "encode", broken_tenth)
    endpoint = free_endpoint()
    served = {}

    def serve():
        try:
            DecisionServer(endpoint, timeout=20).run()
        except ProtocolError as exc:
            served["error"] = exc

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    started = time.perf_counter()
    with pytest.raises(ProtocolError) as info:
        run_peer(generate(100, weeks=0.2, nb_res=16, seed=2), endpoint, timeout=20)
    thread.join(timeout=20)
    assert time.perf_counter() - started < 15
    error = str(served["error"])
    assert error.startswith("Batsim message 10, event 0") and "'event.timestamp' must be a number" in error
    assert f"unknown NOTIFY type {'scheduler error: ' + error!r}" in str(info.value)


def test_the_error_reply_is_a_notify_batsim_aborts_on():
    codec = SchedulerCodec()
    codec.decode(json.dumps({"now": 5.0, "events": []}))
    reply = json.loads(codec.encode_error("scheduler error: it broke", b'{"now": 7.5, "events": [{"type": 3}]}'))
    assert reply == {"now": 7.5, "events": [{"timestamp": 7.5, "type": "NOTIFY",
                                            "data": {"type": "scheduler error: it broke"}}]}
    assert json.loads(codec.encode_error("x", b"not JSON"))["now"] == 5.0  # the last now known
    with pytest.raises(ProtocolError, match=r"unknown NOTIFY type 'scheduler error: it broke' \(Batsim aborts\)"):
        BatsimCodec().decode(codec.encode_error("scheduler error: it broke"))
