"""When the safeguard kills a watched job past its trial (``kill_on``), and which jobs a promotion moves out of Q:
each rule decided in-process, with a stub classifier choosing the classes."""

import pytest

from batsim_classifier_scheduler.compose import build_core
from batsim_classifier_scheduler.config import SchedulerConfig
from batsim_classifier_scheduler.core.messages import Kill, RegisterJob, RegisterProfile
from batsim_classifier_scheduler.errors import ConfigError
from batsim_classifier_scheduler.sim.engine import BatsimEngine, SimulationOptions

from tests.helpers import make_workload, preset
from tests.test_safeguard import StubClassifier

# probing with the planning rule of the variants: a watched job is planned to end within its trial
PROBING = dict(classifier="rf", safeguard="kill", probe_threshold=0.02, divider_estimates="all")
# classification-tolerant's kill rule
TOLERANT = dict(kill_for="order", head_slack=0.3, promote_after=7)


def run(jobs, nb_res, kill_on, small=(), uncertain=("w0!0",), divider=100.0, options=None, **extras):
    config = SchedulerConfig(**PROBING, kill_on=kill_on, **(options or {}))
    core = build_core(config, classifier=StubClassifier(set(small), divider, set(uncertain)))
    messages = []

    def decide(now, events):
        decisions = core.decide(now, events)
        messages.append((now, decisions))
        return decisions

    options = SimulationOptions(enable_dynamic_jobs=True, acknowledge_dynamic_jobs=True, enable_profile_reuse=True)
    result = BatsimEngine(make_workload(jobs, nb_res, **extras), options=options).run(decide)
    return result.jobs.set_index("job_id"), messages


def kills(messages):
    return [(now, decision.job_ids) for now, decisions in messages for decision in decisions
            if isinstance(decision, Kill)]


@pytest.mark.parametrize("kill_on, killed, options", [("deadline", True, {}), ("blocking", False, {}),
                                                      ("demand", False, {}), ("patient", False, {}),
                                                      ("blocking", False, TOLERANT)])
def test_a_trial_that_nobody_needs_goes_on(kill_on, killed, options):
    # uncertain job 0 (1 of 2 processors) runs 300 s, its trial 100 s; nothing waits for its processors
    jobs, messages = run([(0, 1, 1000, 300)], 2, kill_on, options=options)
    assert (jobs.loc["0", "final_state"] == "COMPLETED_KILLED") is killed
    if not killed:
        assert jobs.loc["0", "finish_time"] == 300 and kills(messages) == []


@pytest.mark.parametrize("kill_on, options", [("deadline", {}), ("blocking", {}), ("demand", {}),
                                              ("blocking", TOLERANT)])
def test_a_trial_that_blocks_the_reserved_job_is_killed_at_its_deadline(kill_on, options):
    # small job 1 (both processors) holds the reservation from 100, the end of job 0's trial: job 0 is in its way
    jobs, messages = run([(0, 1, 1000, 300), (5, 2, 50, 50)], 2, kill_on, small={"w0!1"}, options=options)
    assert kills(messages) == [(100, ("w0!0",))]
    assert jobs.loc["1", "starting_time"] == 100 and jobs.loc["0#1", "starting_time"] == 150


def test_patient_lets_a_trial_in_the_way_run_until_the_waiting_job_could_start():
    # job 2 (one processor, 400 s) holds the other processor until 410; small job 1 needs both: at job 0's
    # deadline (100) job 0 delays it, but job 1 could not start before 410 anyway, and job 0 ends at 300
    jobs, messages = run([(0, 1, 1000, 300), (5, 2, 50, 50), (10, 1, 400, 400)], 2, "patient", small={"w0!1"},
                         uncertain=("w0!0", "w0!2"), divider=1000.0)
    assert kills(messages) == [] and jobs.loc["0", "finish_time"] == 300


def test_a_trial_older_than_the_waiting_job_is_spared_under_fcfs():
    # large job 1 (Q, submitted at 5) would wait behind job 0 were it killed (Q, submitted at 0): job 0 runs on
    jobs, messages = run([(0, 1, 1000, 300), (5, 2, 50, 50)], 2, "blocking")
    assert kills(messages) == []
    assert jobs.loc["0", "finish_time"] == 300 and jobs.loc["1", "starting_time"] == 300


def test_on_demand_a_job_past_its_trial_is_killed_when_a_waiting_job_needs_its_processors():
    # at 100 nothing waits: job 0 runs on; at 200 small job 1 needs both processors. demand kills job 0 then;
    # blocking had spared it at its deadline, planned with its request, and job 1 waits until 500
    demand, demand_messages = run([(0, 1, 1000, 500), (200, 2, 50, 50)], 2, "demand", small={"w0!1"})
    blocking, blocking_messages = run([(0, 1, 1000, 500), (200, 2, 50, 50)], 2, "blocking", small={"w0!1"})
    assert kills(demand_messages) == [(200, ("w0!0",))] and demand.loc["1", "starting_time"] == 200
    assert kills(blocking_messages) == [] and blocking.loc["1", "starting_time"] == 500


