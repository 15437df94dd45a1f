"""The limits a site states, kept by construction (``--kill-limit``, ``--waste-limit``,
:mod:`batsim_classifier_scheduler.core.decision.admission`), decided in-process: on random workloads, under FCFS and SPF, no run kills
more than K of its jobs or wastes more than W of its useful work at any moment (checked after every decision), and,
with ``--promote-overdue killed-one``, no killed job waits past the longest first-attempt wait plus EASY's bound."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from batsim_classifier_scheduler.compose import build_core
from batsim_classifier_scheduler.config import SchedulerConfig
from batsim_classifier_scheduler.core.decision.admission import Admission
from batsim_classifier_scheduler.core.messages import KILLED, Execute, JobCompleted, JobSubmitted, Kill
from batsim_classifier_scheduler.errors import ConfigError
from batsim_classifier_scheduler.sim.engine import BatsimEngine, SimulationOptions

from tests.helpers import make_workload, preset
from tests.test_overdue import TOLERANT, killed_waits, workloads
from tests.test_safeguard import StubClassifier

#: classification-limited's rules (a preset), its limits aside, with the retries' wait bound tried beside them
#: (measured worse: ``--promote-overdue killed-one`` cost HPC2N a third of the gain).
LIMITED = {**{name: value for name, value in SchedulerConfig.variant(preset("classification-limited")).to_dict().items()
              if name in ("probe_threshold", "divider_estimates", "probe_length", "probe_limit", "kill_on", "kill_for",
                          "head_slack", "promote_after", "order_by", "promote_scope")},
           "promote_overdue": "killed-one"}


class LikelyClassifier(StubClassifier):
    """A stub whose P(small) of job ``w0!i`` is ``likely[i]``."""

    def __init__(self, small_ids, divider, uncertain_ids, likely):
        super().__init__(small_ids, divider, uncertain_ids)
        self.likely = likely

    def p_small(self, job_id):
        return self.likely[int(job_id.partition("!")[2].partition("#")[0])]


def run(jobs, nb_res, small=(), uncertain=(), divider=100.0, policy="fcfs", base=None, likely=None, users=None,
        **options):
    """A run decided in-process; after every decision, what the run has done so far is checked against the limits.
    Returns the jobs' table, the core and the number of decisions checked. ``likely``: the jobs' P(small), by
    index (the forest's probabilities, for ``limit_order`` p-small); ``users``: the jobs' users, by index."""
    config = SchedulerConfig(**{"classifier": "rf", "safeguard": "kill", **(base or LIMITED), **options},
                             policy=policy)
    classifier = (StubClassifier(set(small), divider, set(uncertain)) if likely is None
                  else LikelyClassifier(set(small), divider, set(uncertain), likely))
    core = build_core(config, classifier=classifier)
    seen = {"submitted": 0, "killed": set(), "wasted": 0.0, "useful": 0.0, "starts": {}, "checks": 0}
    kills, waste = config.kill_limit, config.waste_limit

    def decide(now, events):
        for event in events:
            if isinstance(event, JobSubmitted) and "#" not in event.job.id:
                seen["submitted"] += 1
            elif isinstance(event, JobCompleted):
                work = core.jobs[event.job_id].res * (now - seen["starts"][event.job_id])
                seen["wasted" if event.state == KILLED else "useful"] += work
        decisions = core.decide(now, events)
        for decision in decisions:
            if isinstance(decision, Execute):
                seen["starts"][decision.job_id] = now
            elif isinstance(decision, Kill):
                seen["killed"].update(decision.job_ids)
        # at every moment: the jobs killed (a kill decided counts at once), the work the killed attempts wasted
        if kills is not None:
            assert len(seen["killed"]) <= kills * seen["submitted"]
        if waste is not None:
            assert seen["wasted"] <= waste * seen["useful"] * (1 + 1e-9)
        assert core.limits is None or core.limits.admission.holds()
        seen["checks"] += 1
        return decisions

    options = SimulationOptions(enable_dynamic_jobs=True, acknowledge_dynamic_jobs=True, enable_profile_reuse=True)
    workload = make_workload(jobs, nb_res, **({"user": users} if users is not None else {}))
    result = BatsimEngine(workload, options=options).run(decide)
    assert core.limits is None or core.limits.admission.open == 0  # every trial resolved
    return result.jobs.set_index("job_id"), core, seen["checks"]


def first_attempt_waits(table):
    first = table[~table.index.str.contains("#", regex=False)]
    return first["starting_time"] - first["submission_time"]


def assert_wait_bounded(table, core, longest_request):
    """Each killed job's total wait is at most max(F x the longest wait of any first attempt in the run, its wait up
    to the kill) plus the longest request for itself and for each overdue job that started between its becoming due
    and its start (EASY's bound for the first waiting job, one overdue job at a time)."""
    longest = first_attempt_waits(table).max()
    starts = {f"w0!{job_id}": start for job_id, start in table["starting_time"].items()}
    for original, (submitted, killed, start, retry) in killed_waits(table, core).items():
        due = core.overdue.due_since.get(retry)
        if due is None:  # started before it was due
            assert start - submitted <= max(longest, killed - submitted) + 1e-6
            continue
        assert due - submitted <= max(longest, killed - submitted) + 1e-6
        before = sum(due <= starts[other] < start for other in core.overdue.due_since if other != retry)
        assert start - submitted <= max(longest, killed - submitted) + (before + 1) * longest_request + 1e-6


def assert_one_moved_job_per_user(table, core):
    """Each user's lane holds one promoted job at a time, from its promotion to its end; returns the lanes, per user
    the (promotion, end) of its promoted jobs, in order."""
    lanes: dict = {}
    for job_id, promoted in core.overdue.promoted.items():
        finish = table.loc[job_id.partition("!")[2], "finish_time"]
        lanes.setdefault(core.jobs[job_id].extras.get("user"), []).append((promoted, finish))
    for held in lanes.values():
        held.sort()
        assert all(end <= next_start + 1e-6 for (_, end), (next_start, _) in zip(held, held[1:]))
    return lanes


def assert_lanes_bounded(table, core, longest_request):
    """``--promote-overdue queue-user`` (classification-guaranteed): each job of Q (every job it ends as large: a retry,
    a job refused a trial or withdrawn from one) waits past the bound (the longest wait of a first attempt started
    unpromoted, or its wait when it entered Q) only once due, and becomes due when its wait reaches it; a due job waits
    only while its user's lane is held, each lane holding one promoted job at a time, from its promotion to its end;
    a promoted job starts within EASY's bound (the longest request) for itself and each promoted job started before
    it. So a user's k-th due job waits at most the bound plus the k - 1 before it, start to end, plus EASY's bound."""
    overdue, longest = core.overdue, core.overdue.overdue.longest
    at = {f"w0!{job_id}": row for job_id, row in table.iterrows()}
    lanes = assert_one_moved_job_per_user(table, core)
    def killed_wait(job_id):
        original = core.book.origin.get(job_id)
        return at[original]["finish_time"] - core.jobs[job_id].subtime if original else 0.0

    for job_id, row in at.items():
        wait = row["starting_time"] - core.jobs[job_id].subtime
        if "class=large" in row["metadata"] and wait > max(longest, killed_wait(job_id)) + 1e-6:
            assert job_id in overdue.due_since, job_id  # a job of Q past the bound was watched
    for job_id, due in overdue.due_since.items():
        job, row = core.jobs[job_id], at[job_id]
        # due when its wait reached the bound, or when it entered Q (a retry, a trial withdrawn) already past it
        assert due <= max(job.subtime + max(longest, killed_wait(job_id)), overdue.entered[job_id]) + 1e-6
        promoted = overdue.promoted.get(job_id, row["starting_time"])
        # from due to its promotion (or its start), its user's lane was held without a gap
        reached = due
        for start, end in lanes.get(job.extras.get("user"), []):
            if start <= reached + 1e-6 < end:
                reached = end
        assert promoted <= reached + 1e-6
        if job_id in overdue.promoted:
            before = sum(promoted <= at[other]["starting_time"] < row["starting_time"]
                         for other in overdue.promoted if other != job_id)
            assert row["starting_time"] - promoted <= (before + 1) * longest_request + 1e-6


# --- the arithmetic ------------------------------------------------------------------------------------------


def test_a_trial_is_granted_only_if_the_jobs_limit_holds_were_every_open_trial_killed():
    admission = Admission(kills=0.2)
    for _ in range(10):
        admission.submit()
    assert admission.grant("a", 1, 100.0) and admission.grant("b", 1, 100.0)  # 0 + 2 <= 0.2 x 10
    assert not admission.grant("c", 1, 100.0) and admission.refused == 1  # 3 > 2
    admission.ended("a", 100.0, killed=True)  # resolves to killed: 1 + 1 open
    assert not admission.grant("c", 1, 100.0)
    admission.ended("b", 50.0, killed=False)  # passed: 1 + 0 open
    assert admission.grant("c", 1, 100.0) and admission.holds()


def test_a_trial_is_granted_only_if_the_work_limit_covers_its_processors_times_its_length():
    admission = Admission(waste=0.1)
    assert not admission.grant("a", 1, 1.0)  # nothing completed yet: nothing to waste
    admission.ended("x", 10_000.0, killed=False)  # 1,000 may be wasted
    assert admission.grant("a", 4, 200.0)  # 800
    assert not admission.grant("b", 2, 150.0)  # 800 + 300 > 1,000
    assert admission.grant("b", 1, 200.0)  # 1,000
    assert admission.covered == 1_000.0 and admission.holds()


def test_a_likelier_job_takes_the_place_of_a_trial_not_started_yet():
    admission = Admission(kills=0.2)
    for _ in range(10):
        admission.submit()
    for job_id, p_small in (("a", 0.3), ("b", 0.05)):
        assert admission.grant(job_id, 1, 100.0)
        admission.track(job_id, p_small)
    assert not admission.grant("c", 1, 100.0)
    assert admission.displace("c", 1, 100.0, 0.04, lambda job_id: True) is None  # less likely than both
    assert admission.displace("c", 1, 100.0, 0.2, lambda job_id: job_id != "b") is None  # b started; a is likelier
    assert admission.displace("c", 1, 100.0, 0.6, lambda job_id: job_id != "b") == "a"  # a withdrawn, c granted
    assert admission.is_open("c") and not admission.is_open("a") and admission.open == 2 and admission.holds()
    assert admission.withdrawn == 1 and admission.refused == 0


def test_a_trial_past_its_end_is_covered_while_the_limit_allows_then_released():
    admission = Admission(waste=0.1)
    admission.ended("x", 10_000.0, killed=False)
    assert admission.grant("a", 2, 100.0)  # 200
    assert admission.cover("a", 150.0)  # within what it was granted
    assert admission.cover("a", 900.0) and admission.covered == 900.0  # raised
    assert not admission.cover("a", 1_100.0)  # the limit cannot cover it: released, never killed
    assert admission.released == 1 and not admission.is_open("a") and admission.covered == 0.0


# --- in-process: constructed runs -----------------------------------------------------------------------------

# Three short jobs, then uncertain job 3 (3 processors, asks 10,000 s, runs 2,000 s) is tried and killed at the end of
# its trial (100 s) for small job 4, which needs the whole machine; jobs 5 and 6 (uncertain) come later.
SPENT = [(0, 1, 20, 5)] * 3 + [(6, 3, 10_000, 2_000), (10, 4, 50, 50), (150, 3, 1_000, 200), (160, 3, 1_000, 200)]


def test_while_the_limit_is_taken_by_open_trials_and_kills_a_new_job_gets_no_trial_and_is_large():
    table, core, _ = run(SPENT, 4, small={"w0!4"}, uncertain={"w0!3", "w0!5", "w0!6"}, base=TOLERANT,
                         kill_limit=0.4)
    # job 3: 0 + 1 of 0.4 x 4 submitted; job 4 (small): 0 + 2 of 0.4 x 5; it runs from 106 to 156
    assert table.loc["3", "metadata"] == "class=uncertain" and table.loc["4", "metadata"] == "class=small"
    assert table.loc["3", "final_state"] == "COMPLETED_KILLED"  # the kill is not refused
    assert table.loc["5", "metadata"] == "class=large"  # at 150: 1 killed + 1 open (job 4) + 1 > 0.4 x 6
    assert table.loc["6", "metadata"] == "class=uncertain"  # at 160 job 4's trial has passed: 1 + 0 + 1 <= 0.4 x 7
    assert core.limits.admission.refused == 1 and core.kills.kills == 2  # job 6 too: 2 of 7 <= 0.4 x 7


# Job 0 (4 processors) completes at 1,000 (4,000 of useful work); large job 1 (2 processors, runs 2,500 s) and
# uncertain job 2 (2 processors, asks 5,000 s, runs 3,000 s) start at 1,000 and 1,001; small job 3 needs the whole
# machine. Under kill_on patient job 2 runs on past its trial (100 s) until job 3 could start with its processors,
# at 3,500, when job 1 ends: killed then, it would have wasted 4,998, which a waste limit of 0.5 x 9,000 cannot cover.
PATIENT = [(0, 4, 1_000, 1_000), (1_000, 2, 2_500, 2_500), (1_001, 2, 5_000, 3_000), (1_050, 4, 50, 50)]


def test_a_job_past_its_trial_that_the_limit_no_longer_covers_is_released_not_refused():
    patient = {**TOLERANT, "kill_on": "patient"}
    table, core, _ = run(PATIENT, 4, small={"w0!3"}, uncertain={"w0!2"}, base=patient)
    assert table.loc["2", "final_state"] == "COMPLETED_KILLED" and table.loc["2", "finish_time"] == 3_500
    table, core, _ = run(PATIENT, 4, small={"w0!3"}, uncertain={"w0!2"}, base=patient, waste_limit=0.5)
    assert table.loc["2", "metadata"] == "class=uncertain"  # granted: 200 of 2,000
    assert table.loc["2", "final_state"] == "COMPLETED_SUCCESSFULLY" and core.limits.admission.released == 1
    assert core.kills.kills == 0 and table.loc["3", "starting_time"] == 4_001


# --- in-process: random workloads ---------------------------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(workloads(), st.sampled_from(["fcfs", "spf"]), st.sampled_from([30.0, 100.0]),
       st.sampled_from([0.1, 0.25, 0.5]), st.sampled_from([None, 0.01, 0.05, 0.3]),
       st.sampled_from(["limited", "guaranteed", "blocking", "patient", "demand"]),
       st.sampled_from(["arrival", "p-small", "value"]),
       st.sampled_from(["none", "waiting"]), st.randoms(use_true_random=False))
