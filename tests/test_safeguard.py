"""Q_small and the kill/resubmit safeguard, with a stub classifier so that classes are chosen by the test."""

import pytest

from batsim_classifier_scheduler.compose import build_core
from batsim_classifier_scheduler.config import SchedulerConfig
from batsim_classifier_scheduler.core.job import JobClass
from batsim_classifier_scheduler.core.messages import (CallMeLater, Kill, RegisterJob, RegisterProfile,
                                                       RegistrationFinished)
from batsim_classifier_scheduler.errors import ConfigError
from batsim_classifier_scheduler.sim.engine import BatsimEngine, SimulationOptions
from batsim_classifier_scheduler.metrics import fold_attempts, summarize

from tests.helpers import make_workload


class StubClassifier:
    """Small (and uncertain) = the job ids listed; a fixed divider; remembers what it was told."""

    def __init__(self, small_ids, divider=10.0, uncertain_ids=()):
        self.small_ids = set(small_ids)
        self.uncertain_ids = set(uncertain_ids)
        self.divider = divider
        self.completions = []

    def classify(self, job, now):
        if job.id in self.uncertain_ids:
            return JobClass.UNCERTAIN
        return JobClass.SMALL if job.id in self.small_ids else JobClass.LARGE

    def divider_at(self, now):
        return self.divider

    def completed(self, job, runtime, now):
        self.completions.append((job.id, runtime, now))


def run(jobs, nb_res, small_ids, config=None, ack=True, divider=10.0, uncertain_ids=()):
    config = config or SchedulerConfig(classifier="oracle", safeguard="kill")
    classifier = StubClassifier(small_ids, divider, uncertain_ids)
    core = build_core(config, classifier=classifier)
    messages = []

    def decide(now, events):
        decisions = core.decide(now, events)
        messages.append((now, list(events), decisions))
        return decisions

    options = SimulationOptions(enable_dynamic_jobs=True, acknowledge_dynamic_jobs=ack, enable_profile_reuse=True)
    result = BatsimEngine(make_workload(jobs, nb_res), options=options).run(decide)
    return result, core, classifier, messages


def test_q_small_runs_before_older_large_jobs():
    # job 0 occupies the machine; then large job 1 and small job 2 wait; small goes first
    result, *_ = run([(0, 1, 100, 50), (1, 1, 100, 5), (2, 1, 100, 5)], 1, {"w0!2"},
                     SchedulerConfig(classifier="oracle"))
    starts = dict(zip(result.jobs.job_id, result.jobs.starting_time))
    assert starts == {"0": 0, "2": 50, "1": 55}


def test_a_small_job_outliving_the_divider_is_killed_and_resubmitted_as_large():
    result, core, classifier, messages = run([(0, 2, 100, 30), (0, 1, 100, 5)], 2, {"w0!0", "w0!1"})
    rows = {row.job_id: row for row in result.jobs.itertuples()}
    # killed exactly divider (10 s) after its start; small job 1, waiting since 0, runs next
    # (Q_small first), then the job reruns in full as the large w0!0#1
    assert rows["0"].final_state == "COMPLETED_KILLED" and rows["0"].finish_time == 10
    assert rows["1"].starting_time == 10
    assert rows["0#1"].final_state == "COMPLETED_SUCCESSFULLY"
    assert rows["0#1"].starting_time == 15 and rows["0#1"].execution_time == 30
    assert rows["0#1"].metadata == "parent=w0!0;class=large"
    assert rows["0"].metadata == "class=small"
    # the decisions: CALL_ME_LATER at start + divider, KILL_JOB then, REGISTER_JOB after the kill
    decisions = [d for _, _, ds in messages for d in ds]
    assert CallMeLater(10.0) in decisions
    assert Kill(("w0!0",)) in decisions
    registered = [d.job.id for d in decisions if isinstance(d, RegisterJob)]
    assert registered == ["w0!0#1"]
    assert sum(isinstance(d, RegistrationFinished) for d in decisions) == 1
    # the small job that finished in time was not killed; the classifier learnt both runtimes
    assert rows["1"].final_state == "COMPLETED_SUCCESSFULLY"
    assert sorted(classifier.completions) == [("w0!0", 30.0, 45.0), ("w0!1", 5.0, 15.0)]
    assert sorted(core.states.values()) == ["completed", "completed", "killed"]


