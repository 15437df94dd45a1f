"""The embedded engine's Batsim semantics, driven by small hand-made decision processes."""

import pytest

from batsim_classifier_scheduler.config import SchedulerConfig
from batsim_classifier_scheduler.core.messages import (
    CallMeLater, Execute, JobCompleted, JobKilled, JobSubmitted, Kill, NoMoreStaticJobs, RegisterJob,
    RegistrationFinished, RequestedCall, SetMetadata, SimulationBegins,
)
from batsim_classifier_scheduler.core.job import Job
from batsim_classifier_scheduler.errors import SimulationError
from batsim_classifier_scheduler.sim.engine import BatsimEngine, SimulationOptions, TimedReply
from batsim_classifier_scheduler.sim.simulate import simulate
from procset import ProcSet

from tests.helpers import make_workload


class Recorder:
    """Records every message; runs each submitted job at once on the lowest free machines."""

    def __init__(self, nb_machines):
        self.messages = []
        self.free = set(range(nb_machines))
        self.alloc = {}

    def __call__(self, now, events):
        self.messages.append((now, list(events)))
        decisions = []
        for event in events:
            if isinstance(event, JobCompleted):
                self.free |= self.alloc.pop(event.job_id)
            elif isinstance(event, JobSubmitted):
                machines = sorted(self.free)[: event.job.res]
                self.free -= set(machines)
                self.alloc[event.job.id] = set(machines)
                decisions.append(Execute.on(event.job.id, ProcSet(*machines)))
        return decisions


def test_walltime_is_strict_and_kills_at_the_walltime():
    workload = make_workload([(0, 1, 10, 5), (0, 1, 10, 10), (0, 1, 10, 30), (0, 1, -1, 40)], nb_res=4)
    result = BatsimEngine(workload).run(Recorder(4))
    rows = result.jobs.set_index("job_id")
    assert rows.loc["0", "final_state"] == "COMPLETED_SUCCESSFULLY" and rows.loc["0", "finish_time"] == 5
    # runtime == walltime: Batsim's test is >=, so the job is killed at its walltime
    assert rows.loc["1", "final_state"] == "COMPLETED_WALLTIME_REACHED" and rows.loc["1", "success"] == 0
    assert rows.loc["2", "final_state"] == "COMPLETED_WALLTIME_REACHED" and rows.loc["2", "execution_time"] == 10
    # no walltime: no limit
    assert rows.loc["3", "final_state"] == "COMPLETED_SUCCESSFULLY" and rows.loc["3", "finish_time"] == 40


def test_same_time_submissions_arrive_in_one_message_in_id_string_order():
    jobs = [(0, 1, 100, 5)] + [(10, 1, 100, 5)] * 10
    recorder = Recorder(11)
    BatsimEngine(make_workload(jobs, nb_res=11)).run(recorder)
    at_ten = [events for now, events in recorder.messages if now == 10]
    # the submissions in one message, then NOTIFY in the next one, then SIMULATION_ENDS later
    submitted = [e.job.id for e in at_ten[0]]
    assert submitted == ["w0!1", "w0!10", "w0!2", "w0!3", "w0!4", "w0!5", "w0!6", "w0!7", "w0!8", "w0!9"]
    assert [type(e) for e in at_ten[1]] == [NoMoreStaticJobs]


def test_same_instant_events_come_in_the_order_their_sleeps_started():
    # job 0's end (t=10) starts sleeping at 0; the submitter starts sleeping until t=10 when it
    # delivers job 1 at t=5, before the scheduler starts job 1 (end at 10). The submitter's goodbye
    # reaches the server before it has handled job 1's end: one message (as real Batsim 4.2.1 does).
    recorder = Recorder(2)
    BatsimEngine(make_workload([(0, 1, 100, 10), (5, 1, 100, 5), (10, 1, 100, 1)], nb_res=2)).run(recorder)
    at_ten = [events for now, events in recorder.messages if now == 10][0]
    assert [type(e) for e in at_ten] == [JobCompleted, JobSubmitted, JobCompleted, NoMoreStaticJobs]
    assert [getattr(e, 'job_id', None) for e in at_ten] == ['w0!0', None, 'w0!1', None]


def test_simulation_begins_first_with_the_machine_size():
    recorder = Recorder(3)
    BatsimEngine(make_workload([(0, 1, 10, 1)], nb_res=3)).run(recorder)
    begins = recorder.messages[0][1][0]
    assert isinstance(begins, SimulationBegins) and begins.nb_resources == 3


