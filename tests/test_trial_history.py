"""Issue 41: ``--trial-gate user-history``, ``request-history`` and ``user-pause``: an uncertain job gets no trial (it
waits in Q as large) once the last ``--trial-history`` uncertain jobs of its user (with its request) failed their
trial, as the scheduler saw them end; decided in-process with a stub classifier (trials of 100 s)."""

import pytest

from scheduler.compose import build_core
from scheduler.config import SchedulerConfig
from scheduler.core.trial_history import TrialHistory
from scheduler.errors import ConfigError
from scheduler.sim.engine import BatsimEngine, SimulationOptions

from tests.helpers import make_workload
from tests.test_safeguard import StubClassifier

#: User 7's two first uncertain jobs run 500 s (killed after their 100 s trials); then, at 1000 s, a third job of
#: theirs (same request unless said otherwise) and one of user 8.
FAILED_TWICE = [(0, 1, 1000, 500), (0, 1, 1000, 500)]


def run(jobs, users, gate, depth=None):
    options = {"trial_history": depth} if depth else {}
    config = SchedulerConfig(classifier="rf", safeguard="kill", probe_threshold=0.02, trial_gate=gate, **options)
    core = build_core(config, classifier=StubClassifier(set(), 100.0, {f"w0!{i}" for i in range(len(jobs))}))
    sim = SimulationOptions(enable_dynamic_jobs=True, acknowledge_dynamic_jobs=True, enable_profile_reuse=True)
    result = BatsimEngine(make_workload(jobs, 4, user=users), options=sim).run(core.decide)
    return core, result.jobs.set_index("job_id")


def tried(core, index):
    return f"w0!{index}" in core.small  # watched by the safeguard, on a trial


@pytest.mark.parametrize("gate, same_request, third_tried", [
    ("none", True, True), ("user-history", True, False), ("user-history", False, False),
    ("request-history", True, False), ("request-history", False, True)])
def test_a_user_whose_last_trials_failed_gets_none(gate, same_request, third_tried):
    third = (1000, 1, 1000, 50) if same_request else (1000, 2, 1000, 50)
    core, jobs = run([*FAILED_TWICE, third, (1000, 1, 1000, 50)], [7, 7, 7, 8], gate)
    assert not jobs.loc["0", "success"] and not jobs.loc["1", "success"]  # both trials were killed
    assert tried(core, 2) is third_tried
    assert jobs.loc["2", "metadata"] == ("class=uncertain" if third_tried else "class=large")
    assert tried(core, 3)  # another user's trials have not failed


def test_fewer_failures_than_the_depth_gate_nothing():
    core, _ = run([*FAILED_TWICE, (1000, 1, 1000, 50)], [7, 7, 7], "user-history", depth=3)
    assert tried(core, 2)


def test_a_trial_that_paid_in_between_keeps_the_user_tried():
    jobs = [(0, 1, 1000, 500), (50, 1, 1000, 80), (300, 1, 1000, 500), (1000, 1, 1000, 50)]
    core, _ = run(jobs, [7, 7, 7, 7], "user-history")  # outcomes as seen: killed, paid, killed
    assert tried(core, 3)


def test_a_job_given_no_trial_that_ran_within_one_earns_the_user_trials_back():
    jobs = [*FAILED_TWICE, (1000, 1, 1000, 50), (2000, 1, 1000, 50)]
    core, table = run(jobs, [7, 7, 7, 7], "user-history", depth=1)
    assert not tried(core, 2) and table.loc["2", "success"]  # gated, it ran 50 s: a trial would have paid
    assert tried(core, 3)


def test_the_history_holds_the_last_outcomes_only():
    history = TrialHistory(2)
    for paid in (True, False, False):
        history.record("u", paid)
    assert history.failing("u") and not history.failing("v")
    history.record("u", True)
    assert not history.failing("u")


def test_the_depth_needs_a_history_gate():
    with pytest.raises(ConfigError, match="trial_history"):
        SchedulerConfig(classifier="rf", safeguard="kill", probe_threshold=0.02, trial_history=3)


@pytest.mark.parametrize("gate, fourth_tried", [("user-history", False), ("user-pause", True)])
def test_a_job_given_no_trial_that_ran_long_pauses_the_user_or_keeps_them_gated(gate, fourth_tried):
    jobs = [*FAILED_TWICE, (1000, 1, 1000, 500), (3000, 1, 1000, 50)]
    core, _ = run(jobs, [7, 7, 7, 7], gate)
    assert not tried(core, 2)  # gated; it ran 500 s, past the 100 s trial it would have had
    assert tried(core, 3) is fourth_tried
