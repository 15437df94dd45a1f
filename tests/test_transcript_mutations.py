"""Real Batsim transcripts, mutated, fed to ``serve``: a valid reply or one clear error, never a hang.

The Batsim messages of ``../shared/batsim-transcripts/`` are replayed into the server's own
message loop (:meth:`DecisionServer.serve`) over an in-process ZeroMQ transport, after
dropping, duplicating, reordering or corrupting messages, events, fields and bytes. Every run
must end either with SIMULATION_ENDS answered, or with one :class:`SchedulerError` on one line,
whose text the last reply carries to Batsim (the NOTIFY that makes it abort); every other reply
must be one Batsim accepts. Anything else (another exception, a traceback) is a bug.

The transcripts were recorded with other schedulers, so Batsim's later messages follow their
decisions: each is replayed up to the point where ours diverges, then ended with SIMULATION_ENDS.
Two subprocess runs prove the command's exit code and its one-line message.
"""

from __future__ import annotations

import copy
import functools
import json
import socket
import subprocess
import sys
import time

import pytest
import zmq
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from batsim_classifier_scheduler.batsim import BatsimCodec
from batsim_classifier_scheduler.batsim.server import error_text

from tests.helpers import REPO, SHARED, serve_in_process

TRANSCRIPTS = SHARED / "batsim-transcripts"
NAMES = sorted(p.parent.name for p in TRANSCRIPTS.glob("*/trace.jsonl")) if TRANSCRIPTS.is_dir() else []
pytestmark = pytest.mark.skipif(not NAMES, reason=f"no transcripts in {TRANSCRIPTS}")

OPTIONS = [{}, {"policy": "spf"}, {"classifier": "oracle", "safeguard": "kill"}]


def recorded(name: str) -> list[dict]:
    lines = (TRANSCRIPTS / name / "trace.jsonl").read_text().splitlines()
    return [record["msg"] for record in map(json.loads, lines) if record["dir"] == "batsim->sched"]


@functools.cache
def base(name: str) -> list[dict]:
    """The messages of a transcript our FCFS scheduler accepts, then SIMULATION_ENDS: the
    transcript up to where Batsim's messages follow the recording scheduler's decisions, not ours."""
    messages = recorded(name)
    replies, error = serve_in_process([json.dumps(m).encode() for m in messages], {})
    prefix = messages[:len(replies) - (error is not None)]
    if error is not None:
        now = prefix[-1]["now"]
        prefix.append({"now": now, "events": [{"timestamp": now, "type": "SIMULATION_ENDS", "data": {}}]})
    return prefix


# --- mutations ----------------------------------------------------------------------------

json_values = st.one_of(st.none(), st.booleans(), st.integers(-2 ** 70, 2 ** 70), st.floats(), st.text(max_size=6),
                        st.just([]), st.just({}), st.just("w0!1"), st.just("0-3 5"), st.just(-1))


def _pick(draw, items):
    return draw(st.integers(0, len(items) - 1)) if items else None


def _slots(value, slots):
    """Every (container, key) inside ``value``: the places a field can be changed."""
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, child in items:
        slots.append((value, key))
        _slots(child, slots)
    return slots


@st.composite
def mutated(draw):
    """``(name, messages as bytes, what was done)``; only the mutated messages are copied."""
    name = draw(st.sampled_from(NAMES))
    messages = list(base(name))
    changed: set[int] = set()  # ids of the messages copied for a change

    def mutable(i: int) -> dict:
        if id(messages[i]) not in changed:
            messages[i] = copy.deepcopy(messages[i])
            changed.add(id(messages[i]))
        return messages[i]

    done = []
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(["drop message", "duplicate message", "swap messages", "drop event",
                                     "duplicate event", "swap events", "move event", "delete field",
                                     "replace field", "add field"]))
        i = _pick(draw, messages)
        if i is None:
            break
        done.append(f"{kind} (message {i})")
        if kind == "drop message":
            del messages[i]
        elif kind == "duplicate message":
            messages.insert(i, messages[i])
        elif kind == "swap messages":
            j = _pick(draw, messages)
            messages[i], messages[j] = messages[j], messages[i]
        elif kind.endswith("field"):
            slots = _slots(mutable(i), [])
            if not slots:  # earlier mutations deleted every field of this message
                continue
            container, key = slots[_pick(draw, slots)]
            if kind == "delete field" and isinstance(container, dict):
                del container[key]
            elif kind == "add field" and isinstance(container, dict):
                container[draw(st.sampled_from(["extra", "job_id", "alloc", "type", "res", "now"]))] = draw(json_values)
            else:
                container[key] = draw(json_values)
        elif isinstance(messages[i].get("events"), list) and messages[i]["events"]:
            events = mutable(i)["events"]
            e = _pick(draw, events)
            if kind == "drop event":
                del events[e]
            elif kind == "duplicate event":
                events.insert(e, copy.deepcopy(events[e]))
            elif kind == "swap events":
                f = _pick(draw, events)
                events[e], events[f] = events[f], events[e]
            else:  # move event
                target = mutable(_pick(draw, messages))
                if isinstance(target.get("events"), list):
                    target["events"].append(events.pop(e))
    encoded = [json.dumps(m).encode() for m in messages]
    if draw(st.booleans()):  # corrupt the bytes of one message
        i = _pick(draw, encoded)
        at = draw(st.integers(0, len(encoded[i])))
        encoded[i] = encoded[i][:at] + draw(st.binary(max_size=3)) + encoded[i][at + draw(st.integers(0, 2)):]
        done.append(f"bytes at {at} (message {i})")
    return name, encoded, done


