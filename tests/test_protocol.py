"""The Batsim JSON codecs: round trips both ways, validation errors, property-based round trips."""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from procset import ProcSet

from batsim_classifier_scheduler.batsim import BatsimCodec, SchedulerCodec
from batsim_classifier_scheduler.core.messages import (
    AnswerWaitingTime,
    CallMeLater,
    Execute,
    JobCompleted,
    JobKilled,
    JobSubmitted,
    Kill,
    NoMoreStaticJobs,
    RegisterJob,
    RegisterProfile,
    RegistrationFinished,
    Reject,
    RequestedCall,
    SetMetadata,
    SimulationBegins,
    SimulationEnds,
    Unhandled,
    WaitingTimeQuery,
)
from batsim_classifier_scheduler.core.job import Job
from batsim_classifier_scheduler.errors import ProtocolError

PROFILES = {"w0": {"p10": {"type": "delay", "delay": 10},
                   "cpu": {"type": "parallel_homogeneous", "cpu": 1e9, "com": 0}}}


def message(now, *events) -> str:
    """A message from ``(timestamp, type, data)`` triples."""
    return json.dumps({"now": now, "events": [{"timestamp": t, "type": k, "data": d} for t, k, d in events]})


def begins(profiles=PROFILES, **config) -> str:
    return message(0.0, (0.0, "SIMULATION_BEGINS", {"nb_resources": 4, "nb_compute_resources": 4, "config": config,
                                                    "profiles": profiles, "workloads": {"w0": "w.json"}}))


def decision_key(decision) -> tuple:
    """A comparable form of a decision (Job compares by identity; Reject's reason is not sent)."""
    if isinstance(decision, RegisterJob):
        job = decision.job
        return ("RegisterJob", job.id, job.subtime, job.res, job.walltime if job.walltime > 0 else -1.0,
                job.profile)
    if isinstance(decision, Reject):
        return ("Reject", decision.job_id)
    return (type(decision).__name__, *(getattr(decision, f) for f in decision.__slots__))


def sched_to_batsim(decisions, now=5.0, codec: BatsimCodec | None = None):
    """Encode on the scheduler side, decode on Batsim's."""
    text = SchedulerCodec().encode(now, decisions)
    codec = codec or BatsimCodec(profiles=PROFILES, workloads={"w0": "w.json"})
    return text, codec.decode(text)


def batsim_to_sched(events, now=None, codec: BatsimCodec | None = None, scheduler: SchedulerCodec | None = None):
    """Encode on Batsim's side, decode on the scheduler's."""
    now = max((e.time for e in events), default=0.0) if now is None else now
    codec = codec or BatsimCodec(profiles=PROFILES, workloads={"w0": "w.json"},
                                 alloc_of=lambda job_id: 0b1011, progress_of=lambda job_id: 0.25)
    text = codec.encode(now, events)
    return text, (scheduler or SchedulerCodec()).decode(text)


# --- scheduler -> Batsim ---------------------------------------------------------------------


@pytest.mark.parametrize("decision, kind, data", [
    (Execute.on("w0!1", ProcSet((0, 3), 7)), "EXECUTE_JOB", {"job_id": "w0!1", "alloc": "0-3 7"}),
    (Reject("w0!2", "too big"), "REJECT_JOB", {"job_id": "w0!2"}),
    (Kill(("w0!1", "w0!3")), "KILL_JOB", {"job_ids": ["w0!1", "w0!3"]}),
    (CallMeLater(12.5), "CALL_ME_LATER", {"timestamp": 12.5}),
    (RegisterProfile("dyn", "resub", 5.5), "REGISTER_PROFILE",
     {"workload_name": "dyn", "profile_name": "resub", "profile": {"type": "delay", "delay": 5.5}}),
    (RegisterJob(Job("w0!1#1", 5.0, 2, 100.0, "p10", 10.0, {"user": 3})), "REGISTER_JOB",
     {"job_id": "w0!1#1", "job": {"id": "w0!1#1", "subtime": 5.0, "res": 2, "walltime": 100.0, "profile": "p10"}}),
    (RegisterJob(Job("w0!1#1", 5.0, 2, -1.0, "p10")), "REGISTER_JOB",
     {"job_id": "w0!1#1", "job": {"id": "w0!1#1", "subtime": 5.0, "res": 2, "walltime": -1, "profile": "p10"}}),
    (SetMetadata("w0!1", "parent=w0!0;class=large"), "SET_JOB_METADATA",
     {"job_id": "w0!1", "metadata": "parent=w0!0;class=large"}),
    (RegistrationFinished(), "NOTIFY", {"type": "registration_finished"}),
    (AnswerWaitingTime("w0!9", 42.0), "ANSWER",
     {"estimate_waiting_time": {"job_id": "w0!9", "estimated_waiting_time": 42.0}}),
])
def test_each_decision_is_encoded_exactly_and_round_trips(decision, kind, data):
    text, (now, decoded) = sched_to_batsim([decision])
    assert json.loads(text) == {"now": 5.0, "events": [{"timestamp": 5.0, "type": kind, "data": data}]}
    assert now == 5.0
    assert [decision_key(d) for d in decoded] == [decision_key(decision)]


