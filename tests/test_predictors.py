"""Runtime predictors, correction rules, accuracy metrics and EASY++ end to end."""

import math
from types import SimpleNamespace

import numpy as np
import pytest

from batsim_classifier_scheduler.config import SchedulerConfig
from batsim_classifier_scheduler.core.job import Job
from batsim_classifier_scheduler.errors import ConfigError
from batsim_classifier_scheduler.knowledge.accuracy import (accuracy, inaccuracy, job_accuracy, prediction_accuracy,
                                                            time_weighted)
from batsim_classifier_scheduler.knowledge.corrections import INCREMENTS, get_correction
from batsim_classifier_scheduler.knowledge.eloss import NormalizedAdaptiveGradient, expand
from batsim_classifier_scheduler.knowledge.predictors import Predictions, get_predictor, make_predictions
from batsim_classifier_scheduler.metrics import summarize
from batsim_classifier_scheduler.sim.simulate import simulate
from batsim_classifier_scheduler.workloads.synthetic import generate


def job(i, user=1, walltime=3600.0, runtime=100.0, res=2, subtime=0.0, executable=1):
    return Job(f"w0!{i}", subtime, res, walltime, "", runtime, {"user": user, "executable": executable})


def feed(predictor, runtimes, user=1):
    """Terminate jobs of ``user`` with these runtimes."""
    for i, rt in enumerate(runtimes):
        j = job(1000 + i, user=user, runtime=rt)
        predictor.predict(j, 0.0)
        predictor.on_end(j, rt, 0.0)


def test_requested_clairvoyant_constant():
    j = job(1, walltime=500, runtime=120)
    assert get_predictor("requested").predict(j, 0) == 500
    assert get_predictor("clairvoyant").predict(j, 0) == 120
    assert get_predictor("constant").predict(j, 0) == 1
    assert get_predictor("constant:60").predict(j, 0) == 60
    # capped at p̃ by the Predictions
    p = make_predictions("constant:9000", "requested")
    p.submit(j, 0)
    assert p.estimate(j) == 500


def test_estimates_and_predictors_share_the_registry_and_the_capped_runtime():
    from batsim_classifier_scheduler import registry
    from batsim_classifier_scheduler.compose import build_parts

    def runtime_knowledge(config):
        parts = build_parts(config)
        return parts.knowledge, parts.predictions

    def get_estimates(name):
        return registry.make("estimates", name)

    long = job(2, walltime=500, runtime=900)
    assert (long.capped_runtime, job(3, walltime=-1, runtime=900).capped_runtime, job(4, runtime=None).capped_runtime) \
        == (500, 900, None)
    assert get_estimates("clairvoyant").estimate(long) == get_predictor("clairvoyant").predict(long, 0) == 500
    assert get_estimates("clairvoyant").estimate(job(4, runtime=None)) is None  # an estimate may be unknown...
    assert get_predictor("clairvoyant").predict(job(4, walltime=700, runtime=None), 0) == 700  # a prediction not
    knowledge, predictions = runtime_knowledge(SchedulerConfig(estimates="clairvoyant"))
    assert knowledge.name == "clairvoyant" and predictions is None
    knowledge, predictions = runtime_knowledge(SchedulerConfig(predictor="sbh-noest", correction="doubling"))
    assert knowledge is predictions and knowledge.name == "sbh-noest+doubling"
    # every predictor carries its registry name (easy++ is EASY++'s name for ave2)
    for name in registry.builtins("predictor"):
        assert get_predictor(name).name == ("ave2" if name == "easy++" else name)
    assert registry.canonical("policy", "Score:Theta.json") == "score:Theta.json"
    with pytest.raises(ConfigError, match="only constant:C takes an argument"):
        get_predictor("ave2:3")


def test_ave2_after_tsafrir():
    """Tsafrir et al.: the mean runtime of the user's last two jobs, the only one's runtime with one,
    p̃ with none; capped at p̃."""
    p = get_predictor("ave2")
    assert p.predict(job(1, walltime=700), 0) == 700
    feed(p, [100])
    assert p.predict(job(2, walltime=700), 0) == 100  # a partial window
    feed(p, [300, 500])
    assert p.predict(job(3, walltime=700), 0) == 400  # the last two: 300 and 500
    assert p.predict(job(4, user=2, walltime=700), 0) == 700  # another user
    preds = Predictions(p, get_correction("requested"))
    preds.submit(job(5, walltime=200), 0)
    assert preds.current["w0!5"] == 200


