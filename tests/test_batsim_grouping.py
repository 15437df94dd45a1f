"""The embedded engine against a whole real Batsim 4.2.1 exchange: ``../shared/batsim-transcripts/probing-kth``.

The engine is given the scheduler's recorded replies, message by message, and must send the very messages
real Batsim sent (106,510 of them, on the full KTH-SP2 trace with 14,663 kills), grouped and ordered the
same, compared as JSON values; then write the same ``_jobs.csv`` rows. Real Batsim splits events due at the
same printed time over several messages when SimGrid's rounding ends their sleeps one step apart
(``batsim_classifier_scheduler.sim.simgrid``): three times in this run.
"""

from __future__ import annotations

import gzip
import json

import msgspec
import pandas as pd
import pytest

from batsim_classifier_scheduler.batsim import BatsimCodec
from batsim_classifier_scheduler.platforms import read_platform
from batsim_classifier_scheduler.sim.engine import BatsimEngine, SimulationOptions, TimedReply
from batsim_classifier_scheduler.sim.peer import batsim_codec, workload_profiles
from batsim_classifier_scheduler.workloads import load_workload

from tests.helpers import SHARED
from tests.test_replay import difference

TRANSCRIPT = SHARED / "batsim-transcripts" / "probing-kth"
REFERENCE = SHARED / "reference-schedules" / "KTH-SP2"

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(not TRANSCRIPT.is_dir(), reason="../shared/batsim-transcripts is not here")]


class Record(msgspec.Struct):
    """A transcript line, its message kept as the bytes Batsim or the scheduler sent."""

    dir: str
    msg: msgspec.Raw


class Stamp(msgspec.Struct):
    """A message's ``now`` alone (the rest is skipped when decoded)."""

    now: float


@pytest.fixture(scope="module")
def replayed():
    """Our messages and Batsim's, as bytes (JSON is decoded only where they differ), and the run's result."""
    decoder = msgspec.json.Decoder(Record)
    with gzip.open(TRANSCRIPT / "trace.jsonl.gz", "rb") as stream:
        records = [decoder.decode(line) for line in stream]
    sent = [bytes(r.msg) for r in records if r.dir == "batsim->sched"]
    replies = [bytes(r.msg) for r in records if r.dir == "sched->batsim"]
    config = json.loads(sent[0])["events"][0]["data"]["config"]
    options = SimulationOptions(enable_dynamic_jobs=config["dynamic-jobs-enabled"],
                                acknowledge_dynamic_jobs=config["dynamic-jobs-acknowledged"],
                                enable_profile_reuse=config["profile-reuse-enabled"])
    workload = load_workload(REFERENCE / "workload.json.gz")
    platform = read_platform(REFERENCE / "platform.xml")
    engine = BatsimEngine(workload, platform.nb_compute_hosts, options)
    codec = batsim_codec(engine, platform.host_names)
    scheduler = BatsimCodec(alloc_of=lambda job_id: engine.jobs[job_id].mask, workloads={workload.name: ""},
                            profiles={workload.name: workload_profiles(workload)})
    ours: list[bytes] = []

    def decide(now, events):
        ours.append(codec.encode(now, events))
        if len(ours) > len(replies):
            pytest.fail(f"the engine sent more than the {len(sent)} recorded messages")
        return TimedReply(*scheduler.decode_timed(replies[len(ours) - 1]))

    result = engine.run(decide)
    return ours, sent, result


def test_every_message_is_batsims(replayed):
    ours, sent, _ = replayed
    assert len(ours) == len(sent) == 106510
    canonical = msgspec.json.encode  # of a decoded message: Batsim's spacing apart, the same bytes for the same values
    for index, (got, want) in enumerate(zip(ours, sent)):
        if index == 0:  # SIMULATION_BEGINS: compared by the codec's own golden tests (paths, host list)
            continue
        if got == want or canonical(msgspec.json.decode(got)) == canonical(msgspec.json.decode(want)):
            continue  # the same values, of the same types
        want = json.loads(want)
        where = difference(json.loads(got), want)
        assert where is None, f"message {index} (t = {want['now']}): {where}"


def test_same_instant_events_split_as_batsim_splits_them(replayed):
    ours, _, _ = replayed
    stamp = msgspec.json.Decoder(Stamp)

    def ids(message):
        return [event["data"].get("job_id") for event in json.loads(message)["events"]]

    splits = [(12824152.0, "w0!12150#1", "w0!12268#1"), (21339292.0, "w0!21991#1", "w0!22024"),
              (21352028.0, "w0!21985", "w0!22057")]
    for now, first, second in splits:
        pair = [ids(message) for message in ours if stamp.decode(message).now == now][:2]
        assert pair == [[first], [second]], now


def test_the_jobs_table_is_batsims(replayed):
    _, _, result = replayed
    reference = pd.read_csv(TRANSCRIPT / "out_jobs.csv.gz", dtype={"job_id": str})
    merged = result.jobs.merge(reference, on="job_id", suffixes=("", "_ref"), validate="one_to_one")
    assert len(merged) == len(reference) == 43130
    for column in ("starting_time", "finish_time", "final_state", "allocated_resources"):
        assert (merged[column] == merged[f"{column}_ref"]).all(), column