def test_registered_job_gets_its_runtime_from_the_profile_table():
    codec = BatsimCodec(profiles=PROFILES)
    _, (_, decoded) = sched_to_batsim([RegisterProfile("dyn", "r", 4.5),
                                       RegisterJob(Job("dyn!a", 5.0, 1, 10.0, "r")),
                                       RegisterJob(Job("w0!b", 5.0, 1, 10.0, "p10")),
                                       RegisterJob(Job("w0!c", 5.0, 1, 10.0, "cpu"))], codec=codec)
    assert [d.job.runtime for d in decoded[1:]] == [4.5, 10.0, None]
    assert codec.profiles["dyn"] == {"r": {"type": "delay", "delay": 4.5}}


def test_decode_timed_keeps_each_decision_timestamp():
    text = message(3.0, (1.0, "EXECUTE_JOB", {"job_id": "w0!1", "alloc": "0"}),
                   (2.5, "CALL_ME_LATER", {"timestamp": 9}))
    now, timed = BatsimCodec().decode_timed(text)
    assert now == 3.0
    assert [(t, decision_key(d)) for t, d in timed] == [(1.0, ("Execute", "w0!1", 1)), (2.5, ("CallMeLater", 9.0))]


def test_scheduler_codec_remembers_registered_profiles_for_acknowledged_jobs():
    scheduler = SchedulerCodec()
    scheduler.decode(begins())
    scheduler.encode(0.0, [RegisterProfile("dyn", "r", 7.0)])
    _, events = scheduler.decode(message(1.0, (1.0, "JOB_SUBMITTED", {"job_id": "dyn!x", "job": {
        "id": "dyn!x", "subtime": 0.5, "res": 1, "walltime": 100, "profile": "r"}})))
    assert events[0].job.runtime == 7.0


# --- Batsim -> scheduler ---------------------------------------------------------------------


def test_simulation_begins_matches_real_batsim_and_round_trips():
    codec = BatsimCodec(host_names=["h0", "h1"], workloads={"w0": "w.json"}, profiles=PROFILES)
    text, (now, events) = batsim_to_sched([SimulationBegins(0.0, 2, {"dynamic-jobs-enabled": True})], codec=codec)
    data = json.loads(text)["events"][0]["data"]
    assert list(data) == ["nb_resources", "nb_compute_resources", "nb_storage_resources", "allow_compute_sharing",
                          "allow_storage_sharing", "config", "compute_resources", "storage_resources", "workloads",
                          "profiles"]
    assert data["compute_resources"][1] == {"id": 1, "name": "h1", "state": "idle", "properties": {"role": ""},
                                            "zone_properties": {}}
    assert data["config"]["redis-enabled"] is False and data["config"]["dynamic-jobs-enabled"] is True
    assert data["profiles"] == PROFILES and data["workloads"] == {"w0": "w.json"}
    [event] = events
    assert (event.time, event.nb_resources, event.config) == (0.0, 2, data["config"])