@pytest.mark.parametrize("name, expected", [("ave2", (30 + 40) / 2), ("ruh", 30)])
def test_the_last_jobs_are_the_last_submitted(name, expected):
    """A job that terminates after later-submitted jobs of its user does not displace them."""
    p = get_predictor(name)
    a, b, c, d = (job(i) for i in range(4))
    for j in (a, b, c, d):
        p.predict(j, 0.0)
    p.on_end(b, 20, 10.0)
    p.on_end(d, 40, 20.0)
    p.on_end(c, 30, 25.0)
    p.on_end(a, 1000, 30.0)  # submitted first: older than b, c and d
    # c and d (b, c and d for ruh); by termination: (30 + 1000) / 2, median(40, 30, 1000)
    assert p.predict(job(9), 40.0) == expected


def test_ruh_median_of_last_three():
    p = get_predictor("ruh")
    assert p.predict(job(1, walltime=999), 0) == 999
    feed(p, [10])
    assert p.predict(job(2), 0) == 10
    feed(p, [50, 30, 20])  # last three: 50, 30, 20
    assert p.predict(job(3), 0) == 30


def test_sbh_sessions_and_criteria():
    p = get_predictor("sbh")
    a = job(1, res=4, executable=7)
    assert p.predict(a, 0) == a.walltime
    p.on_end(a, 100, 100)
    b = job(2, res=4, executable=7, subtime=200)
    assert p.predict(b, 200) == 100  # same session, all criteria match
    p.on_end(b, 300, 600)
    c = job(3, res=8, executable=9, walltime=3600)
    assert p.predict(c, 700) == 200  # no criterion matches: the session's median
    p.on_end(c, 50, 800)
    # think time >= 20 min: a new session; the whole history is searched
    d = job(4, res=8, executable=9)
    assert p.predict(d, 800 + 1200) == 50
    assert get_predictor("sbh-noest").criteria == ("res", "executable")
    assert get_predictor("sbh", search="bfs", depth=1)._subsets()[-1] in {("res", "walltime"), ("res", "executable"),
                                                                          ("walltime", "executable")}


def test_eloss_learns_the_asymmetric_loss():
    p = get_predictor("eloss", eta=50)  # eta is in seconds: 50 suits runtimes of minutes
    assert p.predict(job(1), 0) == 0  # weights start at zero: Predictions clamps this to 1 s
    errors = []
    for i in range(400):
        j = job(10 + i, runtime=600 + 60 * (i % 3), subtime=1000.0 * i)
        prediction = p.predict(j, j.subtime)
        p.on_start(j, j.subtime)
        p.on_end(j, j.runtime, j.subtime + j.runtime)
        if i >= 300:
            errors.append(prediction - j.runtime)
    # it learnt the runtimes (within 10% on average), and since over-prediction costs (f - p)^2 and
    # under-prediction only (p - f), it errs below them
    assert sum(map(abs, errors)) / len(errors) < 60
    assert sum(e < 0 for e in errors) > 0.6 * len(errors) and max(errors) < 30


def test_eloss_features_follow_the_user():
    p = get_predictor("eloss")
    first, second = job(1, runtime=100, res=4, subtime=0.0), job(2, runtime=5000, res=8, subtime=10.0)
    for j in (first, second):
        p.predict(j, j.subtime)
        p.on_start(j, j.subtime + 5)
    p.on_end(first, 100, 105)
    x = p.base_features(job(3, walltime=2000, res=2, subtime=200.0), 200.0)
    assert x[0] == 1 and list(x[1:4]) == [100, 2000, 2000]  # last runtimes capped at p̃; p̃ when missing
    assert x[4] == 2000 and x[5] == 1050 and x[6] == pytest.approx(4100 / 3)
    assert (x[7], x[8], x[9]) == (100, 95, 0.5)  # user mean runtime, time since last end, q / mean q
    assert (x[10], x[11], x[12], x[13]) == (8, 185, 1, 185)  # the user's running job
    assert x[18] == 2 and len(expand(x)) == 19 + 120 + 18
    assert p.base_features(
        job(4, user=7, subtime=0.0), 0.0)[7:14].tolist() == [0] * 7