def test_a_job_ending_exactly_at_the_divider_is_not_killed():
    result, *_ = run([(0, 1, 100, 10)], 1, {"w0!0"})
    assert list(result.jobs.final_state) == ["COMPLETED_SUCCESSFULLY"]


@pytest.mark.parametrize("ack", [True, False])
def test_resubmission_works_with_and_without_acknowledgement(ack):
    result, *_ = run([(0, 1, 100, 30)], 1, {"w0!0"}, ack=ack)
    assert list(result.jobs.job_id) == ["0", "0#1"]


def test_metrics_fold_the_attempts_into_the_original_job():
    result, *_ = run([(0, 2, 100, 30), (0, 1, 100, 5)], 2, {"w0!0", "w0!1"})
    folded = fold_attempts(result.jobs).set_index("job_id")
    assert folded.loc["0", "runtime"] == 30 and folded.loc["0", "response"] == 45
    assert folded.loc["0", "wasted_core_seconds"] == 20  # 10 s on 2 machines
    summary = summarize(result.jobs, nb_machines=2)
    assert summary["nb_kills"] == 1 and summary["nb_jobs"] == 2


def test_the_safeguard_needs_dynamic_jobs():
    core = build_core(SchedulerConfig(classifier="oracle", safeguard="kill"), classifier=StubClassifier(()))
    with pytest.raises(ConfigError, match="--enable-dynamic-jobs"):
        BatsimEngine(make_workload([(0, 1, 10, 5)], 1)).run(core.decide)


def test_without_profile_reuse_a_copy_of_the_profile_is_registered():
    core = build_core(SchedulerConfig(classifier="oracle", safeguard="kill"), classifier=StubClassifier({"w0!0"}))
    options = SimulationOptions(enable_dynamic_jobs=True)
    messages = []

    def decide(now, events):
        decisions = core.decide(now, events)
        messages.extend(decisions)
        return decisions

    result = BatsimEngine(make_workload([(0, 1, 100, 30)], 1), options=options).run(decide)
    profiles = [d for d in messages if isinstance(d, RegisterProfile)]
    assert profiles and profiles[0].delay == 30 and profiles[0].workload == "w0"
    job = [d.job for d in messages if isinstance(d, RegisterJob)][0]
    assert job.profile == profiles[0].name
    assert list(result.jobs.final_state) == ["COMPLETED_KILLED", "COMPLETED_SUCCESSFULLY"]


def test_the_engine_refuses_a_garbage_collected_profile_like_batsim():
    # reusing the killed job's profile without --enable-profile-reuse aborts real Batsim
    from batsim_classifier_scheduler.core.messages import (Execute, JobSubmitted, RegisterJob as Register,
                                                           RegistrationFinished as Done)
    from batsim_classifier_scheduler.core.job import Job
    from batsim_classifier_scheduler.errors import SimulationError
    from procset import ProcSet

    def decide(now, events):
        for event in events:
            if isinstance(event, JobSubmitted) and "#" not in event.job.id:
                return [Execute.on(event.job.id, ProcSet(0))]
        if now == 5:
            return [Register(Job("w0!0#1", 5, 1, 100, "delay_5", 5.0)), Done()]
        return []

    with pytest.raises(SimulationError, match="no longer accessible"):
        BatsimEngine(make_workload([(0, 1, 100, 5)], 1), options=SimulationOptions(enable_dynamic_jobs=True)).run(decide)


def test_safeguard_without_classifier_is_a_config_error():
    with pytest.raises(ConfigError, match="needs a classifier"):
        SchedulerConfig(safeguard="kill")