def test_default_host_names_are_sorted_like_batsim():
    text = BatsimCodec().encode(0.0, [SimulationBegins(0.0, 11, {})])
    names = [h["name"] for h in json.loads(text)["events"][0]["data"]["compute_resources"]]
    assert names[:4] == ["a0", "a1", "a10", "a2"]


def test_job_submitted_round_trip_keeps_extras_and_uses_the_arrival_time():
    scheduler = SchedulerCodec()
    scheduler.decode(begins())
    job = Job("w0!7", 57.2, 8, 300.0, "p10", 10.0, {"user": "u1", "requested_time": 300})
    text, (now, [event]) = batsim_to_sched([JobSubmitted(57.5, job)], scheduler=scheduler)
    assert json.loads(text)["events"][0]["data"] == {"job_id": "w0!7", "job": {
        "id": "w0!7", "subtime": 57.2, "walltime": 300.0, "res": 8, "profile": "p10", "user": "u1",
        "requested_time": 300}}
    got = event.job
    assert (event.time, got.id, got.subtime, got.res, got.walltime, got.profile, got.runtime) == \
        (57.5, "w0!7", 57.5, 8, 300.0, "p10", 10.0)
    assert got.extras == {"user": "u1", "requested_time": 300, "workload_subtime": 57.2}
    # Re-encoding the decoded job gives the workload's subtime back.
    again = BatsimCodec().encode(60.0, [JobSubmitted(57.5, got)])
    assert json.loads(again)["events"][0]["data"]["job"] == json.loads(text)["events"][0]["data"]["job"]


def test_job_submitted_runtime_comes_from_delay_profiles_only():
    scheduler = SchedulerCodec()
    scheduler.decode(begins())
    jobs = [{"id": f"w0!{i}", "subtime": 0, "res": 1, "profile": p} for i, p in enumerate(["p10", "cpu", "nope"])]
    _, events = scheduler.decode(message(1.0, *[(1.0, "JOB_SUBMITTED", {"job_id": j["id"], "job": j}) for j in jobs]))
    assert [e.job.runtime for e in events] == [10.0, None, None]
    assert [e.job.walltime for e in events] == [-1.0, -1.0, -1.0]


def test_forwarded_profiles_are_sent_and_used():
    codec = BatsimCodec(profiles={"w0": {"d": {"type": "delay", "delay": 3}}})
    scheduler = SchedulerCodec()
    scheduler.decode(codec.encode(0.0, [SimulationBegins(0.0, 4, {"profiles-forwarded-on-submission": True})]))
    scheduler.profiles.clear()  # the runtime must come from the forwarded object
    text, (_, [event]) = batsim_to_sched([JobSubmitted(1.0, Job("w0!1", 1.0, 1, -1, "d", 3.0))], codec=codec,
                                         scheduler=scheduler)
    assert json.loads(text)["events"][0]["data"]["profile"] == {"type": "delay", "delay": 3}
    assert event.job.runtime == 3.0


def test_completion_and_kill_messages_match_real_batsim():
    events = [JobCompleted(5.0, "w0!0", "COMPLETED_KILLED"), JobKilled(5.0, ("w0!0", "w0!1"))]
    codec = BatsimCodec(alloc_of=lambda job_id: ProcSet((0, 1), 3),
                        progress_of=lambda job_id: 0.499995 if job_id == "w0!0" else None)
    codec.encode(1.0, [JobSubmitted(1.0, Job("w0!0", 1.0, 3, 100, "delay10", 10.0))])
    text, (now, decoded) = batsim_to_sched(events, codec=codec)
    assert json.loads(text) == {"now": 5.0, "events": [
        {"timestamp": 5.0, "type": "JOB_COMPLETED",
         "data": {"job_id": "w0!0", "job_state": "COMPLETED_KILLED", "return_code": -1, "alloc": "0-1 3"}},
        {"timestamp": 5.0, "type": "JOB_KILLED",
         "data": {"job_ids": ["w0!0", "w0!1"], "job_progress": {"w0!0": {"profile_name": "delay10",
                                                                        "progress": 0.499995}}}}]}
    assert decoded == [JobCompleted(5.0, "w0!0", "COMPLETED_KILLED"), JobKilled(5.0, ("w0!0", "w0!1"))]