@pytest.mark.slow
def test_nag_is_invariant_to_feature_scales():
    rng = np.random.default_rng(3)
    scales = np.array([1.0, 1e-4, 1e6, 37.0])
    plain, scaled = NormalizedAdaptiveGradient(4, eta=4), NormalizedAdaptiveGradient(4, eta=4)
    for _ in range(5000):
        x = np.r_[1.0, rng.uniform(0, 10, 3)]
        y = 3 * x[1] - x[2] + 0.5 * x[3]
        for optimiser, features in ((plain, x), (scaled, x * scales)):
            optimiser.rescale(features)
            optimiser.step(2 * (optimiser.predict(features) - y) * features)
    probe = np.r_[1.0, 2.0, 3.0, 4.0]
    assert scaled.predict(probe * scales) == pytest.approx(plain.predict(probe), rel=1e-9)
    assert plain.w == pytest.approx([0, 3, -1, 0.5], abs=1e-2)  # and it learns the weights


def test_eloss_options_are_checked():
    with pytest.raises(ConfigError, match="eta"):
        get_predictor("eloss", eta=0)
    with pytest.raises(ConfigError, match="unexpected keyword|bad options"):
        get_predictor("eloss", learning_rate=1)


def test_corrections():
    incremental = get_correction("incremental")
    assert INCREMENTS[0] == 60 and INCREMENTS[-1] == 100 * 3600 and len(INCREMENTS) == 11
    assert incremental.correct(100, 100, 100, 10_000) == 160
    assert incremental.correct(100, 160, 160, 10_000) == 400
    assert incremental.correct(100, 400, 4000, 10_000) == 100 + 7200
    assert incremental.correct(100, 400, 9000, 10_000) == 10_000  # capped at p̃
    doubling = get_correction("doubling")
    assert doubling.correct(100, 100, 100, 10_000) == 200
    assert doubling.correct(100, 100, 450, 10_000) == 800
    assert doubling.correct(100, 6000, 6000, 10_000) == 10_000
    assert get_correction("requested").correct(100, 100, 100, 10_000) == 10_000
    with pytest.raises(ConfigError):
        get_correction("nope")


@pytest.mark.parametrize("name", ["requested", "clairvoyant", "constant", "ave2", "ruh", "sbh", "sbh-noest", "eloss"])
@pytest.mark.parametrize("correction", ["requested", "incremental", "doubling"])
def test_invariants(name, correction):
    preds = make_predictions(name, correction)
    t = 0.0
    for i in range(30):
        j = job(i, walltime=1000 + 100 * i, runtime=50 * i + 5, user=i % 3)
        preds.submit(j, t)
        assert 0 < preds.estimate(j) <= j.walltime
        preds.start(j, t)
        elapsed = 0.0
        while elapsed < j.runtime:
            end = preds.expected_end(j.id)
            assert end - t > elapsed
            assert preds.current[j.id] <= j.walltime
            elapsed = end - t
            if elapsed < j.runtime:
                preds.deadline_miss(j, end)
                assert preds.current[j.id] > elapsed
        t += j.runtime
        preds.end(j, t)


def test_accuracy_hand_computed():
    assert accuracy(50, 100) == 0.5 and accuracy(200, 100) == 0.5
    assert inaccuracy(150, 100) == 0.5
    # predicted 50 at submission (t=0), corrected to 110 at t=50, ended at t=100 (runtime 100,
    # started at 0): half the time accuracy 0.5, half the time 100/110
    history = [(0.0, 50.0), (50.0, 110.0)]
    assert time_weighted(history, 100, 100, accuracy) == pytest.approx(0.5 * 0.5 + 0.5 * 100 / 110)
    assert time_weighted(history, 100, 100, inaccuracy) == pytest.approx(0.5 * 0.5 + 0.5 * 0.1)
    predictions = SimpleNamespace(history={"a": history, "b": [(0.0, 200.0)]}, runtimes={"a": 100, "b": 100},
                                  ends={"a": 100, "b": 100}, requested={"a": 300, "b": 300},
                                  misses=[(50.0, "a", 50.0, 110.0)])
    table = job_accuracy(predictions)
    assert table.set_index("job_id").loc["a", ["first_prediction", "last_prediction", "nb_predictions",
                                                "deadline_misses"]].tolist() == [50, 110, 2, 1]
    stats = prediction_accuracy(predictions)
    assert stats["deadline_misses"] == 1 and stats["nb_jobs"] == 2
    assert stats["mae"] == pytest.approx((50 + 100) / 2)
    assert stats["under"] == 0.5
    assert stats["ra"] == pytest.approx(((0.25 + 50 / 110) + 0.5) / 2)
    assert stats["ai"] == pytest.approx((0.3 + 1.0) / 2)
    assert math.isnan(stats["r2"])  # constant runtimes


