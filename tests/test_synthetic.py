"""Synthetic workloads: reproducible, valid, with users, rhythms and the requested load."""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from batsim_classifier_scheduler.errors import WorkloadError
from batsim_classifier_scheduler.workloads import read_batsim_json
from batsim_classifier_scheduler.workloads.batsim_json import workload_json
from batsim_classifier_scheduler.workloads.synthetic import DAY, WEEK, arrival_rate, generate

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def workload():
    return generate(3000, 4, 64, seed=3)


def test_same_seed_same_workload_other_seed_other_workload(workload):
    pd.testing.assert_frame_equal(generate(3000, 4, 64, seed=3).jobs, workload.jobs)
    assert not generate(3000, 4, 64, seed=4).jobs["runtime"].equals(workload.jobs["runtime"])


def test_jobs_are_valid(workload):
    jobs = workload.jobs
    assert len(jobs) == 3000 and workload.nb_res == 64
    assert jobs["id"].is_unique
    assert jobs["subtime"].is_monotonic_increasing and jobs["subtime"].min() >= 0
    assert jobs["res"].between(1, 64).all()
    assert (jobs["runtime"] >= 1).all() and (jobs["runtime"] <= jobs["walltime"]).all()
    assert (jobs["walltime"] <= 48 * 3600).all()
    assert (jobs["runtime"] == jobs["runtime"].round()).all()
    assert (jobs["profile"] == "delay_" + jobs["runtime"].astype(int).astype(str)).all()


def test_requests_over_estimate_runtimes(workload):
    accuracy = workload.jobs["runtime"] / workload.jobs["walltime"]
    assert 0.1 < accuracy.median() < 0.5
    assert 0.01 < (accuracy == 1).mean() < 0.15  # some jobs reach their request, as in real traces


def test_many_short_jobs_and_a_long_tail(workload):
    runtime = workload.jobs["runtime"]
    assert (runtime < 600).mean() > 0.25
    assert runtime.max() > 50 * runtime.median()


def test_offered_load_is_close_to_the_target(workload):
    jobs = workload.jobs
    load = (jobs["res"] * jobs["runtime"]).sum() / (64 * 4 * WEEK)
    assert 0.6 < load < 0.75


def test_users_have_habits(workload):
    jobs = workload.jobs
    assert jobs["user"].nunique() > 10
    assert (jobs.groupby("executable")["user"].nunique() == 1).all()
    log_runtime = np.log(jobs["runtime"])
    between_apps = log_runtime.groupby(jobs["executable"]).transform("mean").var()
    assert between_apps > 0.3 * log_runtime.var()  # an application's jobs look alike


def test_daily_and_weekly_rhythm(workload):
    t = workload.jobs["subtime"]
    hour, day = (t % DAY) // 3600, (t % WEEK) // DAY
    assert ((hour >= 9) & (hour < 18)).mean() > 2 * ((hour < 6).mean())
    assert (day >= 5).mean() < 0.2  # weekends are quiet
    assert arrival_rate(np.array([12 * 3600.0]))[0] > 3 * arrival_rate(np.array([3 * 3600.0]))[0]


@pytest.mark.parametrize("options, named", [
    ({"n_jobs": 0}, "n_jobs=0"), ({"load": 0}, "load=0"),
    # issue 23: tracebacks from numpy, and an infinite load accepted
    ({"seed": -1}, "seed=-1"), ({"load": math.nan}, "load=nan"), ({"weeks": math.nan}, "weeks=nan"),
    ({"load": math.inf}, "load=inf"), ({"weeks": 1e9}, "weeks=1000000000.0"), ({"seed": 1.5}, "seed=1.5"),
])
def test_invalid_parameters_are_named(options, named):
    with pytest.raises(WorkloadError, match=f"^generate: invalid {re.escape(named)}: "):
        generate(**{"n_jobs": 10, **options})


def test_the_committed_sample_is_reproducible():
    path = REPO / "workloads" / "sample.json"
    sample = read_batsim_json(path)
    assert len(sample) == 3000 and sample.nb_res == 128
    regenerated = generate(3000, 5, 128, seed=0, load=0.7)
    assert path.read_text() == workload_json(regenerated, description=regenerated.source)