@pytest.mark.parametrize("state, code", [("COMPLETED_SUCCESSFULLY", 0), ("COMPLETED_WALLTIME_REACHED", -1)])
def test_return_codes(state, code):
    text, _ = batsim_to_sched([JobCompleted(2.0, "w0!1", state)])
    assert json.loads(text)["events"][0]["data"]["return_code"] == code
    assert json.loads(text)["events"][0]["data"]["alloc"] == "0-1 3"  # from the bit mask 0b1011


def test_simple_events_round_trip():
    events = [RequestedCall(1.0), NoMoreStaticJobs(1.0), SimulationEnds(2.0)]
    text, (now, decoded) = batsim_to_sched(events)
    assert [e["data"] for e in json.loads(text)["events"]] == [{}, {"type": "no_more_static_job_to_submit"}, {}]
    assert decoded == events and now == 2.0


def test_waiting_time_query_round_trip():
    text, (_, [event]) = batsim_to_sched([WaitingTimeQuery(3.0, Job("w0!q", 3.0, 4, 12.0))])
    assert json.loads(text)["events"][0]["data"] == {
        "requests": {"estimate_waiting_time": {"job_id": "w0!q", "job": {"res": 4, "walltime": 12.0}}}}
    assert isinstance(event, WaitingTimeQuery)
    job = event.job
    assert (event.time, job.id, job.res, job.walltime, job.subtime) == (3.0, "w0!q", 4, 12.0, 3.0)


@pytest.mark.parametrize("kind, data", [
    ("NOTIFY", {"type": "no_more_external_event_to_occur"}),
    ("NOTIFY", {"type": "event_machine_unavailable", "resources": "0 5-8"}),
    ("NOTIFY", {"type": "event_machine_available", "resources": "0 5-8"}),
    ("RESOURCE_STATE_CHANGED", {"resources": "1 2-5", "state": "42"}),
    ("ANSWER", {"consumed_energy": 12500.0}),
    ("QUERY", {"requests": {"consumed_energy": {}}}),
    ("FROM_JOB_MSG", {"job_id": "w0!1", "msg": "hello"}),
])
def test_other_valid_batsim_events_are_unhandled(kind, data):
    _, (_, [event]) = batsim_to_sched([Unhandled(4.0, kind, data)])
    assert event == Unhandled(4.0, kind, data)


# --- validation: Batsim -> scheduler -----------------------------------------------------------


def decode_error(text, scheduler: SchedulerCodec | None = None) -> str:
    with pytest.raises(ProtocolError) as info:
        (scheduler or SchedulerCodec()).decode(text)
    return str(info.value)


JOB = {"id": "w0!1", "subtime": 0, "res": 1, "walltime": 10, "profile": "p10"}