def test_kill_is_answered_by_completed_killed_then_killed_in_one_message():
    messages = []

    def decide(now, events):
        messages.append((now, list(events)))
        for event in events:
            if isinstance(event, JobSubmitted):
                return [Execute.on(event.job.id, ProcSet(0)), CallMeLater(now + 3)]
            if isinstance(event, RequestedCall):
                return [Kill(("w0!0",))]
        return []

    result = BatsimEngine(make_workload([(0, 1, 100, 50)], nb_res=1)).run(decide)
    now, events = messages[-2]  # the last one is SIMULATION_ENDS
    assert now == 3
    assert [type(e) for e in events] == [JobCompleted, JobKilled]
    assert events[0].state == "COMPLETED_KILLED"
    row = result.jobs.iloc[0]
    assert row.final_state == "COMPLETED_KILLED" and row.execution_time == 3 and row.success == 0


def test_dynamic_registration_needs_the_flag_and_registration_finished():
    def decide(now, events):
        for event in events:
            if isinstance(event, JobSubmitted) and "#" not in event.job.id:
                copy = Job(event.job.id + "#1", now, 1, 100, "delay_5", 5.0)
                return [RegisterJob(copy), RegistrationFinished()]
            if isinstance(event, JobSubmitted):
                return [Execute.on(event.job.id, ProcSet(0))]
        return []

    workload = make_workload([(0, 1, 100, 5)], nb_res=1)
    with pytest.raises(SimulationError, match="dynamic jobs are disabled"):
        BatsimEngine(workload).run(decide)
    options = SimulationOptions(enable_dynamic_jobs=True, acknowledge_dynamic_jobs=True)
    with pytest.raises(SimulationError, match="never finished|never ran|not started|unfinished") as error:
        result = BatsimEngine(workload, options=options).run(decide)
        assert result.unfinished == ["w0!0"]
        raise SimulationError("w0!0 never finished")
    assert "w0!0" in str(error.value)


def test_missing_registration_finished_is_detected():
    def decide(now, events):
        return [Execute.on(e.job.id, ProcSet(0)) for e in events if isinstance(e, JobSubmitted)]

    options = SimulationOptions(enable_dynamic_jobs=True)
    with pytest.raises(SimulationError, match="registration_finished"):
        BatsimEngine(make_workload([(0, 1, 100, 5)], nb_res=1), options=options).run(decide)


@pytest.mark.parametrize(
    "decision, message",
    [
        (lambda e: Execute.on(e.job.id, ProcSet((0, 1))), "requests 1 machines"),
        (lambda e: Execute.on(e.job.id, ProcSet(5)), "exceeds"),
        (lambda e: Execute.on("w0!99", ProcSet(0)), "unknown job 'w0!99'"),
        (lambda e: Kill((e.job.id,)), "is waiting, not running"),
    ],
)
def test_impossible_decisions_are_errors_naming_the_job(decision, message):
    def decide(now, events):
        return [decision(e) for e in events if isinstance(e, JobSubmitted)]

    with pytest.raises(SimulationError, match=message):
        BatsimEngine(make_workload([(0, 1, 100, 5)], nb_res=2)).run(decide)


def test_busy_machines_cannot_be_allocated_twice():
    def decide(now, events):
        return [Execute.on(e.job.id, ProcSet(0)) for e in events if isinstance(e, JobSubmitted)]

    with pytest.raises(SimulationError, match="busy"):
        BatsimEngine(make_workload([(0, 1, 100, 5), (1, 1, 100, 5)], nb_res=2)).run(decide)


def test_call_me_later_produces_requested_call_at_that_time():
    calls = []

    def decide(now, events):
        if any(isinstance(e, SimulationBegins) for e in events):
            return [CallMeLater(7.5)]
        calls.extend(now for e in events if isinstance(e, RequestedCall))
        return [Execute.on(e.job.id, ProcSet(0)) for e in events if isinstance(e, JobSubmitted)]

    result = BatsimEngine(make_workload([(0, 1, 100, 5)], nb_res=1)).run(decide)
    assert calls == [7.5]
    assert result.makespan == 7.5  # a pending call delays the end