def assert_valid_replies(name: str, replies: list[bytes]) -> None:
    begins = base(name)[0]["events"][0]["data"]
    codec = BatsimCodec(profiles=begins["profiles"], workloads=begins["workloads"])
    for reply in replies:
        codec.decode(reply)  # raises ProtocolError on anything real Batsim would refuse


@pytest.mark.slow
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(mutated(), st.sampled_from(OPTIONS))
def test_mutated_transcripts_end_in_a_valid_reply_or_one_clear_error(case, options):
    name, messages, done = case
    replies, error = serve_in_process(messages, options)
    if error is not None:
        text = str(error)
        assert text and "\n" not in text
        if not text.startswith("no message from Batsim"):  # the messages ran out: no reply was owed
            last = json.loads(replies.pop())
            assert last["events"] == [{"timestamp": last["now"], "type": "NOTIFY",
                                       "data": {"type": error_text(error)}}]
    assert_valid_replies(name, replies)


def test_unmutated_transcripts_end_normally():
    for name in NAMES:
        replies, error = serve_in_process([json.dumps(m).encode() for m in base(name)], {})
        assert error is None, (name, error)
        assert len(replies) == len(base(name)) > 2
        assert_valid_replies(name, replies)


# --- the real command -------------------------------------------------------------------------


def free_endpoint() -> str:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return f"tcp://127.0.0.1:{probe.getsockname()[1]}"


def drive_serve_process(messages: list[bytes], *options: str) -> tuple[list[bytes], int, str]:
    """``python -m batsim_classifier_scheduler serve`` in its own process, fed ``messages`` over TCP; its replies,
    exit code and standard error."""
    endpoint = free_endpoint()
    server = subprocess.Popen([sys.executable, "-m", "batsim_classifier_scheduler", "serve", "-s", endpoint, "--timeout", "20",
                               *options], cwd=REPO, stderr=subprocess.PIPE, text=True)
    client = zmq.Context.instance().socket(zmq.REQ)
    client.setsockopt(zmq.LINGER, 0)
    client.setsockopt(zmq.RCVTIMEO, 20_000)
    client.connect(endpoint)
    replies = []
    try:
        for message in messages:
            client.send(message)
            replies.append(client.recv())
            if b"scheduler error: " in replies[-1]:
                break
        _, stderr = server.communicate(timeout=20)
    finally:
        client.close()
        server.kill()
    return replies, server.returncode, stderr


@pytest.mark.slow
@pytest.mark.parametrize("corrupt", ["duplicate completion", "bad JSON"])
def test_serve_replies_then_exits_with_one_line(corrupt):
    transcript = base("kill-resubmit")
    messages = [json.dumps(m).encode() for m in transcript]
    index = next(i for i, m in enumerate(transcript) if "JOB_COMPLETED" in json.dumps(m))
    if corrupt == "duplicate completion":
        messages.insert(index + 1, messages[index])
        expected = "not running"
    else:
        messages[index] = messages[index][:-5]
        expected = "invalid JSON"
    started = time.perf_counter()
    replies, code, stderr = drive_serve_process(messages[:index + 2])
    assert time.perf_counter() - started < 15
    assert code == 1
    assert "Traceback" not in stderr and stderr.count("\n") == 1 and stderr.startswith("error: ")
    assert expected in stderr
    notify = json.loads(replies[-1])["events"]
    assert notify[0]["data"]["type"] == "scheduler error: " + stderr.removeprefix("error: ").strip()