@pytest.mark.parametrize("text, pattern", [
    ('{"now": 1.0, "events": [', r"message 1: invalid JSON: "),
    ('{"now": NaN, "events": []}', r"invalid JSON: non-finite number NaN"),
    (b'\xff\xfe', r"invalid JSON"),
    ("[]", r"message 1: the message must be a JSON object"),
    ('{"events": []}', r"missing 'message.now'"),
    ('{"now": "1", "events": []}', r"'message.now' must be a number"),
    ('{"now": 1}', r"missing 'message.events'"),
    ('{"now": 1, "events": {}}', r"'message.events' must be an array"),
    ('{"now": 1, "events": [3]}', r"event 0: an event must be an object"),
    (message(1.0, (2.0, "REQUESTED_CALL", {})), r"event 0 \(REQUESTED_CALL\): 'event.timestamp' 2.0 is after now=1.0"),
    (message(3.0, (2.0, "REQUESTED_CALL", {}), (1.0, "REQUESTED_CALL", {})),
     r"event 1 \(REQUESTED_CALL\): 'event.timestamp' 1.0 is before"),
    ('{"now": 1, "events": [{"timestamp": 1, "type": "REQUESTED_CALL"}]}',
     r"event 0 \(REQUESTED_CALL\): missing 'event.data'"),
    ('{"now": 1, "events": [{"timestamp": 1, "data": {}}]}', r"event 0: missing 'event.type'"),
    ('{"now": 1, "events": [{"timestamp": true, "type": "REQUESTED_CALL", "data": {}}]}',
     r"event 0 \(REQUESTED_CALL\): 'event.timestamp' must be a number, got true"),
    (message(1.0, (1.0, "JOB_STARTED", {})), r"event 0 \(JOB_STARTED\): unknown event type 'JOB_STARTED'"),
    (message(1.0, (1.0, "JOB_SUBMITTED", {"job": JOB})), r"event 0 \(JOB_SUBMITTED\): missing 'data.job_id'"),
    (message(1.0, (1.0, "JOB_SUBMITTED", {"job_id": "w0!1"})), r"missing 'data.job' \(Batsim's Redis mode"),
    (message(1.0, (1.0, "JOB_SUBMITTED", {"job_id": "1", "job": JOB})), r"'data.job_id' must be 'workload!name'"),
    (message(1.0, (1.0, "JOB_SUBMITTED", {"job_id": "w0!1", "job": {**JOB, "res": 1.0}})),
     r"'data.job.res' must be an integer, got 1.0"),
    (message(1.0, (1.0, "JOB_SUBMITTED", {"job_id": "w0!1", "job": {**JOB, "res": -1}})),
     r"'data.job.res' must be >= 0"),
    (message(1.0, (1.0, "JOB_SUBMITTED", {"job_id": "w0!1", "job": {**JOB, "walltime": 0}})),
     r"'data.job.walltime' must be -1 \(none\) or positive"),
    (message(1.0, (1.0, "JOB_SUBMITTED", {"job_id": "w0!1", "job": {k: v for k, v in JOB.items() if k != "subtime"}})),
     r"missing 'data.job.subtime'"),
    (message(1.0, (1.0, "JOB_SUBMITTED", {"job_id": "w0!2", "job": JOB})),
     r"'data.job.id' is 'w0!1' but the job id is 'w0!2'"),
    (message(1.0, (1.0, "JOB_COMPLETED", {"job_id": "w0!1", "job_state": "DONE"})), r"'data.job_state' must be one of"),
    (message(1.0, (1.0, "JOB_COMPLETED", {"job_id": "w0!1", "job_state": "COMPLETED_KILLED", "alloc": "3-1"})),
     r"'data.alloc' must be an interval set"),
    (message(1.0, (1.0, "JOB_KILLED", {"job_ids": ["w0!1", 2]})), r"'data.job_ids\[1\]' must be a string"),
    (message(1.0, (1.0, "NOTIFY", {})), r"event 0 \(NOTIFY\): missing 'data.type'"),
    (message(1.0, (1.0, "SIMULATION_BEGINS", {"config": {}})), r"missing 'data.nb_resources'"),
    (message(1.0, (1.0, "QUERY", {"requests": {"estimate_waiting_time": {"job_id": "w0!1", "job": {}}}})),
     r"missing 'data.requests.estimate_waiting_time.job.res'"),
])
def test_invalid_batsim_messages_name_the_event_and_field(text, pattern):
    assert re.search(pattern, decode_error(text)), decode_error(text)


def test_now_may_not_decrease_across_messages():
    scheduler = SchedulerCodec()
    scheduler.decode(message(5.0))
    assert "Batsim message 2: now=4.0 is before the previous message's now=5.0" in decode_error(message(4.0), scheduler)


def test_times_outside_the_simulators_range_are_refused():
    """Found by tests/test_fuzz_doors.py: a JOB_SUBMITTED at 1e300 s crashed the classifier's calendar."""
    assert decode_error(message(1e300)) == ("Batsim message 1: now=1e+300 is outside the simulator's time range "
                                            "(0 to 8589934592 s)")
    assert "now=-1.0 is outside" in decode_error(message(-1.0))
    assert decode_error(message(5.0, (-3.0, "REQUESTED_CALL", {}))) == \
        "Batsim message 1, event 0 (REQUESTED_CALL): 'event.timestamp' must be >= 0, got -3.0"