def test_config_options():
    config = SchedulerConfig.easy_plus_plus()
    assert (config.predictor, config.correction, config.backfill_order) == ("ave2", "requested", "spf")
    assert SchedulerConfig().predictor == "requested" and not SchedulerConfig().uses_predictor
    with pytest.raises(ConfigError):
        SchedulerConfig(predictor="psychic")
    with pytest.raises(ConfigError):
        SchedulerConfig(correction="tripling")
    with pytest.raises(ConfigError):
        SchedulerConfig(predictor="ave2", estimates="clairvoyant")
    assert SchedulerConfig.from_dict({"predictor": "constant:60"}).predictor == "constant:60"


def _check_schedule(jobs, nb_res):
    events = []
    for row in jobs.itertuples():
        if row.final_state == "REJECTED":
            continue
        assert row.starting_time >= row.submission_time
        events.append((row.starting_time, 1, row.requested_number_of_resources))
        events.append((row.finish_time, 0, -row.requested_number_of_resources))
    used = 0
    for _, _, delta in sorted(events):
        used += delta
        assert used <= nb_res


@pytest.fixture(scope="module")
def small_workload():
    return generate(300, weeks=0.5, nb_res=32, seed=5)


@pytest.mark.slow
@pytest.mark.parametrize("correction", ["requested", "incremental"])
def test_easy_plus_plus_end_to_end(small_workload, correction):
    result, core = simulate(small_workload, SchedulerConfig.easy_plus_plus(correction=correction))
    preds = core.predictions
    assert len(result.jobs) == 300 and (result.jobs.final_state != "REJECTED").all()
    _check_schedule(result.jobs, 32)
    assert preds.misses, "ave2 under-predicts some jobs"
    rows = result.jobs.set_index("job_id")
    starts = {str(k): v for k, v in rows.starting_time.items()}
    for time, job_id, old, new in preds.misses:
        jid = job_id.split("!", 1)[1]
        start = starts[jid]
        # detected exactly when the prediction ran out, and the job was still running
        assert time == pytest.approx(start + old)
        assert rows.finish_time[jid] > time
        original = preds.history[job_id][0][1]
        walltime = rows.requested_time[jid]
        assert new > time - start
        if correction == "requested":  # EASY++'s (Tsafrir's): the first miss corrects to p̃
            assert new == walltime
        else:
            assert new == walltime or any(new == pytest.approx(original + inc) for inc in INCREMENTS)
    if correction == "requested":
        assert len({job_id for _, job_id, _, _ in preds.misses}) == len(preds.misses)
    # every history is consistent: predictions <= p̃, the last one covers the runtime
    for job_id, runtime in preds.runtimes.items():
        walltime = core.jobs[job_id].walltime
        assert all(0 < p <= walltime for _, p in preds.history[job_id])
        assert preds.history[job_id][-1][1] >= runtime - 1e-6 or runtime >= walltime


def test_clairvoyant_predictor_equals_clairvoyant_estimates(small_workload):
    a, _ = simulate(small_workload, SchedulerConfig(estimates="clairvoyant"))
    b, core = simulate(small_workload, SchedulerConfig(predictor="clairvoyant"))
    assert not core.predictions.misses
    assert list(a.jobs.starting_time) == list(b.jobs.starting_time)


@pytest.mark.slow
@pytest.mark.parametrize("predictor", ["ruh", "sbh", "eloss", "constant:60"])
def test_other_predictors_run(small_workload, predictor):
    result, core = simulate(small_workload, SchedulerConfig(predictor=predictor, correction="doubling",
                                                            backfill_order="spf"))
    _check_schedule(result.jobs, 32)
    assert summarize(result.jobs, nb_machines=32, tau=10)["mean_bsld"] >= 1


@pytest.mark.parametrize("correction", ["incremental", "doubling"])
def test_a_deadline_miss_always_moves_the_prediction_on(correction):
    # start + prediction is rounded: at the predicted end, now - start can fall a hair short of
    # the prediction; the correction must still step to its next value, not creep by an ulp
    preds = make_predictions("constant:4201.796362294467", correction)
    j = job(1, walltime=10_800.0, runtime=9000.0, subtime=12_645.0)
    preds.submit(j, j.subtime)
    preds.start(j, j.subtime)
    end = preds.expected_end(j.id)
    assert end - j.subtime < preds.current[j.id]  # the rounding this test is about
    new = preds.deadline_miss(j, end)
    expected = {"incremental": 4201.796362294467 + 60, "doubling": 2 * 4201.796362294467}[correction]
    assert new == pytest.approx(expected)