def test_on_demand_the_youngest_jobs_past_their_trial_go_first_and_no_more_than_needed():
    # jobs 0, 1, 2 (one processor each of 4) started at 0, 10, 20 and outlive their trials; at 300 small job 3
    # needs two processors: the free one and the youngest overtime job's (2)
    jobs, messages = run([(0, 1, 1000, 900), (10, 1, 1000, 900), (20, 1, 1000, 900), (300, 2, 50, 50)], 4,
                         "demand", small={"w0!3"}, uncertain=("w0!0", "w0!1", "w0!2"))
    assert kills(messages) == [(300, ("w0!2",))]


@pytest.mark.parametrize("kill_on, options", [("blocking", {}), ("demand", {}), ("patient", {}),
                                              ("blocking", TOLERANT)])
@pytest.mark.parametrize("spared", [True, False])
def test_the_kill_decision_ignores_the_jobs_own_runtime(kill_on, options, spared):
    # no leakage: two runtimes past the trial give the same decisions up to the deadline and just after
    # (killed when small job 1 could start then with its processors; spared when large job 1 is younger)
    outcomes = []
    for runtime in (300, 900):
        _, messages = run([(0, 1, 1000, runtime), (5, 2, 50, 50)], 2, kill_on, small=() if spared else {"w0!1"},
                          options=options)
        outcomes.append([(now, [d for d in decisions if not isinstance(d, (RegisterJob, RegisterProfile))])
                         for now, decisions in messages if now <= 100])
    assert outcomes[0] == outcomes[1]
    assert bool(kills(outcomes[0])) is not spared


@pytest.mark.parametrize("kill_for, killed", [("requeued", True), ("policy", True), ("order", False)])
def test_under_spf_a_waiting_job_asking_longer_than_the_trial_job_goes_after_it_by_their_requests(kill_for, killed):
    # SPF: uncertain job 1 (both processors, asking 500 s) heads the queue, planned with its trial (100 s); job 0
    # (asking 400 s) outlives its trial at 100 and is in its way. By their requests job 1 comes after job 0
    jobs, messages = run([(0, 1, 400, 300), (5, 2, 500, 50)], 2, "blocking", uncertain=("w0!0", "w0!1"),
                         options=dict(policy="spf", kill_for=kill_for))
    assert bool(kills(messages)) is killed
    assert jobs.loc["1", "starting_time"] == (100 if killed else 300)


def test_under_fcfs_order_kills_for_an_older_large_job_and_policy_does_not():
    # job 2 holds a processor until 1000; large job 1 (Q, submitted at 0.5) needs both: reserved at 1000;
    # uncertain job 0 (submitted at 1) backfills, planned with its trial (100 s), and is in job 1's way at 101.
    # Job 1 is older: order and requeued kill job 0 for it; policy counts job 0 as uncertain, ahead of Q
    jobs = [(1, 1, 2000, 1500), (0.5, 2, 50, 50), (0, 1, 1000, 1000)]
    for kill_for, killed in (("order", True), ("policy", False), ("requeued", True)):
        _, messages = run(jobs, 2, "blocking", options=dict(kill_for=kill_for))
        assert bool(kills(messages)) is killed, kill_for


def test_classification_blocking_is_bounded_with_the_blocking_rule():
    blocking = SchedulerConfig.variant(preset("classification-blocking"))
    bounded = SchedulerConfig.variant(preset("classification-bounded"))
    assert (blocking.kill_on, blocking.kill_for) == ("blocking", "order")
    assert {**blocking.to_dict(), "kill_on": "deadline", "kill_for": "requeued"} == bounded.to_dict()


def test_classification_tolerant_is_blocking_with_a_head_slack_promotion_the_requests_order_and_longer_trials():
    tolerant = SchedulerConfig.variant(preset("classification-tolerant"))
    blocking = SchedulerConfig.variant(preset("classification-blocking"))
    assert (tolerant.head_slack, tolerant.promote_after, tolerant.order_by) == (0.3, 7.0, "estimate")
    assert (tolerant.probe_length, tolerant.probe_limit) == (1.0, 300.0)
    assert {**tolerant.to_dict(), "head_slack": 0.0, "promote_after": 0.0, "order_by": "planned",
            "probe_length": 0.5} == blocking.to_dict()


@pytest.mark.parametrize("order_by, first", [("planned", "1"), ("estimate", "2")])
def test_spf_orders_waiting_trials_by_their_request_with_order_by_estimate(order_by, first):
    # job 0 holds the one processor until 1000; uncertain jobs 1 (asking 5000 s) and 2 (asking 2000 s) wait, both
    # planned with their trial (100 s): planned ties them (broken by job id), estimate puts the shorter request first
    jobs = [(0, 1, 1000, 1000), (1, 1, 5000, 50), (2, 1, 2000, 50)]
    result, _ = run(jobs, 1, "blocking", uncertain=("w0!1", "w0!2"), options=dict(policy="spf", order_by=order_by))
    assert result.loc[first, "starting_time"] == 1000