@pytest.mark.parametrize("nb", [0, 2 ** 53 + 1, 10 ** 20])
def test_a_machine_the_scheduler_cannot_hold_is_refused(nb):
    """Found by tests/test_fuzz_doors.py: nb_compute_resources 2**53+1 filled the memory (MemoryError)."""
    text = message(0.0, (0.0, "SIMULATION_BEGINS", {"nb_resources": 4, "nb_compute_resources": nb, "config": {}}))
    assert decode_error(text) == ("Batsim message 1, event 0 (SIMULATION_BEGINS): 'data.nb_compute_resources' must "
                                  f"be in 1..16777216, got {nb}")


def test_reply_now_may_not_precede_the_received_now():
    scheduler = SchedulerCodec()
    scheduler.decode(message(5.0))
    with pytest.raises(ProtocolError, match="now=4.0 is before the received now=5.0"):
        scheduler.encode(4.0, [])


@pytest.mark.parametrize("decision, pattern", [
    (SetMetadata("w0!1", 'say "hi"'), r"decision 0: SET_JOB_METADATA 'w0!1': the metadata may not contain"),
    (Execute("w0!1", 0), r"decision 0: EXECUTE_JOB 'w0!1': empty allocation"),
    (Kill(()), r"KILL_JOB with no job id"),
    (RegisterJob(Job("a!b!c", 0.0, 1, -1, "p")), r"'data.job_id' must be 'workload!name'"),
    ("EXECUTE", r"cannot encode str"),
])
def test_impossible_decisions_are_not_encoded(decision, pattern):
    with pytest.raises(ProtocolError, match=pattern):
        SchedulerCodec().encode(1.0, [decision])


# --- validation: scheduler -> Batsim -----------------------------------------------------------


def reply_error(text, codec: BatsimCodec | None = None) -> str:
    with pytest.raises(ProtocolError) as info:
        (codec or BatsimCodec(profiles=PROFILES)).decode(text)
    return str(info.value)


REG = {"job_id": "w0!1#1", "job": {"id": "w0!1#1", "subtime": 5.0, "res": 1, "walltime": 100, "profile": "p10"}}


@pytest.mark.parametrize("event, pattern", [
    (("EXECUTE_JOB", {"job_id": "w0!1", "alloc": "0-"}),
     r"event 0 \(EXECUTE_JOB\): 'data.alloc' must be an interval set"),
    (("EXECUTE_JOB", {"job_id": "w0!1", "alloc": ""}), r"'data.alloc' must be an interval set"),
    (("EXECUTE_JOB", {"job_id": "w0!1", "alloc": "0,1"}), r"'data.alloc' must be an interval set"),
    (("EXECUTE_JOB", {"job_id": "w0!1"}), r"'data' must have 2 or 3 members"),
    (("EXECUTE_JOB", {"job_id": "w0!1", "alloc": "0", "color": "red"}), r"unexpected member\(s\) \['color'\]"),
    (("REJECT_JOB", {"job_id": "w0!1", "reason": "no"}), r"event 0 \(REJECT_JOB\): 'data' must have 1 members"),
    (("KILL_JOB", {"job_ids": []}), r"'data.job_ids' is empty"),
    (("KILL_JOB", {"job_ids": "w0!1"}), r"'data.job_ids' must be an array"),
    (("CALL_ME_LATER", {"timestamp": "10"}), r"'data.timestamp' must be a number"),
    (("REGISTER_JOB", {"job_id": "w0!1#1", "job": {k: v for k, v in REG["job"].items() if k != "subtime"}}),
     r"event 0 \(REGISTER_JOB\): missing 'data.job.subtime'"),
    (("REGISTER_JOB", {"job_id": "w0!1!1", "job": REG["job"]}), r"'data.job_id' must be 'workload!name' \(one '!'\)"),
    (("REGISTER_JOB", {**REG, "job": {**REG["job"], "profile": "nope"}}),
     r"profile 'nope' does not exist in workload 'w0'"),
    (("REGISTER_JOB", {"job_id": "x!1", "job": {**REG["job"], "id": "x!1"}}), r"workload 'x' does not exist"),
    (("REGISTER_PROFILE", {"workload_name": "w0", "profile_name": "p10", "profile": {"type": "delay", "delay": 1}}),
     r"profile 'p10' already exists in workload 'w0'"),
    (("REGISTER_PROFILE", {"workload_name": "w0", "profile_name": "x", "profile": {"type": "parallel"}}),
     r"profile type 'parallel' is not supported"),
    (("SET_JOB_METADATA", {"job_id": "w0!1", "metadata": 'a"b'}), r"'data.metadata' may not contain"),
    (("NOTIFY", {"type": "hello"}), r"unknown NOTIFY type 'hello'"),
    (("ANSWER", {"consumed_energy": 3}), r"missing 'data.estimate_waiting_time'"),
    (("CHANGE_JOB_STATE", {"job_id": "w0!1", "job_state": "REJECTED"}), r"valid in Batsim 4.2.1 but our Batsim peer"),
    (("JOB_SUBMITTED", REG), r"unknown event type 'JOB_SUBMITTED' \(Batsim aborts\)"),
])
def test_invalid_replies_name_the_event_and_field(event, pattern):
    error = reply_error(message(5.0, (5.0, *event)))
    assert re.search(pattern, error), error


