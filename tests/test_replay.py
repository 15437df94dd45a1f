"""Golden tests: the codecs against real Batsim 4.2.1 transcripts (``../shared/batsim-transcripts``).

Each transcript is replayed exchange by exchange:

- every Batsim message decodes with :class:`SchedulerCodec`, and :class:`BatsimCodec` re-encodes
  the decoded events into the recorded message;
- every scheduler reply decodes with :class:`BatsimCodec`, and :class:`SchedulerCodec` re-encodes
  the decoded decisions into the recorded reply.

Equality is up to key order and float tolerance, with two documented differences: our peer
always writes ``walltime`` (-1 when the workload had none, which Batsim reads the same), and
our scheduler stamps every decision with the reply's ``now``, where pybatsim's
``fillerSched`` spreads them out (those timestamps are not compared).
"""

from __future__ import annotations

import csv
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from batsim_classifier_scheduler.batsim import BatsimCodec, SchedulerCodec
from batsim_classifier_scheduler.core.messages import Execute, JobSubmitted, SimulationBegins
from batsim_classifier_scheduler.errors import ProtocolError

TRANSCRIPTS = Path(__file__).resolve().parents[2] / "shared" / "batsim-transcripts"
NAMES = sorted(p.parent.name for p in TRANSCRIPTS.glob("*/trace.jsonl")) if TRANSCRIPTS.is_dir() else []
CASES = NAMES or [pytest.param(None, marks=pytest.mark.skip(reason=f"no transcripts in {TRANSCRIPTS}"))]


