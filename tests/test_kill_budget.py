"""Issue 41: the safeguard's budgets (``--kill-budget``, ``--waste-budget``, ``--budget-window``,
:mod:`scheduler.core.kill_budget`): a run kills at most that share of its jobs and wastes at most that share of its
useful work, on any workload; decided in-process."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scheduler.config import SchedulerConfig
from scheduler.core.kill_budget import KillBudget
from scheduler.errors import ConfigError

from tests.test_overdue import TOLERANT, run, workloads


def test_the_jobs_budget_counts_kills_against_submissions():
    budget = KillBudget(jobs=0.2)
    for _ in range(10):
        budget.submitted(0.0)
    assert budget.kill(1.0, 5.0) and budget.kill(2.0, 5.0)
    assert not budget.allows(3.0) and not budget.kill(3.0, 5.0) and budget.refused == 1
    budget.submitted(4.0)
    assert not budget.allows(4.0)  # 3 kills would need 15 jobs
    for _ in range(4):
        budget.submitted(5.0)
    assert budget.kill(6.0, 5.0)


def test_the_work_budget_counts_lost_work_against_completed_work():
    budget = KillBudget(work=0.01)
    assert not budget.allows(0.0, 1.0)  # nothing completed yet: no work may be lost
    budget.completed(10.0, 1_000.0)
    assert budget.allows(10.0, 10.0) and not budget.allows(10.0, 10.5)
    assert budget.kill(11.0, 6.0) and not budget.kill(12.0, 6.0)
    assert budget.allows(12.0)  # a kill losing nothing is still affordable


def test_a_window_forgets_what_is_older_than_it():
    budget = KillBudget(jobs=0.5, window=100.0)
    budget.submitted(0.0)
    budget.submitted(10.0)
    assert budget.kill(20.0, 0.0) and not budget.allows(20.0)
    budget.submitted(106.0)
    budget.submitted(110.0)
    assert not budget.allows(119.0)  # within (19, 119]: 2 submissions, the kill at 20 s
    assert budget.allows(121.0)  # within (21, 121]: the same submissions, no kill


# Three short large jobs end at 5 s. Job 3 (3 of 4 processors, uncertain, asks 10,000 s, runs 2,000 s) gets a trial
# (100 s), at whose end small job 4, which needs the whole machine, would wait behind it: it is killed then (1 kill of
# 5 jobs). Jobs 5 and 6 (uncertain, 3 processors, 200 s) come later.
SPENT = [(0, 1, 20, 5)] * 3 + [(6, 3, 10_000, 2_000), (10, 4, 50, 50), (150, 3, 1_000, 200), (160, 3, 1_000, 200)]
UNCERTAIN = {"w0!3", "w0!5", "w0!6"}


def test_once_the_jobs_budget_is_spent_no_trial_is_given():
    table, core = run(SPENT, 4, small={"w0!4"}, uncertain=UNCERTAIN, overdue="none")
    assert table.loc["5", "metadata"] == table.loc["6", "metadata"] == "class=uncertain"  # without a budget: tried
    assert table.loc["3", "final_state"] == "COMPLETED_KILLED" and core.safeguard.kills == 2
    table, core = run(SPENT, 4, small={"w0!4"}, uncertain=UNCERTAIN, overdue="none", kill_budget=0.25)
    assert table.loc["3", "final_state"] == "COMPLETED_KILLED"  # 1 kill of 5 jobs: within the budget
    assert table.loc["5", "metadata"] == table.loc["6", "metadata"] == "class=large"  # 2 of 6, 2 of 7: spent
    assert core.safeguard.kills == 1 and core.kill_budget.refused == 0


def test_a_refused_kill_lets_the_job_run_on_to_its_end():
    table, core = run(SPENT[:5], 4, small={"w0!4"}, uncertain={"w0!3"}, overdue="none", waste_budget=0.5)
    assert table.loc["3", "metadata"] == "class=uncertain"  # tried: nothing lost yet
    assert table.loc["3", "final_state"] == "COMPLETED_SUCCESSFULLY"  # 300 lost of 15 done: over the budget
    assert table.loc["4", "starting_time"] == 2_006 and core.kill_budget.refused == 1
    assert "3#1" not in table.index


@settings(max_examples=100, deadline=None)
@given(workloads(), st.sampled_from(["fcfs", "spf"]), st.sampled_from([30.0, 100.0]),
       st.sampled_from([0.1, 0.25]), st.sampled_from([None, 0.05, 0.3]))
def test_no_run_kills_or_wastes_more_than_its_budgets(workload, policy, divider, jobs_share, work_share):
    jobs, small, uncertain = workload
    table, core = run(jobs, 4, small=small, uncertain=uncertain, divider=divider, policy=policy, overdue="none",
                      kill_budget=jobs_share, waste_budget=work_share)
    killed = table[table["final_state"] == "COMPLETED_KILLED"]
    assert len(killed) <= jobs_share * len(jobs)
    if work_share is not None:
        done = table[table["final_state"] == "COMPLETED_SUCCESSFULLY"]
        lost = (killed["execution_time"] * killed["requested_number_of_resources"]).sum()
        useful = (done["execution_time"] * done["requested_number_of_resources"]).sum()
        assert lost <= work_share * useful + 1e-6


@pytest.mark.parametrize("options, match", [
    (dict(kill_budget=0.1, kill_on="deadline"), "kill_on blocking"),
    (dict(waste_budget=0.01, kill_on="demand"), "kill_on blocking"),
    (dict(kill_budget=0.0), "kill_budget"),
    (dict(kill_budget=0.1, budget_window=-1), "budget_window"),
])
def test_budgets_need_blocking_kills_and_a_share(options, match):
    with pytest.raises(ConfigError, match=match):
        SchedulerConfig(**{**TOLERANT, **options})


def test_a_window_needs_a_budget():
    with pytest.raises(ConfigError, match="budget_window"):
        SchedulerConfig(**TOLERANT, budget_window=604_800)