def test_order_by_needs_waiting_jobs_planned_with_their_trial():
    with pytest.raises(ConfigError, match="order_by.*divider_estimates all"):
        SchedulerConfig(classifier="rf", safeguard="kill", order_by="estimate")


@pytest.mark.parametrize("options, says", [
    (dict(classifier="rf", kill_on="blocking"), "kill_on.*safeguard"),
    (dict(classifier="none", promote_after=7.0), "promote_after.*classifier"),
])
def test_the_options_need_what_they_act_on(options, says):
    with pytest.raises(ConfigError, match=says):
        SchedulerConfig(**options)


@pytest.mark.parametrize("head_slack, killed", [(0.0, True), (0.25, True), (0.3, False)])
def test_a_trial_delaying_a_large_head_by_little_of_its_request_is_spared(head_slack, killed):
    # job 2 holds a processor until 1000; large job 1 (Q, submitted at 0.5, asking 4000 s) needs both: reserved at
    # 1000. Uncertain job 0 backfills on its trial (100 s) and at 101 would, run on to its request (2001), delay
    # job 1 by 1001 s: killed unless that is within head_slack x job 1's request (0.25: 1000 s; 0.3: 1200 s)
    jobs = [(1, 1, 2000, 1500), (0.5, 2, 4000, 50), (0, 1, 1000, 1000)]
    result, messages = run(jobs, 2, "blocking", options=dict(kill_for="order", head_slack=head_slack))
    assert bool(kills(messages)) is killed
    assert result.loc["1", "starting_time"] == (1000 if killed else 1501)


def test_a_small_head_gets_no_head_slack():
    # the same, job 1 classified small: however large head_slack, job 0 is killed for it
    jobs = [(1, 1, 2000, 1500), (0.5, 2, 4000, 50), (0, 1, 1000, 1000)]
    _, messages = run(jobs, 2, "blocking", small={"w0!1"}, options=dict(kill_for="order", head_slack=10.0))
    assert kills(messages) == [(101, ("w0!0",))]


@pytest.mark.parametrize("promote_after, first", [(0.0, "2"), (5.0, "1"), (20.0, "2")])
def test_a_job_that_waited_its_request_several_times_over_leaves_q(promote_after, first):
    # job 0 holds the one processor until 1000. Large job 1 (Q, asking 100 s, submitted at 1) and uncertain job 2
    # (submitted at 2) wait; uncertain jobs go ahead of Q, unless job 1 has waited promote_after x 100 s by 1000:
    # then it waits with them, and FCFS puts it first
    jobs = [(0, 1, 1000, 1000), (1, 1, 100, 100), (2, 1, 1000, 50)]
    result, _ = run(jobs, 1, "blocking", uncertain=("w0!2",), options=dict(promote_after=promote_after))
    assert result.loc[first, "starting_time"] == 1000


def test_promotion_needs_a_classifier():
    with pytest.raises(ConfigError, match="promote_after.*classifier"):
        SchedulerConfig(promote_after=10)


@pytest.mark.parametrize("head_slack", [0.0, 0.3, 10.0])
def test_a_kill_that_lets_the_head_start_now_is_made_whatever_the_slack(head_slack):
    # job 2 holds a processor until 90; large job 1 (Q, submitted at 0.5, asking 20000 s) needs both; uncertain job 0
    # backfills on its trial (1 to 101). At 101 job 1 could start at once were job 0 killed: no slack holds it back
    jobs = [(1, 1, 2000, 1500), (0.5, 2, 20000, 50), (0, 1, 200, 90)]
    result, messages = run(jobs, 2, "blocking", options=dict(kill_for="order", head_slack=head_slack))
    assert kills(messages) == [(101, ("w0!0",))] and result.loc["1", "starting_time"] == 101


@pytest.mark.parametrize("scope, first", [("job", "2"), ("ahead", "1")])
def test_a_promotion_takes_along_the_jobs_of_q_before_it_in_the_policys_order(scope, first):
    # job 0 holds the one processor until 1000; large jobs 1 (asking 1000 s) and 2 (100 s) wait in Q, uncertain job 3
    # ahead of them. At 502, job 2 has waited 5 x its request: it leaves Q, and FCFS puts it before job 3; with scope
    # ahead, job 1, before it in Q, leaves Q with it and goes first (else it would wait till 5,001)
    jobs = [(0, 1, 1000, 1000), (1, 1, 1000, 100), (2, 1, 100, 100), (3, 1, 1000, 50)]
    result, _ = run(jobs, 1, "blocking", uncertain=("w0!3",), options=dict(promote_after=5, promote_scope=scope))
    assert result.loc[first, "starting_time"] == 1000


def test_the_scope_of_a_promotion_needs_a_promotion():
    with pytest.raises(ConfigError, match="promote_scope.*promote_after"):
        SchedulerConfig(**PROBING, promote_scope="ahead")
