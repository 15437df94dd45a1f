"""Real Batsim 4.2.1 messages fed to our decision process: every reply must be valid.

The transcripts were recorded with other schedulers, so Batsim's later messages follow *their*
decisions. Each transcript is replayed until a message reports a job our scheduler did not start
(the two schedules diverge there); up to that point every message must be accepted and every reply
must be one real Batsim accepts: known jobs only, allocations of exactly ``res`` free machines.
"""

import json

import pytest

from batsim_classifier_scheduler.batsim import BatsimCodec, SchedulerCodec
from batsim_classifier_scheduler.compose import build_core
from batsim_classifier_scheduler.config import SchedulerConfig
from batsim_classifier_scheduler.core.messages import Execute, JobCompleted, JobKilled, JobSubmitted, Reject
from batsim_classifier_scheduler.core.decision.book import RUNNING

from tests.helpers import SHARED

TRANSCRIPTS = SHARED / "batsim-transcripts"
NAMES = ["easy-250", "walltime", "same-submit", "kill-resubmit", "kill-resubmit-sameworkload"]


def recorded_batsim_messages(name):
    with open(TRANSCRIPTS / name / "trace.jsonl") as lines:
        return [json.loads(line)["msg"] for line in lines if json.loads(line)["dir"] == "batsim->sched"]


def replay(name, policy="fcfs"):
    """Replay a transcript into our scheduler; return (messages replayed, messages recorded)."""
    ours, batsim, core = SchedulerCodec(), BatsimCodec(), build_core(SchedulerConfig(policy=policy))
    messages = recorded_batsim_messages(name)
    free, res, sizes = None, {}, {}
    for index, message in enumerate(messages):
        now, events = ours.decode(json.dumps(message))
        reported = [e.job_id for e in events if isinstance(e, JobCompleted)]
        reported += [j for e in events if isinstance(e, JobKilled) for j in e.job_ids]
        if any(core.states.get(job_id) not in (RUNNING, "killed", "completed") for job_id in reported):
            return index, len(messages)
        if free is None:
            free = set(range(message["events"][0]["data"]["nb_resources"]))
        for event in events:
            if isinstance(event, JobSubmitted):
                sizes[event.job.id] = event.job.res
            if isinstance(event, JobCompleted) and event.job_id in res:
                free |= res.pop(event.job_id)
        _, decisions = batsim.decode(ours.encode(now, core.decide(now, events)))
        for decision in decisions:
            if isinstance(decision, Execute):
                machines = set(decision.alloc)
                assert decision.job_id in sizes and len(machines) == sizes[decision.job_id]
                assert machines <= free, f"{name}, message {index}: {decision.job_id} on busy machines"
                free -= machines
                res[decision.job_id] = machines
            elif isinstance(decision, Reject):
                assert decision.job_id in sizes
    return len(messages), len(messages)


@pytest.mark.skipif(not TRANSCRIPTS.is_dir(), reason="../shared/batsim-transcripts is not here")
@pytest.mark.parametrize("name", NAMES)
def test_replies_to_real_batsim_messages_are_valid(name):
    replayed, recorded = replay(name)
    assert replayed >= 3  # at least SIMULATION_BEGINS and the first submissions


@pytest.mark.skipif(not TRANSCRIPTS.is_dir(), reason="../shared/batsim-transcripts is not here")
def test_a_whole_transcript_replays_when_the_decisions_agree():
    # one machine, FCFS: pybatsim's EASY and ours make the same decisions all along
    replayed, recorded = replay("same-submit")
    assert replayed == recorded