def test_no_run_ever_kills_or_wastes_more_than_its_limits(workload, policy, divider, kills, waste, rules, order,
                                                          readmit, rng):
    jobs, small, uncertain = workload
    base = {"limited": LIMITED, "guaranteed": {**LIMITED, "promote_overdue": "queue-user"}}.get(
        rules, {**TOLERANT, "kill_on": rules})
    likely = [rng.random() for _ in jobs]
    _, core, checks = run(jobs, 4, small=small, uncertain=uncertain, divider=divider, policy=policy, base=base,
                          kill_limit=kills, waste_limit=waste, limit_order=order, readmit=readmit, likely=likely)
    assert checks > 0 and core.limits.admission.submitted == len(jobs)


@settings(max_examples=40, deadline=None)
@given(workloads(), st.sampled_from(["fcfs", "spf"]), st.sampled_from([30.0, 100.0]), st.sampled_from([0.25, 0.5]))
def test_no_killed_job_waits_past_the_longest_wait_of_a_job_never_killed_plus_easys_bound(workload, policy, divider,
                                                                                         kills):
    jobs, small, uncertain = workload
    table, core, _ = run(jobs, 4, small=small, uncertain=uncertain, divider=divider, policy=policy, kill_limit=kills)
    assert_wait_bounded(table, core, max(walltime for _, _, walltime, _ in jobs))


