"""EASY++ (Tsafrir, Etsion and Feitelson) where its behaviour is known by construction."""

import numpy as np
import pytest

from batsim_classifier_scheduler.config import SchedulerConfig
from batsim_classifier_scheduler.errors import WorkloadError
from batsim_classifier_scheduler.metrics import summarize
from batsim_classifier_scheduler.sim.simulate import simulate
from batsim_classifier_scheduler.workloads.synthetic import repeating_users
from tests.helpers import make_workload


def mean_bsld(workload, config):
    result, core = simulate(workload, config)
    return summarize(result.jobs, nb_machines=workload.nb_res, tau=10)["mean_bsld"], result, core


@pytest.mark.parametrize("correction, short_start, misses", [("requested", 300, 1), ("incremental", 3900, 7)])
def test_an_expired_prediction_moves_the_reservation_out_of_the_way(correction, short_start, misses):
    """Tsafrir et al.'s Figures 6 and 8. A long job L predicted 100 s (its user's last two jobs ran
    100 s) holds half the machine; the head H needs all of it, so its reservation is at L's predicted
    end; a 3,000 s job S cannot backfill before that. When L outlives its prediction at t = 300,
    EASY++ predicts p̃ for it: H's reservation moves to L's request and S starts at once. Corrected
    by increments instead, L is predicted to end 1, 5, 15, 30 min, then 1 h after its first predicted
    end, and each too early reservation keeps S waiting until 3,900."""
    # (subtime, res, walltime, runtime)
    jobs = [(0, 1, 1000, 100), (0, 1, 1000, 100),  # user 1's history
            (200, 5, 20_000, 10_000),  # L, user 1
            (250, 10, 20_000, 100),  # H, user 3
            (260, 5, 3000, 3000)]  # S, user 2: predicted p̃ = its runtime
    workload = make_workload(jobs, 10, user=[1, 1, 1, 3, 2])
    result, core = simulate(workload, SchedulerConfig(predictor="ave2", correction=correction))
    start = result.jobs.set_index("job_id").starting_time
    assert core.predictions.history["w0!2"][0][1] == 100
    assert start["4"] == short_start
    assert start["3"] == 10_200  # H starts when L ends, whatever the correction
    assert len(core.predictions.misses) == misses
    with_requests, _ = simulate(workload, SchedulerConfig())
    assert with_requests.jobs.set_index("job_id").starting_time["4"] == 260  # EASY: L is planned at p̃


@pytest.fixture(scope="module", params=[0, 1])
def exact(request):
    """A workload where every user's runtimes repeat exactly, and its EASY++ run."""
    workload = repeating_users(2000, 64, seed=request.param)
    return workload, *mean_bsld(workload, SchedulerConfig.easy_plus_plus())


@pytest.mark.slow
def test_ave2_is_exact_on_repeating_users(exact):
    workload, _, result, core = exact
    preds = core.predictions
    assert not preds.misses
    jobs = result.jobs.assign(job_id="w0!" + result.jobs.job_id.astype(str)).set_index("job_id")
    user = workload.jobs.set_index("w0!" + workload.jobs.id).user
    first_end = jobs.finish_time.groupby(user).min()
    for job_id, history in preds.history.items():
        (_, first), = history  # never corrected
        known = jobs.submission_time[job_id] >= first_end[user[job_id]]
        assert first == (jobs.execution_time[job_id] if known else jobs.requested_time[job_id])


@pytest.mark.slow
def test_easy_plus_plus_beats_easy_where_predictions_are_exact(exact):
    workload, easy_plus_plus, _, _ = exact
    easy, _, _ = mean_bsld(workload, SchedulerConfig())
    sjbf, _, _ = mean_bsld(workload, SchedulerConfig(backfill_order="spf"))
    assert easy_plus_plus < 0.95 * easy
    assert easy_plus_plus < sjbf  # the predictions, not SJBF alone


@pytest.mark.slow
def test_erratic_users_miss_once_and_regular_users_never():
    workload = repeating_users(2000, 64, erratic=0.5, seed=3)
    erratic = set("w0!" + workload.jobs.id[workload.jobs.user <= 15])
    _, core = simulate(workload, SchedulerConfig.easy_plus_plus())
    missed = [job_id for _, job_id, _, _ in core.predictions.misses]
    assert missed and set(missed) <= erratic and len(set(missed)) == len(missed)
    assert all(new == core.jobs[job_id].walltime for _, job_id, _, new in core.predictions.misses)


def test_repeating_users_workload():
    workload = repeating_users(500, 32, erratic=0.4, n_users=10, load=0.7, seed=7)
    jobs = workload.jobs
    assert len(jobs) == 500 and jobs.subtime.is_monotonic_increasing
    assert (jobs.runtime <= jobs.walltime).all() and (jobs.res <= 16).all()
    by_user = jobs.groupby("user")
    assert (by_user.runtime.nunique()[5:] == 1).all() and (by_user.runtime.nunique()[:4] > 1).all()
    assert (by_user.walltime.nunique() == 1).all() and (by_user.res.nunique() == 1).all()
    load = (jobs.res * jobs.runtime).sum() / (32 * jobs.subtime.max())
    assert load == pytest.approx(0.7, rel=0.1)
    assert repeating_users(500, 32, erratic=0.4, n_users=10, load=0.7, seed=7).jobs.equals(jobs)
    with pytest.raises(WorkloadError):
        repeating_users(100, 32, erratic=1.5)
    np.testing.assert_array_equal(jobs.profile, "delay_" + jobs.runtime.astype(int).astype(str))