def test_reply_now_before_the_message_now_is_refused():
    codec = BatsimCodec()
    codec.encode(5.0, [RequestedCall(5.0)])
    assert "now=4.0 is before the message's now=5.0" in reply_error(message(4.0), codec)


def test_batsim_codec_refuses_to_encode_out_of_order_events():
    codec = BatsimCodec()
    with pytest.raises(ProtocolError, match="time 3.0 is not in"):
        codec.encode(2.0, [RequestedCall(3.0)])
    codec.encode(2.0, [RequestedCall(1.0), RequestedCall(2.0)])
    with pytest.raises(ProtocolError, match="now=1.0 is before the previous message's now=2.0"):
        codec.encode(1.0, [])
    with pytest.raises(ProtocolError, match="JOB_COMPLETED needs alloc_of"):
        codec.encode(3.0, [JobCompleted(3.0, "w0!1", "COMPLETED_SUCCESSFULLY")])
    with pytest.raises(ProtocolError, match="Batsim sends no such event"):
        codec.encode(3.0, [Unhandled(3.0, "EXECUTE_JOB", {})])


# --- property-based round trips ----------------------------------------------------------------

names = st.text(st.characters(codec="ascii", exclude_characters="!", min_codepoint=33, max_codepoint=126),
                min_size=1, max_size=8)
job_ids = st.builds(lambda w, n: f"{w}!{n}", names, names)
finite = st.floats(allow_nan=False, allow_infinity=False, width=64)
walltimes = st.one_of(st.just(-1.0), st.floats(min_value=1e-6, max_value=1e9))
metadata = st.text(st.characters(exclude_characters='"', exclude_categories=("Cs",)), max_size=20)


@st.composite
def decision_lists(draw):
    decisions = []
    for kind in draw(st.lists(st.integers(0, 8), max_size=12)):
        if kind == 0:
            decisions.append(Execute(draw(job_ids), draw(st.integers(1, 2 ** 300))))
        elif kind == 1:
            decisions.append(Reject(draw(job_ids), ""))
        elif kind == 2:
            decisions.append(Kill(tuple(draw(st.lists(job_ids, min_size=1, max_size=4)))))
        elif kind == 3:
            decisions.append(CallMeLater(draw(finite)))
        elif kind == 4:  # a fresh profile name each time: a duplicate aborts Batsim
            decisions.append(RegisterProfile(draw(names), f"r{len(decisions)}", draw(st.floats(0, 1e9))))
        elif kind == 5:
            job = Job(f"w0!{draw(names)}", draw(finite), draw(st.integers(0, 2 ** 31 - 1)), draw(walltimes), "p10")
            decisions.append(RegisterJob(job))
        elif kind == 6:
            decisions.append(SetMetadata(draw(job_ids), draw(metadata)))
        elif kind == 7:
            decisions.append(RegistrationFinished())
        else:
            decisions.append(AnswerWaitingTime(draw(job_ids), draw(finite)))
    return decisions


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(decision_lists(), st.floats(0, 1e10))
def test_random_decision_lists_survive_a_round_trip(decisions, now):
    _, (decoded_now, decoded) = sched_to_batsim(decisions, now=now)
    assert decoded_now == now
    assert [decision_key(d) for d in decoded] == [decision_key(d) for d in decisions]