@settings(max_examples=80, deadline=None)
@given(workloads(), st.sampled_from(["fcfs", "spf"]), st.sampled_from([30.0, 100.0]), st.sampled_from([0.1, 0.25, 0.5]),
       st.sampled_from([None, 0.05]), st.lists(st.integers(0, 2), min_size=14, max_size=14),
       st.randoms(use_true_random=False))
def test_a_due_job_waits_only_while_its_users_lane_is_held(workload, policy, divider, kills, waste, users, rng):
    jobs, small, uncertain = workload
    table, core, _ = run(jobs, 4, small=small, uncertain=uncertain, divider=divider, policy=policy, kill_limit=kills,
                         waste_limit=waste, limit_order="value", readmit="waiting", likely=[rng.random() for _ in jobs],
                         promote_overdue="queue-user", users=users[:len(jobs)])
    assert_lanes_bounded(table, core, max(walltime for _, _, walltime, _ in jobs))


def test_a_trial_withdrawn_into_q_is_watched_by_the_waits_bound():
    # job 0 holds the machine until 1,000; uncertain job 1 (P(small) 0.1) is granted the one trial the limit allows,
    # then withdrawn for job 2 (0.9) before it started: it waits in Q, where a stream of small jobs would hold it
    # until the stream ends, but once its wait reaches the bound it moves ahead
    jobs = [(0, 4, 1_000, 1_000), (1, 2, 5_000, 3_000), (2, 2, 50, 40)]
    jobs += [(1_000 + 50 * i, 1, 300, 200) for i in range(400)]
    stream = {f"w0!{i}" for i in range(3, len(jobs))}
    likely = [0.0, 0.1, 0.9] + [1.0] * (len(jobs) - 3)
    table, core, _ = run(jobs, 4, small=stream, uncertain={"w0!1", "w0!2"}, divider=100.0, kill_limit=0.5,
                         limit_order="value", readmit="none", likely=likely, promote_overdue="queue-user")
    assert table.loc["1", "metadata"] == "class=large" and core.limits.admission.refused >= 1
    assert "w0!1" in core.overdue.promoted and table.loc["1", "starting_time"] < 1_000 + 50 * 400
    assert_lanes_bounded(table, core, 5_000)


