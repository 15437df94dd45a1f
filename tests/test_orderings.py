"""Rosa et al.'s orderings: UNICEF, F2, Lin and polynomial scores from a θ file."""

import json

import pytest

from batsim_classifier_scheduler.compose import load_policy
from batsim_classifier_scheduler.config import SchedulerConfig
from batsim_classifier_scheduler.core.job import Job
from batsim_classifier_scheduler.core.policies import get_policy
from batsim_classifier_scheduler.core.queue import JobQueue
from batsim_classifier_scheduler.errors import ConfigError
from batsim_classifier_scheduler.sim.simulate import simulate
from batsim_classifier_scheduler.workloads.synthetic import generate


def job(i, res=1, subtime=0.0):
    return Job(f"w0!{i}", subtime, res, 1000.0)


def test_unicef():
    unicef = get_policy("unicef")
    assert unicef.dynamic
    # wait / (log2 q * p̃): 100 / (3 * 50) > 100 / (1 * 200); q = 1 behaves as q = 2
    assert unicef.key(job(1, res=8), 50, 100)[0] == pytest.approx(-100 / (3 * 50))
    assert unicef.key(job(2, res=1), 200, 100)[0] == pytest.approx(-100 / 200)
    assert unicef.key(job(3, res=2), 200, 100)[0] == pytest.approx(-100 / 200)
    assert unicef.key(job(4, res=1, subtime=100), 10, 100)[0] == 0  # no wait yet
    queue = JobQueue(unicef)
    a, b = job(1, res=8), job(2, res=1)
    queue.push(a, 50)
    queue.push(b, 200)
    assert queue.ordered(100) == [a, b]


def test_f2_and_lin():
    f2 = get_policy("f2")
    assert not f2.dynamic
    assert f2.key(job(1, res=4, subtime=1000), 100, 0)[0] == pytest.approx(10 * 4 + 2.56e4 * 3)
    assert f2.key(job(2, res=4, subtime=0), 100, 0)[0] == pytest.approx(40)  # log10(0) guarded
    assert f2.key(job(3, res=4, subtime=1), 100, 0)[0] == pytest.approx(40)
    lin = get_policy("lin")
    assert lin.key(job(1, res=10, subtime=1000), 100, 0)[0] == pytest.approx(
        3.24e-2 + 1.15e-7 * 100 + 2.61e-5 * 10 - 1.57e-7 * 1000)


def test_score_policy_from_theta():
    policy = get_policy("score:theta.json", {"theta": {"1": 1.0, "p": 2.0, "q*p": 0.5, "p^2": 0.01}})
    assert policy.name == "score:theta.json" and not policy.dynamic
    assert policy.key(job(1, res=4), 10, 0)[0] == pytest.approx(1 + 20 + 20 + 1)
    policy = get_policy("score:wait.json", {"w": -1.0, "p": 1e-3})
    assert policy.dynamic and policy.key(job(1), 1000, 50)[0] == pytest.approx(-50 + 1)
    for bad in ({"x": 1}, {"p": "1"}, [1.0], {}, None):
        with pytest.raises(ConfigError, match="score:bad.json"):
            get_policy("score:bad.json", bad)


def test_score_file_is_read_by_the_composition_root_only(tmp_path):
    dyn = tmp_path / "wait.json"
    dyn.write_text(json.dumps({"w": -1.0, "p": 1e-3}))
    assert load_policy(f"score:{dyn}").key(job(1), 1000, 50)[0] == pytest.approx(-50 + 1)
    missing = tmp_path / "missing.json"
    assert SchedulerConfig(policy=f"score:{missing}").policy == f"score:{missing}"  # the config reads nothing
    with pytest.raises(ConfigError, match="cannot read"):
        load_policy(f"score:{missing}")
    with pytest.raises(ConfigError, match="cannot read"):
        simulate(generate(10, weeks=0.1, nb_res=4, seed=1), SchedulerConfig(policy=f"score:{missing}"))


@pytest.mark.parametrize("policy", ["unicef", "f2", "lin"])
def test_orderings_simulate(policy):
    workload = generate(150, weeks=0.3, nb_res=16, seed=2)
    result, _ = simulate(workload, SchedulerConfig(policy=policy))
    assert (result.jobs.starting_time >= result.jobs.submission_time).all()
    result, _ = simulate(workload, SchedulerConfig(policy=policy, predictor="ave2", correction="incremental"))
    assert (result.jobs.starting_time >= result.jobs.submission_time).all()