job_states = st.sampled_from(["COMPLETED_SUCCESSFULLY", "COMPLETED_FAILED", "COMPLETED_WALLTIME_REACHED",
                              "COMPLETED_KILLED"])
extras = st.dictionaries(st.sampled_from(["user", "group", "queue", "requested_time"]),
                         st.one_of(st.integers(-5, 10 ** 6), names, finite), max_size=3)


@st.composite
def event_lists(draw):
    times = sorted(draw(st.lists(st.floats(0, 1e9), max_size=10)))
    events = []
    for time in times:
        kind = draw(st.integers(0, 4))
        if kind == 0:
            job = Job(f"w0!{draw(names)}", draw(st.floats(0, 1e9)), draw(st.integers(0, 10 ** 6)), draw(walltimes),
                      "p10", 10.0, draw(extras))
            events.append(JobSubmitted(time, job))
        elif kind == 1:
            events.append(JobCompleted(time, draw(job_ids), draw(job_states)))
        elif kind == 2:
            events.append(JobKilled(time, tuple(draw(st.lists(job_ids, min_size=1, max_size=3)))))
        elif kind == 3:
            events.append(RequestedCall(time))
        else:
            events.append(NoMoreStaticJobs(time))
    return events


def event_key(event) -> tuple:
    if isinstance(event, JobSubmitted):
        job = event.job
        return ("JobSubmitted", event.time, job.id, job.res, job.walltime, job.profile, job.runtime)
    return (type(event).__name__, *(getattr(event, f) for f in event.__slots__))


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(event_lists())
def test_random_event_lists_survive_a_round_trip(events):
    scheduler = SchedulerCodec()
    scheduler.decode(begins())
    _, (_, decoded) = batsim_to_sched(events, scheduler=scheduler)
    assert [event_key(e) for e in decoded] == [event_key(e) for e in events]
    for sent, got in zip(events, decoded):
        if isinstance(sent, JobSubmitted):
            assert got.job.subtime == sent.time
            assert got.job.extras == {**sent.job.extras, "workload_subtime": sent.job.subtime}


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 2 ** 300))
def test_interval_strings_round_trip_to_bit_masks(mask):
    from batsim_classifier_scheduler.core.machines import from_interval_string, to_interval_string

    text = to_interval_string(mask)
    assert text == str(ProcSet.from_str(text)) and from_interval_string(text) == mask



_JOB_VALUES = st.one_of(st.none(), st.booleans(), st.integers(-3, 3), st.floats(-2.0, 2.0, allow_nan=False),
                        st.sampled_from([-1, -1.0, 0, 1e9, "", "x", "w0!1", "1", 1, [], {}]))
_MISSING = object()


@settings(max_examples=400, deadline=None)
@given(changes=st.dictionaries(st.sampled_from(["id", "subtime", "res", "walltime", "profile", "user"]),
                               st.one_of(st.just(_MISSING), _JOB_VALUES), max_size=2),
       job_id=st.sampled_from(["w0!1", "w1!1"]))
def test_read_job_fast_path_is_the_field_by_field_check(changes, job_id):
    """read_job accepts the usual job at once: on a valid job with up to two fields changed or removed, it returns
    or raises what the field-by-field check does."""
    from batsim_classifier_scheduler.batsim.rules import _read_job, read_job
    from batsim_classifier_scheduler.batsim.wire import Invalid

    job = {"id": job_id, "subtime": 3, "res": 2, "walltime": 60.0, "profile": "p", "user": 7}
    job.update(changes)
    job = {key: value for key, value in job.items() if value is not _MISSING}

    def outcome(read):
        try:
            return read(dict(job), job_id, "data.job")
        except Invalid as exc:
            return str(exc)

    assert outcome(read_job) == outcome(_read_job)