# Small job 1 waits 100 s behind job 0 (the bound: 100 s); large job 4 then holds the machine until 1,150. Uncertain
# job 2 (the whole machine) waits in its queue from 160; large job 3 (one processor) is due at 300.
OVERTAKEN = [(0, 4, 100, 100), (0, 4, 50, 50), (160, 4, 5_000, 50), (200, 1, 10, 10), (150, 4, 1_000, 1_000)]


def test_with_queue_user_ahead_a_job_due_takes_along_the_older_waiting_jobs_ahead_of_it():
    starts = {}
    for scope in ("queue-user", "queue-user-ahead"):
        table, core, _ = run(OVERTAKEN, 4, small={"w0!1"}, uncertain={"w0!2"}, promote_overdue=scope)
        starts[scope] = table["starting_time"].to_dict()
        assert core.overdue.due_since["w0!3"] == 300.0  # its wait reached the bound
    assert starts["queue-user"]["3"] == 1_150 and starts["queue-user"]["2"] == 1_160  # job 3 overtook job 2
    assert core.overdue.due_since["w0!2"] == 300.0  # taken along by job 3
    assert starts["queue-user-ahead"]["2"] == 1_150 and starts["queue-user-ahead"]["3"] == 1_200


@settings(max_examples=60, deadline=None)
@given(workloads(), st.sampled_from([30.0, 100.0]), st.sampled_from([0.25, 0.5]),
       st.lists(st.integers(0, 2), min_size=14, max_size=14))