def test_a_kill_that_races_a_completion_does_not_block_registration():
    # Batsim answers a kill of a job that just ended with its normal JOB_COMPLETED and an
    # empty JOB_KILLED: nothing is resubmitted, and registration can still finish.
    from batsim_classifier_scheduler.core.messages import (JobCompleted, JobKilled, JobSubmitted, NoMoreStaticJobs,
                                                           SimulationBegins)
    from batsim_classifier_scheduler.core.job import Job

    core = build_core(SchedulerConfig(classifier="oracle", safeguard="kill"), classifier=StubClassifier({"w0!0"}))
    core.decide(0, [SimulationBegins(0, 1, {"dynamic-jobs-enabled": True})])
    core.decide(0, [JobSubmitted(0, Job("w0!0", 0, 1, 100, "p", 50.0)), NoMoreStaticJobs(0)])
    assert Kill(("w0!0",)) in core.decide(10, [])
    decisions = core.decide(10, [JobCompleted(10, "w0!0", "COMPLETED_SUCCESSFULLY"), JobKilled(10, ("w0!0",))])
    assert not any(isinstance(d, RegisterJob) for d in decisions)
    assert RegistrationFinished() in decisions


def test_a_killed_job_keeps_its_place_in_the_queue_order():
    # Algorithm 2 moves the same job from Q_small to Q: under FCFS, w0!0#1 (submitted at 0) runs before
    # the large job w0!1 submitted at 1, although Batsim registers it only at the kill (t = 10)
    result, core, *_ = run([(0, 1, 100, 30), (1, 1, 100, 5)], 1, {"w0!0"})
    rows = {row.job_id: row for row in result.jobs.itertuples()}
    assert rows["0#1"].submission_time == 10 and rows["0#1"].starting_time == 10
    assert rows["1"].starting_time == 40
    assert core.jobs["w0!0#1"].subtime == 0


def test_uncertain_jobs_queue_between_small_and_large_ones_and_the_safeguard_watches_them():
    # job 0 holds the machine until 50; then small 3 runs first, uncertain 2 next (killed at the divider),
    # large 1 after it, and 2's resubmission last (same place as 1 in FCFS, larger id)
    jobs = [(0, 1, 100, 50), (1, 1, 100, 5), (1, 1, 100, 30), (1, 1, 100, 5)]
    result, *_ = run(jobs, 1, {"w0!3"}, uncertain_ids={"w0!2"})
    rows = {row.job_id: row for row in result.jobs.itertuples()}
    assert [rows[j].starting_time for j in ("3", "2", "1", "2#1")] == [50, 55, 65, 70]
    assert rows["2"].final_state == "COMPLETED_KILLED" and rows["2"].metadata == "class=uncertain"


@pytest.mark.parametrize("divider_estimates, start", [("all", 2), ("running", 105), ("none", 105)])
def test_divider_estimates_let_a_watched_job_backfill_within_the_divider(divider_estimates, start):
    # job 0 (large) holds one of two machines until 100; small job 1 needs both and is reserved at 100;
    # small job 2 asks for 1000 s: planned with p̃ it cannot backfill, planned with the divider (10 s) it can
    config = SchedulerConfig(classifier="oracle", safeguard="kill", divider_estimates=divider_estimates)
    jobs = [(0, 1, 100, 100), (1, 2, 1000, 5), (2, 1, 1000, 5)]
    result, *_ = run(jobs, 2, {"w0!1", "w0!2"}, config)
    starts = dict(zip(result.jobs.job_id, result.jobs.starting_time))
    assert starts["2"] == start and starts["1"] == 100


@pytest.mark.parametrize("options, says", [
    (dict(classifier="rf", probe_threshold=0.1), "safeguard"),
    (dict(classifier="oracle", safeguard="kill", probe_threshold=0.1), "classifier 'rf'"),
    (dict(classifier="rf", safeguard="kill", classifier_threshold=0.3, probe_threshold=0.3), "below"),
    (dict(classifier="rf", divider_estimates="running"), "safeguard"),
])
def test_probing_options_need_the_safeguard(options, says):
    with pytest.raises(ConfigError, match=says):
        SchedulerConfig(**options)