def load(name: str) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """The exchanges of a transcript: (Batsim message, scheduler reply) pairs."""
    records = [json.loads(line) for line in (TRANSCRIPTS / name / "trace.jsonl").read_text().splitlines() if line]
    assert [r["dir"] for r in records] == ["batsim->sched", "sched->batsim"] * (len(records) // 2)
    return [(records[i]["msg"], records[i + 1]["msg"]) for i in range(0, len(records), 2)]


def difference(got: Any, want: Any, path: str = "") -> str | None:
    """Where ``got`` and ``want`` differ (floats up to 1e-9), or None."""
    if isinstance(want, dict) and isinstance(got, dict):
        if set(got) != set(want):
            return f"{path}: keys {sorted(got)} != {sorted(want)}"
        return next((d for k in want if (d := difference(got[k], want[k], f"{path}.{k}"))), None)
    if isinstance(want, list) and isinstance(got, list):
        if len(got) != len(want):
            return f"{path}: {len(got)} items != {len(want)}"
        return next((d for i, (g, w) in enumerate(zip(got, want)) if (d := difference(g, w, f"{path}[{i}]"))), None)
    if isinstance(want, (int, float)) and isinstance(got, (int, float)) and type(want) is not bool:
        return None if math.isclose(got, want, rel_tol=1e-12, abs_tol=1e-9) else f"{path}: {got} != {want}"
    return None if got == want and type(got) is type(want) else f"{path}: {got!r} != {want!r}"


@dataclass
class Replay:
    """Everything decoded and re-encoded while replaying one transcript."""

    events: list[list] = field(default_factory=list)
    decisions: list[list] = field(default_factory=list)
    batsim_diffs: list[str] = field(default_factory=list)
    reply_diffs: list[str] = field(default_factory=list)
    spread_replies: int = 0


def replay(name: str) -> Replay:
    result = Replay()
    scheduler = SchedulerCodec()
    allocations: dict[str, int] = {}
    progress: dict[str, float] = {}
    batsim: BatsimCodec | None = None
    for index, (msg, reply) in enumerate(load(name)):
        now, events = scheduler.decode(json.dumps(msg))
        result.events.append(events)
        if batsim is None:  # the peer's context, as the embedded simulator would know it
            data = msg["events"][0]["data"]
            batsim = BatsimCodec([h["name"] for h in data["compute_resources"]], data["workloads"], data["profiles"],
                                 alloc_of=allocations.__getitem__, progress_of=progress.get)
        progress.clear()
        for event in msg["events"]:
            if event["type"] == "JOB_KILLED":
                progress.update({k: v["progress"] for k, v in event["data"]["job_progress"].items()})
        recorded = json.loads(json.dumps(msg))
        for event in recorded["events"]:  # a missing walltime reads as -1; our peer writes it
            if event["type"] == "JOB_SUBMITTED":
                event["data"]["job"].setdefault("walltime", -1)
        if diff := difference(json.loads(batsim.encode(now, events)), recorded):
            result.batsim_diffs.append(f"message {index}{diff}")

        reply_now, decisions = batsim.decode(json.dumps(reply))
        result.decisions.append(decisions)
        allocations.update((d.job_id, d.machines) for d in decisions if isinstance(d, Execute))
        encoded = json.loads(scheduler.encode(reply_now, decisions))
        expected = json.loads(json.dumps(reply))
        if any(e["timestamp"] != reply["now"] for e in reply["events"]):
            result.spread_replies += 1
            for a, b in zip(encoded["events"], expected["events"]):
                a["timestamp"] = b["timestamp"]
        if diff := difference(encoded, expected):
            result.reply_diffs.append(f"reply {index}{diff}")
    return result


@pytest.fixture(scope="module")
def replays() -> dict[str, Replay]:
    return {name: replay(name) for name in NAMES}


@pytest.mark.parametrize("name", CASES)
def test_every_batsim_message_decodes_and_jobs_are_complete(name, replays):
    events = [e for message in replays[name].events for e in message]
    assert isinstance(events[0], SimulationBegins)
    submitted = [e for e in events if isinstance(e, JobSubmitted)]
    with open(TRANSCRIPTS / name / "out_jobs.csv", newline="") as stream:
        rows = {f'{r["workload_name"]}!{r["job_id"]}': r for r in csv.DictReader(stream)}
    assert sorted(e.job.id for e in submitted) == sorted(rows)
    for event in submitted:
        job, row = event.job, rows[event.job.id]
        assert job.subtime == event.time
        assert job.extras["workload_subtime"] == pytest.approx(float(row["submission_time"]), abs=1e-6)
        assert job.res == int(row["requested_number_of_resources"])
        assert job.walltime == pytest.approx(float(row["requested_time"]))
        assert job.profile == row["profile"]


@pytest.mark.parametrize("name", CASES)
def test_delay_jobs_know_their_runtime(name, replays):
    data = load(name)[0][0]["events"][0]["data"]
    for message in replays[name].events:
        for event in message:
            if isinstance(event, JobSubmitted):
                profile = data["profiles"].get(event.job.workload, {}).get(event.job.profile)
                if profile is not None and profile["type"] == "delay":
                    assert event.job.runtime == profile["delay"]
                elif profile is None:  # registered by the scheduler: our codec remembers it
                    assert event.job.runtime is not None
                else:
                    assert event.job.runtime is None


@pytest.mark.parametrize("name", CASES)
def test_every_reply_decodes(name, replays):
    assert len(replays[name].decisions) == len(load(name))


@pytest.mark.parametrize("name", CASES)
def test_batsim_codec_reproduces_batsim_messages(name, replays):
    assert replays[name].batsim_diffs == []


@pytest.mark.parametrize("name", CASES)
def test_scheduler_codec_reproduces_the_recorded_replies(name, replays):
    assert replays[name].reply_diffs == []
    # Only pybatsim's fillerSched (walltime) spreads its decisions' timestamps.
    assert (replays[name].spread_replies > 0) == (name == "walltime")


@pytest.mark.parametrize("name", CASES)
def test_a_tampered_reply_is_refused(name):
    exchanges = load(name)
    begins = exchanges[0][0]["events"][0]["data"]
    codec = BatsimCodec(profiles=begins["profiles"], workloads=begins["workloads"])
    reply = next(r for _, r in exchanges if r["events"])
    reply["events"][0]["timestamp"] = reply["now"] + 1
    with pytest.raises(ProtocolError, match=r"event 0 \(\w+\): 'event.timestamp' .* is after now="):
        codec.decode(json.dumps(reply))