def test_under_fcfs_with_queue_user_ahead_no_move_overtakes_an_older_waiting_job(workload, divider, kills, users):
    """Under FCFS every older job is ahead: when a job becomes due, every first attempt submitted before it and still
    waiting is due too (taken along, or due itself); one moved job at a time per user, as under queue-user."""
    jobs, small, uncertain = workload
    table, core, _ = run(jobs, 4, small=small, uncertain=uncertain, divider=divider, kill_limit=kills,
                         promote_overdue="queue-user-ahead", users=users[:len(jobs)])
    due_since = core.overdue.due_since
    firsts = {f"w0!{job_id}": row["starting_time"] for job_id, row in table.iterrows() if "#" not in job_id}
    for job_id, due in due_since.items():
        for other, start in firsts.items():
            if core.jobs[other].subtime < core.jobs[job_id].subtime and start > due:
                assert due_since.get(other, due + 1) <= due, (other, job_id)
    assert_one_moved_job_per_user(table, core)


def test_the_limits_need_kills_decided_by_the_core():
    with pytest.raises(ConfigError, match="kill_on blocking, demand or patient"):
        SchedulerConfig(classifier="rf", safeguard="kill", kill_limit=0.1)
    with pytest.raises(ConfigError, match="kill_limit"):
        SchedulerConfig(**TOLERANT, kill_limit=0.0)
    with pytest.raises(ConfigError, match="limit_order"):
        SchedulerConfig(**TOLERANT, limit_order="p-small")


def test_classification_limited_is_ordered_with_the_limits():
    limited = SchedulerConfig.variant(preset("classification-limited")).to_dict()
    ordered = SchedulerConfig.variant("classification-ordered").to_dict()
    assert limited == {**ordered, "kill_limit": 0.10, "waste_limit": 0.01, "limit_order": "value",
                       "readmit": "waiting"}


def test_classification_guaranteed_is_limited_with_the_waits_of_q_bounded_one_lane_per_user():
    guaranteed = SchedulerConfig.variant("classification-guaranteed").to_dict()
    limited = SchedulerConfig.variant(preset("classification-limited")).to_dict()
    assert guaranteed == {**limited, "promote_overdue": "queue-user"}


@settings(max_examples=40, deadline=None)
@given(workloads(), st.sampled_from(["fcfs", "spf"]), st.sampled_from([0.1, 0.25, 0.5]),
       st.sampled_from([None, 0.05, 0.3]), st.sampled_from(["arrival", "value"]), st.randoms(use_true_random=False))
def test_trials_granted_later_keep_the_limits_and_registrations_open_while_one_may_come(workload, policy, kills, waste,
                                                                                       order, rng):
    jobs, small, uncertain = workload
    run(jobs, 4, small=small, uncertain=uncertain, policy=policy, kill_limit=kills, waste_limit=waste,
        limit_order=order, readmit="waiting", likely=[rng.random() for _ in jobs])