@pytest.mark.parametrize("divider_estimates", ["none", "running", "all"])
def test_a_running_watched_job_is_planned_to_end_within_the_divider(divider_estimates):
    # small job 0 runs on one of two machines from 0, asking for 100 s (it ends at 8; the safeguard would kill
    # it at 10); large job 1 needs both machines and holds the reservation: with the bound at 10, without it
    # at 100, so large job 2 (one machine, asking for 20 s) can backfill at 2 only without the bound
    config = SchedulerConfig(classifier="oracle", safeguard="kill", divider_estimates=divider_estimates)
    jobs = [(0, 1, 100, 8), (1, 2, 100, 5), (2, 1, 20, 5)]
    result, *_ = run(jobs, 2, {"w0!0"}, config)
    starts = dict(zip(result.jobs.job_id, result.jobs.starting_time))
    assert starts["1"] == 8
    assert starts["2"] == (2 if divider_estimates == "none" else 13)


PROBING = dict(classifier="rf", safeguard="kill", probe_threshold=0.02)


@pytest.mark.parametrize("options, trial", [
    ({}, 100.0),                                   # the whole divider
    (dict(probe_length=0.5), 50.0),                # F x divider
    (dict(probe_length=0.5, probe_limit=40), 40.0),  # capped at S seconds
])
def test_an_uncertain_jobs_trial_run_follows_the_probe_options_and_a_small_job_keeps_the_divider(options, trial):
    # uncertain job 0 (8 of 8 processors) runs 500 s: the safeguard kills it after its trial; small job 1 then
    # runs 150 s and is killed at the full divider (100 s) whatever the probe options
    jobs = [(0, 8, 1000, 500), (0, 8, 1000, 150)]
    result, *_ = run(jobs, 8, {"w0!1"}, SchedulerConfig(**PROBING, **options), divider=100.0,
                     uncertain_ids={"w0!0"})
    rows = {row.job_id: row for row in result.jobs.itertuples()}
    assert rows["1"].starting_time == 0 and rows["1"].finish_time == pytest.approx(100.0)
    assert rows["0"].final_state == "COMPLETED_KILLED"
    assert rows["0"].finish_time - rows["0"].starting_time == pytest.approx(trial)


@pytest.mark.parametrize("options", [{}, dict(probe_length=0.5, probe_limit=40)])
def test_a_watched_jobs_trial_ignores_its_own_runtime(options):
    # no leakage: the class and the trial length come from what is known at submission; two runtimes past the
    # trial give the same first attempt, the same metadata and the same kill
    outcomes = []
    for runtime in (300, 900):
        result, _, _, messages = run([(0, 4, 1000, runtime), (5, 4, 1000, 20)], 8, set(),
                                     SchedulerConfig(**PROBING, **options), divider=100.0, uncertain_ids={"w0!0"})
        first = result.jobs.set_index("job_id").loc[["0", "1"], ["starting_time", "finish_time", "metadata"]]
        decided = [(now, [d for d in decisions if not isinstance(d, (RegisterJob, RegisterProfile))])  # its profile
                   for now, _, decisions in messages if now <= first.finish_time["0"]]
        outcomes.append((first, decided))
    assert outcomes[0][0].equals(outcomes[1][0]) and outcomes[0][1] == outcomes[1][1]


def test_a_killed_attempt_waits_in_q():
    # job 0 holds the machine until 50; small 3 runs first, uncertain 2 next (killed at the divider); its
    # next attempt waits in Q, after the large job 1 (same subtime, lower id)
    jobs = [(0, 1, 100, 50), (1, 1, 100, 5), (1, 1, 100, 30), (1, 1, 100, 5)]
    result, *_ = run(jobs, 1, {"w0!3"}, SchedulerConfig(**PROBING), uncertain_ids={"w0!2"})
    starts = result.jobs.set_index("job_id").starting_time
    order = ["3", "2", "1", "2#1"]
    assert list(starts.loc[order]) == sorted(starts.loc[order])
