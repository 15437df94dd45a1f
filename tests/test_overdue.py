"""Issue 41: no job killed by the safeguard waits, in all, past the longest wait of a first attempt by more than
EASY's bound for the first waiting job (``--promote-overdue``, :mod:`batsim_classifier_scheduler.core.overdue`), decided in-process."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from batsim_classifier_scheduler.compose import build_core
from batsim_classifier_scheduler.config import SchedulerConfig
from batsim_classifier_scheduler.core.job import Job
from batsim_classifier_scheduler.errors import ConfigError
from batsim_classifier_scheduler.core.overdue import OVERDUE_RANK, Overdue
from batsim_classifier_scheduler.core.policies import get_policy
from batsim_classifier_scheduler.core.queue import JobQueue
from batsim_classifier_scheduler.sim.engine import BatsimEngine, SimulationOptions

from tests.helpers import make_workload, preset
from tests.test_safeguard import StubClassifier

# classification-tolerant's rules (its head slack and promotion included), with or without the guarantee
TOLERANT = dict(classifier="rf", safeguard="kill", probe_threshold=0.02, divider_estimates="all", kill_on="blocking",
                kill_for="order", head_slack=0.3, promote_after=7.0, order_by="estimate")


def run(jobs, nb_res, small=(), uncertain=(), divider=100.0, policy="fcfs", overdue="killed", **options):
    config = SchedulerConfig(**TOLERANT, policy=policy, promote_overdue=overdue, **options)
    core = build_core(config, classifier=StubClassifier(set(small), divider, set(uncertain)))
    options = SimulationOptions(enable_dynamic_jobs=True, acknowledge_dynamic_jobs=True, enable_profile_reuse=True)
    result = BatsimEngine(make_workload(jobs, nb_res), options=options).run(core.decide)
    return result.jobs.set_index("job_id"), core


def killed_waits(table, core):
    """Per original job killed at least once: its submission, kill, final start and the id of its last attempt."""
    out = {}
    for job_id in table.index:
        if "#" in job_id:
            original = job_id.partition("#")[0]
            out[original] = (table.loc[original, "submission_time"], table.loc[original, "finish_time"],
                             table.loc[job_id, "starting_time"], f"w0!{job_id}")
    return out


def assert_bounded(table, core, longest_request):
    """Each killed job's total wait is at most max(the longest first-attempt wait, its wait up to the kill) plus the
    longest request for itself and for each overdue job that started between its promotion and its start."""
    longest = core.overdue.overdue.longest
    starts = {f"w0!{job_id}": start for job_id, start in table["starting_time"].items()}
    for original, (submitted, killed, start, retry) in killed_waits(table, core).items():
        due = core.overdue.due_since.get(retry)
        if due is None:  # started before it was due
            assert start - submitted <= max(longest, killed - submitted)
            continue
        assert due - submitted <= max(longest, killed - submitted)  # due when its wait reached the bound, not later
        before = sum(due <= starts[other] < start for other in core.overdue.due_since if other != retry)
        assert start - submitted <= max(longest, killed - submitted) + (before + 1) * longest_request


# Job 0 (3 of 4 processors, uncertain, asks 10,000 s, runs 2,000 s) starts and is killed at the end of its trial
# (100 s) for small job 1, which needs the whole machine. Then a stream of uncertain single-processor jobs, one
# every 50 s, each running 300 s, keeps three processors busy ahead of Q: killed job 0 waits in Q behind them.
STREAM = [(0, 3, 10_000, 2_000), (10, 4, 50, 50)] + [(100 + 50 * i, 1, 400, 300) for i in range(400)]
STREAM_UNCERTAIN = {"w0!0", *(f"w0!{i}" for i in range(2, len(STREAM)))}


def test_a_killed_job_behind_a_stream_of_trials_starves_without_the_guarantee():
    table, _ = run(STREAM, 4, small={"w0!1"}, uncertain=STREAM_UNCERTAIN, overdue="none")
    assert table.loc["0", "final_state"] == "COMPLETED_KILLED"
    # only promotion after seven requests (70,000 s) frees it, well after the stream has dried up
    assert table.loc["0#1", "starting_time"] >= 100 + 50 * 400


@pytest.mark.parametrize("scope", ["killed", "killed-one"])
def test_a_killed_job_leaves_q_once_it_has_waited_the_longest_wait_so_far(scope):
    table, core = run(STREAM, 4, small={"w0!1"}, uncertain=STREAM_UNCERTAIN, overdue=scope)
    retry_start = table.loc["0#1", "starting_time"]
    assert "w0!0#1" in core.overdue.promoted and retry_start < 2_000
    assert retry_start - core.overdue.promoted["w0!0#1"] <= 10_000  # EASY: the first waiting job's wait is bounded
    assert_bounded(table, core, 10_000)


@st.composite
def workloads(draw):
    n = draw(st.integers(3, 14))
    jobs, small, uncertain = [], set(), set()
    for i in range(n):
        walltime = draw(st.integers(20, 600))
        jobs.append((draw(st.integers(0, 400)), draw(st.integers(1, 4)), walltime, draw(st.integers(1, walltime))))
        kind = draw(st.sampled_from(["small", "uncertain", "large"]))
        (small if kind == "small" else uncertain if kind == "uncertain" else set()).add(f"w0!{i}")
    return jobs, small, uncertain


@settings(max_examples=120, deadline=None)
@given(workloads(), st.sampled_from(["fcfs", "spf"]), st.sampled_from([30.0, 100.0]),
       st.sampled_from(["killed", "killed-one", "killed-planned"]))
def test_no_killed_job_waits_past_the_bound(workload, policy, divider, scope):
    jobs, small, uncertain = workload
    table, core = run(jobs, 4, small=small, uncertain=uncertain, divider=divider, policy=policy, overdue=scope)
    assert_bounded(table, core, max(walltime for _, _, walltime, _ in jobs))


def test_the_longest_wait_counts_first_attempts_only_and_never_shrinks():
    overdue = Overdue()
    overdue.started(50.0)
    overdue.started(20.0)
    assert overdue.longest == 50.0
    overdue.watch("b", 30.0)
    overdue.watch("a", 10.0)
    assert overdue.next_due() == 60.0
    assert overdue.due(59.0, lambda job_id: True) == []
    assert overdue.due(80.0, lambda job_id: job_id != "b") == ["a"]  # b no longer waits: forgotten
    assert overdue.next_due() is None


def test_one_at_a_time_the_oldest_due_job_moves_once_the_previous_one_started():
    overdue, waiting = Overdue(), {"a", "b", "c"}
    submission = {"a": 30.0, "b": 10.0, "c": 20.0}.get
    assert overdue.one_at_a_time(["a", "b"], submission, waiting.__contains__) == ["b"]
    assert overdue.one_at_a_time(["c"], submission, waiting.__contains__) == []  # b still waits
    waiting.discard("b")  # b started
    assert overdue.one_at_a_time([], submission, waiting.__contains__) == ["c"]


@pytest.mark.parametrize("policy", ["fcfs", "spf"])
def test_overdue_jobs_go_first_oldest_first_whatever_the_policy(policy):
    queue = JobQueue(get_policy(policy))
    jobs = [Job(f"w0!{i}", float(i), 1, walltime, "p") for i, walltime in enumerate((900.0, 10.0, 500.0, 5.0))]
    queue.push(jobs[3], 5.0, rank=0)
    queue.push(jobs[2], 500.0, rank=OVERDUE_RANK)
    queue.push(jobs[0], 900.0, rank=OVERDUE_RANK)
    queue.push(jobs[1], 10.0, rank=2)
    assert [job.id for job in queue.ordered(0.0)] == ["w0!0", "w0!2", "w0!3", "w0!1"]


def test_classification_guarded_is_tolerant_with_killed_jobs_moved_one_at_a_time_past_the_longest_wait():
    guarded = SchedulerConfig.variant(preset("classification-guarded")).to_dict()
    tolerant = SchedulerConfig.variant(preset("classification-tolerant")).to_dict()
    assert guarded == {**tolerant, "promote_overdue": "killed-one"}


def test_classification_ordered_is_tolerant_whose_promotions_take_the_first_job_of_q_along():
    ordered = SchedulerConfig.variant("classification-ordered").to_dict()
    tolerant = SchedulerConfig.variant(preset("classification-tolerant")).to_dict()
    assert ordered == {**tolerant, "promote_scope": "head"}