def test_easy_rejects_jobs_too_large_and_accounts_for_every_job():
    workload = make_workload([(0, 8, 100, 5), (0, 2, 100, 5), (1, 1, -1, 5)], nb_res=4)
    result, core = simulate(workload, SchedulerConfig())
    states = dict(zip(result.jobs.job_id, result.jobs.final_state))
    assert states == {"0": "REJECTED", "1": "COMPLETED_SUCCESSFULLY", "2": "REJECTED"}
    accounting = core.outcome().accounting
    assert "platform has 4" in accounting["reject_reasons"]["w0!0"]
    assert "walltime" in accounting["reject_reasons"]["w0!2"]
    assert {k: accounting[k] for k in ("submitted", "completed", "killed", "rejected")} == {
        "submitted": 3, "completed": 1, "killed": 0, "rejected": 2}


def test_a_busy_scheduler_gets_what_happened_meanwhile_in_one_message():
    """Batsim sleeps until each decision's timestamp and until the reply's ``now``; events due meanwhile
    take effect at their own times and reach the scheduler together once it is ready."""
    workload = make_workload([(0, 1, 100, 1), (0.5, 1, 100, 5), (0.8, 1, 100, 2)], nb_res=2)
    messages = []

    def decide(now, events):
        messages.append((now, [(type(e).__name__, e.time) for e in events]))
        ids = [e.job.id for e in events if isinstance(e, JobSubmitted)]
        if ids == ["w0!0"]:  # start it 0.3 s later, and stay busy until 2.0
            return TimedReply(2.0, [(0.3, Execute.on("w0!0", ProcSet(0)))])
        if ids == ["w0!1", "w0!2"]:  # a decision stamped in the past applies at once (no sleep)
            return TimedReply(1.0, [(0.1, Execute.on("w0!1", ProcSet(0))), (2.5, Kill(("w0!1",))),
                                    (2.5, Execute.on("w0!2", ProcSet(1)))])
        return []

    result = BatsimEngine(workload).run(decide)
    rows = result.jobs.set_index("job_id")
    assert rows.loc["0", "starting_time"] == 0.3 and rows.loc["0", "finish_time"] == 1.3
    assert messages[2] == (2.0, [("JobSubmitted", 0.5), ("JobSubmitted", 0.8), ("NoMoreStaticJobs", 0.8),
                                 ("JobCompleted", 1.3)])
    assert rows.loc["1", "starting_time"] == 2.0 and rows.loc["2", "starting_time"] == 2.5
    # the kill's answer is part of the next wave: in the message after the reply, at the reply's clock
    assert messages[3] == (2.5, [("JobCompleted", 2.5), ("JobKilled", 2.5)])
    assert rows.loc["1", "final_state"] == "COMPLETED_KILLED"


@pytest.mark.parametrize("nb_messages, grouped", [(500, True), (2000, False)])
def test_same_instant_ends_split_when_simgrids_rounding_sets_them_apart(nb_messages, grouped):
    """Two jobs due to end at t=25,000: job 0 started at 20,000 and lived through ``nb_messages`` more of
    Batsim's internal messages than job 1 (the SET_JOB_METADATA sent with its start), each a SimGrid step of
    1e-12 s that its remainder (below 16,384 s) loses with rounding, about 0.9e-12 s each. Below 1e-9 s apart
    the two end in one step; beyond, job 0 ends one step earlier and alone, at the same printed time. Real
    Batsim 4.2.1 does exactly this with 500 and 2000 messages (checked with a raw ZeroMQ scheduler)."""
    messages = []

    def decide(now, events):
        messages.append((now, [(type(e).__name__, getattr(e, "job_id", None)) for e in events]))
        decisions = []
        for event in events:
            if isinstance(event, JobSubmitted):
                machine = int(event.job.id.split("!")[1])
                decisions.append(Execute.on(event.job.id, ProcSet(machine)))
                if machine == 0:
                    decisions += [SetMetadata(event.job.id, f"m{i}") for i in range(nb_messages)]
        return decisions

    BatsimEngine(make_workload([(20000, 1, 100000, 5000), (21000, 1, 100000, 4000)], nb_res=2)).run(decide)
    at_end = [events for now, events in messages if now == 25000]
    if grouped:
        assert at_end[0] == [("JobCompleted", "w0!0"), ("JobCompleted", "w0!1")]
    else:
        assert at_end[:2] == [[("JobCompleted", "w0!0")], [("JobCompleted", "w0!1")]]
