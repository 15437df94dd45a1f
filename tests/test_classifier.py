"""The online small/large job classifier: semantics, no leakage, reports, persistence."""

from __future__ import annotations

import math
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from batsim_classifier_scheduler.cli import build_parser
from batsim_classifier_scheduler.cli.options import config_from_args
from batsim_classifier_scheduler.config import SchedulerConfig
from batsim_classifier_scheduler.core.job import Job
from batsim_classifier_scheduler.errors import ConfigError
from batsim_classifier_scheduler.knowledge.classifier import (
    ClassifierError,
    JobClassifier,
    PackedForest,
    classification_metrics,
    default_forest,
    quality,
)
from batsim_classifier_scheduler.core.job import JobClass
from batsim_classifier_scheduler.knowledge.features import CATEGORIES, N_LAGS, STATIC_FEATURES
from batsim_classifier_scheduler.sim.simulate import simulate
from batsim_classifier_scheduler.workloads.synthetic import generate
from tests.helpers import REPO

WEEK = 1000.0
SMALL, LARGE = JobClass.SMALL, JobClass.LARGE
FAST = dict(week=WEEK, estimator=default_forest(n_estimators=8, max_samples=None))


def synthetic_jobs(n=400, weeks=4, seed=0, users=6, unix=True) -> list[Job]:
    """Jobs over ``weeks`` short weeks; odd users run short jobs, even users long ones."""
    rng = np.random.default_rng(seed)
    subtimes = np.sort(rng.choice(np.arange(int(weeks * WEEK)), n, replace=False)).astype(float)
    jobs = []
    for i, t in enumerate(subtimes):
        user = int(rng.integers(users))
        scale = 10.0 if user % 2 else 300.0
        runtime = float(max(1, round(scale * rng.uniform(0.3, 1.7))))
        walltime = float(rng.choice([2, 4]) * scale)
        extras = {"user": user, "requested_procs": int(rng.integers(1, 5))}
        if unix:
            extras["unix_submit_time"] = 843480031 + int(t) * 50
        jobs.append(Job(f"w0!{i}", t, int(rng.integers(1, 5)), walltime, "", runtime, extras))
    return jobs


def events_of(jobs: list[Job]) -> list[tuple[float, str, Job]]:
    """Submissions at subtime, completions at subtime + runtime (capped); completions first on ties."""
    events = []
    for i, j in enumerate(jobs):
        events.append((j.subtime, 1, i, "submit", j))
        events.append((j.subtime + min(j.runtime, j.walltime), 0, i, "complete", j))
    events.sort(key=lambda e: e[:3])
    return [(t, kind, j) for t, _, _, kind, j in events]


def run(clf: JobClassifier, events) -> JobClassifier:
    for now, kind, j in events:
        if kind == "submit":
            clf.classify(j, now)
        else:
            clf.completed(j, min(j.runtime, j.walltime), now)
    return clf


# --- the packed forest -----------------------------------------------------------------

@pytest.mark.parametrize("kind", ["RandomForestClassifier", "ExtraTreesClassifier"])
def test_packed_forest_gives_scikit_learn_probabilities(kind):
    from sklearn import ensemble
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 6)) * [1, 10, 100, 1e4, 1, 1]
    y = (X[:, 0] + X[:, 1] / 10 + rng.normal(size=400)) > 0
    forest = getattr(ensemble, kind)(n_estimators=7, random_state=0, min_samples_leaf=3).fit(X, y)
    packed = PackedForest.from_sklearn(forest, positive=True)
    test = rng.normal(size=(200, 6)) * [1, 10, 100, 1e4, 1, 1]
    expected = forest.predict_proba(test)[:, 1]
    np.testing.assert_allclose(packed.proba(test), expected, rtol=0, atol=1e-12)
    np.testing.assert_allclose([packed.proba_one(x) for x in test], expected, rtol=0, atol=1e-12)
    assert PackedForest.constant(1.0).proba_one([0.0]) == 1.0


# --- the estimator ---------------------------------------------------------------------

def test_the_estimator_is_cloned_at_each_retrain_with_the_seed_and_packed_when_a_forest(tmp_path):
    from sklearn.ensemble import ExtraTreesClassifier

    jobs = synthetic_jobs(seed=6)
    given = ExtraTreesClassifier(n_estimators=6, min_samples_leaf=2, random_state=99)
    clf = run(JobClassifier(week=WEEK, estimator=given, seed=4), events_of(jobs))
    assert not hasattr(given, "estimators_")  # never fitted itself
    assert isinstance(clf._model, PackedForest) and clf._model.n_trees == 6
    # random_state comes from the seed, whatever the given estimator says
    other = ExtraTreesClassifier(n_estimators=6, min_samples_leaf=2, random_state=None)
    again = run(JobClassifier(week=WEEK, estimator=other, seed=4), events_of(jobs))
    pd.testing.assert_frame_equal(clf.predictions(), again.predictions())
    reseeded = run(JobClassifier(week=WEEK, estimator=other, seed=5), events_of(jobs))
    assert not clf.predictions().p_small.equals(reseeded.predictions().p_small)
    loaded = JobClassifier.load(clf.save(tmp_path / "extra.bin"))
    assert loaded.get_config() == clf.get_config() and loaded.get_config()["estimator"]["class"] == "ExtraTreesClassifier"
    pd.testing.assert_frame_equal(loaded.predictions(), clf.predictions())


@pytest.mark.slow
def test_any_other_estimator_answers_through_predict_proba_and_cannot_be_saved(tmp_path):
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    jobs = synthetic_jobs(seed=8)
    estimator = make_pipeline(StandardScaler(), LogisticRegression())
    clf = run(JobClassifier(week=WEEK, estimator=estimator), events_of(jobs))
    preds = clf.predictions()
    later = preds[(preds.week > 0) & preds.actual_small.notna()]
    assert later.p_small.between(0, 1).all() and later.p_small.nunique() > 10
    assert classification_metrics(later.predicted_small, later.actual_small.astype(bool))["accuracy"] > 0.8
    assert clf.feature_importances().isna().all().all()  # no importances from this model
    with pytest.raises(ConfigError, match="only RandomForestClassifier and ExtraTreesClassifier"):
        clf.save(tmp_path / "pipeline.bin")


@pytest.mark.parametrize("estimator, message", [
    ("forest", "a scikit-learn classifier with predict_proba"),
    (default_forest(n_estimators=0), "'n_estimators' parameter"),
    (default_forest(max_features="all"), "'max_features' parameter"),
])
def test_a_bad_estimator_is_refused_at_construction_naming_the_parameter(estimator, message):
    with pytest.raises(ConfigError, match=message):
        JobClassifier(estimator=estimator)


@pytest.mark.slow
def test_the_oracle_computes_no_features_and_does_not_import_scikit_learn():
    oracle = run(JobClassifier(method="oracle", **FAST), events_of(synthetic_jobs(n=100, weeks=2)))
    with pytest.raises(ClassifierError, match="computes no features"):
        oracle.feature_table()
    assert oracle.summary()["accuracy"] == 1.0
    # a whole class-clairvoyant run, in a fresh interpreter: scikit-learn costs more to import than it does
    script = ("import sys; from batsim_classifier_scheduler.config import SchedulerConfig; from batsim_classifier_scheduler.sim.simulate import simulate; "
              "from batsim_classifier_scheduler.workloads.synthetic import generate; "
              "_, core = simulate(generate(300, weeks=2, nb_res=16, seed=1), SchedulerConfig.variant('class-clairvoyant')); "
              "outcome = core.outcome(); assert outcome.classifier['n'] > 0; print('sklearn' in sys.modules)")
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True, cwd=REPO)
    assert result.stdout.strip() == "False"


# --- semantics -------------------------------------------------------------------------

def test_first_week_is_all_large_then_the_forest_learns():
    jobs = synthetic_jobs()
    clf = run(JobClassifier(**FAST), events_of(jobs))
    preds = clf.predictions()
    first = preds[preds.week == 0]
    assert len(first) and not first.predicted_small.any() and first.p_small.isna().all()
    later = preds[(preds.week > 0) & preds.actual_small.notna()]
    metrics = classification_metrics(later.predicted_small, later.actual_small.astype(bool))
    assert metrics["accuracy"] > 0.9
    report = clf.weekly_report()
    # the last completions fall in week 4: it is retrained, though nothing is predicted
    assert report.week.tolist() == [0, 1, 2, 3, 4]
    assert report.refit.tolist() == [False, True, True, True, True]
    assert report.n_predicted.tolist()[-1] == 0 and report.n_predicted.sum() == len(jobs)


def test_oracle_and_none():
    jobs = [Job("w0!a", 0, 1, 80, "", 500.0), Job("w0!b", 1, 1, 1000, "", 50.0),
            Job("w0!c", 2, 1, 1000, "", 150.0), Job("w0!d", 3, 1, -1, "", None)]
    oracle = JobClassifier(method="oracle", divider=100.0, **FAST)
    assert [oracle.classify(j, j.subtime) for j in jobs] == [SMALL, SMALL, LARGE, LARGE]  # a: capped at 80
    none = JobClassifier(method="none", **FAST)
    assert {none.classify(j, j.subtime) for j in jobs} == {LARGE}
    # With the median divider, nothing is known during the first week.
    assert JobClassifier(method="oracle", **FAST).classify(jobs[1], 0.0) is LARGE


def test_dividers():
    runtimes = [10.0, 20.0, 30.0, 40.0]
    week0 = [Job(f"w0!{i}", float(i), 1, 1000, "", r) for i, r in enumerate(runtimes)]
    week1 = [Job(f"w0!{i + 4}", 1000.0 + i, 1, 1000, "", r) for i, r in enumerate([100.0, 300.0])]
    for divider, expected in (("median", (25.0, 35.0)), ("last-week-median", (25.0, 200.0)), (7.5, (7.5, 7.5))):
        clf = JobClassifier(method="oracle", divider=divider, **FAST)
        assert math.isnan(clf.divider_at(0.0)) == (divider != 7.5)
        for batch, end in ((week0, 1000.0), (week1, 2500.0)):
            for j in batch:
                clf.classify(j, j.subtime)
            for j in batch:
                clf.completed(j, j.runtime, batch[-1].subtime + j.runtime)
            assert clf.divider_at(end) == expected[0 if end == 1000.0 else 1]


def test_training_window_is_capped_and_history_only_jobs_are_not_trained_on():
    jobs = synthetic_jobs(n=300, weeks=3)
    clf = JobClassifier(max_training_jobs=50, **FAST)
    extra = Job("w0!never-classified", 10.0, 1, 100.0, "", 5.0, {"user": 1})
    events = sorted(events_of(jobs) + [(15.0, "complete", extra)], key=lambda e: (e[0], e[1] == "submit"))
    run(clf, events)
    report = clf.weekly_report()
    assert report.training_size.max() == 50
    assert "w0!never-classified" not in set(clf.predictions().job_id)


def test_a_training_window_trains_on_the_jobs_completed_during_its_last_weeks_only(tmp_path):
    """--train-window N: each weekly fit sees the jobs completed during the N weeks before it, no older ones; the
    divider is still the median of every completion."""
    jobs = synthetic_jobs(n=400, weeks=6)
    events = events_of(jobs)
    completions = [now for now, kind, _ in events if kind == "complete"]
    unbounded = run(JobClassifier(**FAST), events)
    clf = JobClassifier(train_window=2, **FAST)
    fits, fit = [], clf._fit
    clf._fit = lambda train, labels: (fits.append((clf.current_week, len(train))), fit(train, labels))
    run(clf, events)
    assert [week for week, _ in fits] == list(range(1, len(fits) + 1)) and len(fits) >= 5
    for week, size in fits:
        assert size == sum((week - 2) * WEEK <= now < week * WEEK for now in completions)
    windowed, everything = clf.weekly_report(), unbounded.weekly_report()
    assert (windowed.training_size <= everything.training_size).all()
    assert windowed.training_size.iloc[-1] < everything.training_size.iloc[-1]
    np.testing.assert_array_equal(windowed.divider, everything.divider)
    assert clf.get_config()["train_window"] == 2
    wide = run(JobClassifier(train_window=6, **FAST), events).predictions()  # the whole trace: as without
    pd.testing.assert_frame_equal(wide, unbounded.predictions())
    loaded = JobClassifier.load(clf.save(tmp_path / "windowed.clf"))
    assert loaded.train_window == 2 and loaded._fit_key == clf._fit_key


@pytest.mark.parametrize("options", [dict(train_window=4), dict(classifier="oracle", train_window=4),
                                     dict(classifier="rf", model="saved.clf", train_window=4)])
def test_a_training_window_needs_the_forest_trained_here(options):
    with pytest.raises(ConfigError, match="train_window"):
        SchedulerConfig(**options)
    with pytest.raises(ConfigError, match="train_window"):
        JobClassifier(train_window=0, **FAST)


@pytest.mark.slow
def test_same_seed_same_answers_and_idempotent_classify():
    jobs = synthetic_jobs(seed=4)
    a = run(JobClassifier(seed=3, **FAST), events_of(jobs)).predictions()
    b = run(JobClassifier(seed=3, **FAST), events_of(jobs)).predictions()
    pd.testing.assert_frame_equal(a, b)
    clf = run(JobClassifier(seed=3, **FAST), events_of(jobs[:50]))
    again = [clf.classify(j, clf._now) is SMALL for j in jobs[:50]]
    assert again == clf.predictions().predicted_small.tolist()


def test_misuse_and_configuration_errors():
    clf = JobClassifier(**FAST)
    clf.classify(Job("w0!1", 100.0, 1, 10.0, "", 5.0), 100.0)
    with pytest.raises(ClassifierError, match="backwards"):
        clf.completed(Job("w0!1", 100.0, 1, 10.0, "", 5.0), 5.0, 50.0)
    with pytest.raises(ClassifierError, match="runtime"):
        clf.completed(Job("w0!1", 100.0, 1, 10.0, "", 5.0), float("nan"), 150.0)
    late = Job("w0!2", 150.0, 1, 10.0, "", 5.0)
    clf.completed(late, 5.0, 160.0)  # never classified: history only
    with pytest.raises(ClassifierError, match="after its completion"):
        clf.classify(late, 160.0)
    fast = {key: value for key, value in FAST.items() if key != "estimator"}
    for bad in (dict(method="svm"), dict(divider=-1.0), dict(divider="mean"), dict(features="future"),
                dict(estimator=default_forest(n_estimators=0)), dict(estimator=default_forest(max_depth=-3)),
                dict(week=0), dict(timezone="Nowhere/Land"),
                dict(threshold=1.0), dict(max_training_jobs=0), dict(categories=("group",))):
        with pytest.raises(ConfigError):
            JobClassifier(**{**fast, **bad})
    assert issubclass(ClassifierError, ConfigError)


# --- no leakage ------------------------------------------------------------------------

def naive_features(jobs: list[Job], events, clf: JobClassifier, mode: str) -> pd.DataFrame:
    """Recompute each job's history features from scratch: the completions it could see."""
    table = clf.feature_table()
    preds = clf.predictions().set_index("job_id")
    static = {j.id: table.loc[j.id] for j in jobs if j.id in table.index}

    def keys(j):
        s = static[j.id]
        user = j.extras.get("user")
        return {"user_reqtime": (user, s["requested_time"]), "user_procs": (user, s["res"]),
                "user_day": (user, s["day_of_week"]), "user": (user,)}

    done: list[tuple[float, dict]] = []
    visible: dict[str, int] = {}
    week, snapshot = 0, 0
    for now, kind, j in events:
        w = int(now // WEEK)
        if w > week:
            week, snapshot = w, len(done)
        if kind == "submit":
            visible[j.id] = len(done) if mode == "live" else snapshot
        else:
            done.append((min(j.runtime, j.walltime), keys(j)))
    rows = {}
    for j in jobs:
        divider = preds.loc[j.id, "divider"]
        mine = keys(j)
        values = []
        for cat in CATEGORIES:
            classes = [int(rt < divider) for rt, k in done[: visible[j.id]] if k[cat] == mine[cat]][::-1]
            lags = classes[:N_LAGS] + [-1] * (N_LAGS - min(N_LAGS, len(classes)))
            values += lags + [sum(classes) / len(classes) if classes else -1.0, len(classes)]
        rows[j.id] = values
    return pd.DataFrame.from_dict(rows, orient="index", columns=table.columns[len(STATIC_FEATURES):])


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["live", "paper"])
def test_online_features_equal_a_recomputation_from_the_visible_history(mode):
    jobs = synthetic_jobs(n=250, weeks=3, seed=7)
    events = events_of(jobs)
    clf = run(JobClassifier(features=mode, **FAST), events)
    online = clf.feature_table().iloc[:, len(STATIC_FEATURES):]
    expected = naive_features(jobs, events, clf, mode).loc[online.index]
    np.testing.assert_allclose(online.to_numpy(), expected.to_numpy().astype(float), rtol=1e-6)
    if mode == "paper":  # within a week, no completion after the snapshot is visible
        visible_counts = online.groupby(clf.predictions().set_index("job_id").week)["user_count"].max()
        assert (visible_counts.diff().dropna() >= 0).all()


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["live", "paper"])
def test_a_jobs_features_and_class_ignore_its_own_and_future_runtimes(mode):
    jobs = synthetic_jobs(n=300, weeks=3, seed=11)
    k = 180
    rng = np.random.default_rng(5)
    changed = [j if i < k else Job(j.id, j.subtime, j.res, j.walltime, j.profile,
                                   float(rng.integers(1, 2000)), dict(j.extras))
               for i, j in enumerate(jobs)]
    assert changed[k].runtime != jobs[k].runtime
    a = run(JobClassifier(features=mode, **FAST), events_of(jobs))
    b = run(JobClassifier(features=mode, **FAST), events_of(changed))
    ids = [j.id for j in jobs[: k + 1]]
    pd.testing.assert_frame_equal(a.feature_table().loc[ids], b.feature_table().loc[ids])
    pa, pb = a.predictions().set_index("job_id").loc[ids], b.predictions().set_index("job_id").loc[ids]
    pd.testing.assert_series_equal(pa.predicted_small, pb.predicted_small)
    pd.testing.assert_series_equal(pa.p_small, pb.p_small)
    pd.testing.assert_series_equal(pa.divider, pb.divider)
    # ... while later jobs do see the changed history.
    assert not a.feature_table().iloc[k + 1:].equals(b.feature_table().iloc[k + 1:])


# --- reports ---------------------------------------------------------------------------

def test_reports_are_consistent():
    jobs = synthetic_jobs(seed=2)
    clf = run(JobClassifier(**FAST), events_of(jobs))
    preds = clf.predictions()
    assert list(preds.columns) == ["job_id", "week", "predicted_small", "uncertain", "p_small", "divider", "runtime",
                                   "actual_small"]
    assert len(preds) == len(jobs) and preds.actual_small[preds.week > 0].notna().all()
    report = clf.weekly_report().set_index("week")
    for week, group in preds[preds.week > 0].groupby("week"):
        m = classification_metrics(group.predicted_small, group.actual_small.astype(bool))
        row = report.loc[week]
        assert row.n_predicted == len(group) and row.n_known == len(group)
        for name in ("accuracy", "precision", "recall", "false_small_rate", "false_large_rate"):
            assert row[name] == pytest.approx(m[name], nan_ok=True)
        assert row.accuracy + row.false_small_rate + row.false_large_rate == pytest.approx(1.0)
        assert row.divider == group.divider.iloc[0]
    importances = clf.feature_importances()
    assert importances.index.tolist() == [1, 2, 3, 4]
    assert list(importances.columns) == clf.feature_names
    np.testing.assert_allclose(importances.sum(axis=1), 1.0)
    summary = clf.summary()
    assert summary["n"] == int(preds.actual_small.notna().sum())


def test_classification_metrics_are_scikit_learns():
    from sklearn.metrics import accuracy_score, precision_score, recall_score

    m = classification_metrics([True, True, False, False], [True, False, True, False])
    assert (m["tp"], m["fp"], m["fn"], m["tn"]) == (1, 1, 1, 1)
    assert m["precision"] == m["recall"] == m["accuracy"] == 0.5
    assert m["false_small_rate"] == m["false_large_rate"] == 0.25
    assert math.isnan(classification_metrics([], [])["accuracy"])
    none_small = classification_metrics([False, False], [False, False])
    assert math.isnan(none_small["precision"]) and math.isnan(none_small["recall"]) and none_small["accuracy"] == 1
    rng = np.random.default_rng(1)
    for n in (1, 5, 200):
        predicted, actual = rng.random(n) < 0.3, rng.random(n) < 0.6
        m = classification_metrics(predicted, actual)
        assert m == quality(m["tp"], m["fp"], m["fn"], m["tn"]) or math.isnan(m["precision"])
        assert m["accuracy"] == accuracy_score(actual, predicted)
        for name, score in (("precision", precision_score), ("recall", recall_score)):
            expected = score(actual, predicted, zero_division=np.nan)
            assert m[name] == expected or (math.isnan(m[name]) and math.isnan(expected))


# --- persistence -----------------------------------------------------------------------

@pytest.mark.slow
@pytest.mark.parametrize("mode", ["live", "paper"])
def test_save_and_load_continue_exactly(tmp_path, mode):
    jobs = synthetic_jobs(seed=9)
    events = events_of(jobs)
    half = len(events) // 2
    original = run(JobClassifier(features=mode, timezone="Europe/Stockholm", **FAST), events[:half])
    path = original.save(tmp_path / "clf.bin")
    loaded = JobClassifier.load(path)
    assert loaded.get_config() == original.get_config()
    run(original, events[half:])
    run(loaded, events[half:])
    pd.testing.assert_frame_equal(original.predictions(), loaded.predictions())
    pd.testing.assert_frame_equal(original.weekly_report(), loaded.weekly_report())
    pd.testing.assert_frame_equal(original.feature_importances(), loaded.feature_importances())
    pd.testing.assert_frame_equal(original.feature_table(), loaded.feature_table())


@pytest.mark.slow
def test_a_saved_model_starts_a_new_simulation(tmp_path):
    jobs = synthetic_jobs(seed=12)
    events = events_of(jobs)
    trained = run(JobClassifier(**FAST), events)
    path = trained.save(tmp_path / "clf.bin")
    with pytest.raises(ClassifierError, match="backwards"):
        JobClassifier.load(path).classify(jobs[0], 0.0)  # continuing: its clock is past 0
    fresh = run(JobClassifier.load(path, start_time=0.0), events)  # the same ids, from time 0
    preds = fresh.predictions()
    assert len(preds) == len(jobs) and set(preds.job_id) == {j.id for j in jobs}
    first = preds[preds.week == 0]
    assert first.p_small.notna().all() and first.predicted_small.any()  # the model is used at once
    later = preds[preds.actual_small.notna()]
    assert classification_metrics(later.predicted_small, later.actual_small.astype(bool))["accuracy"] > 0.9
    report = fresh.weekly_report()
    assert report.week.tolist() == [0, 1, 2, 3, 4] and report.model.all()
    assert report.training_size.iloc[1] > len(jobs)  # trained on both runs' jobs
    # last-week-median only looks at the current run's completions
    again = JobClassifier.load(run(JobClassifier(divider="last-week-median", **FAST), events).save(
        tmp_path / "lwm.bin"), start_time=0.0)
    assert again.predictions().empty and again.feature_table().empty
    other = [Job(j.id, j.subtime, j.res, 3 * j.walltime, "", 3 * j.runtime, j.extras)
             for j in synthetic_jobs(seed=13)]  # other runtimes than the first run's
    run(again, [e for e in events_of(other) if e[0] < WEEK])
    ends = [(j.subtime + min(j.runtime, j.walltime), min(j.runtime, j.walltime)) for j in other]
    assert again.divider_at(WEEK) == np.median([r for end, r in ends if end < WEEK])
    loaded = JobClassifier.load(fresh.save(tmp_path / "fresh.bin"))
    pd.testing.assert_frame_equal(loaded.predictions(), fresh.predictions())


def test_load_rejects_corrupt_and_foreign_files(tmp_path):
    clf = run(JobClassifier(**FAST), events_of(synthetic_jobs(n=120, weeks=2)))
    path = clf.save(tmp_path / "clf.bin")
    data = path.read_bytes()

    def write(name, content):
        target = tmp_path / name
        target.write_bytes(content)
        return target

    flipped = bytearray(data)
    flipped[-100] ^= 0xFF
    with pytest.raises(ClassifierError, match="checksum"):
        JobClassifier.load(write("flipped.bin", bytes(flipped)))
    with pytest.raises(ClassifierError, match="checksum"):
        JobClassifier.load(write("truncated.bin", data[:-10]))
    with pytest.raises(ClassifierError, match="version 1"):
        JobClassifier.load(write("v1.bin", data.replace(b'"format_version": 3', b'"format_version": 1', 1)))
    with pytest.raises(ClassifierError, match="magic"):
        JobClassifier.load(write("other.bin", b"hello\n" + data))
    with pytest.raises(ClassifierError, match="header"):
        JobClassifier.load(write("header.bin", data[: data.index(b"\n") + 1] + b"{not json\n"))
    with pytest.raises(ClassifierError, match="cannot read"):
        JobClassifier.load(tmp_path / "missing.bin")


@pytest.mark.slow
def test_the_probability_threshold_is_a_scheduling_option():
    workload = generate(900, weeks=3, nb_res=32, seed=5)
    small = {}
    for threshold in (0.3, 0.5, 0.8):
        _, core = simulate(workload, SchedulerConfig(classifier="rf", classifier_threshold=threshold))
        outcome = core.outcome()
        assert outcome.model.threshold == threshold
        small[threshold] = outcome.classifier["nb_small"]
    assert small[0.3] > small[0.5] > small[0.8] > 0
    for bad in (1.0, -0.1, "0.5", True):
        with pytest.raises(ConfigError, match="classifier_threshold"):
            SchedulerConfig(classifier="rf", classifier_threshold=bad)
    args = build_parser().parse_args(["simulate", "w.json", "--classifier", "rf", "--classifier-threshold", "0.7",
                                      "--predictor", "sbh", "--predictor-options", '{"search": "bfs"}'])
    config = config_from_args(args)
    assert config.classifier_threshold == 0.7 and config.predictor_options == {"search": "bfs"}


def test_a_probe_threshold_makes_the_jobs_between_the_thresholds_uncertain():
    jobs = synthetic_jobs(seed=5)
    clf = run(JobClassifier(probe_threshold=0.2, **FAST), events_of(jobs))
    preds = clf.predictions()
    p = preds.p_small
    assert preds.uncertain.tolist() == ((p <= 0.5) & (p > 0.2)).tolist()
    assert preds.predicted_small.tolist() == (p > 0.2).tolist()  # small or uncertain: ahead of Q
    assert preds.uncertain.any() and (preds.predicted_small & ~preds.uncertain).any()
    # the class returned at submission is the one reported
    again = {j.id: clf.classify(j, clf._now) for j in jobs}
    assert [again[i] is JobClass.UNCERTAIN for i in preds.job_id] == preds.uncertain.tolist()
    # without a model (the first week) every job is large, whatever the thresholds
    assert not preds[preds.week == 0].predicted_small.any()
    # the probability the decision core reads (the limits' order) is the one reported; NaN for a job never classified
    assert [clf.p_small(i) for i in preds.job_id] == pytest.approx(p.tolist(), nan_ok=True)
    assert math.isnan(clf.p_small("w0!unknown"))


@pytest.mark.parametrize("bad", [dict(probe_threshold=0.5), dict(probe_threshold=-0.1),
                                 dict(threshold=0.3, probe_threshold=0.4)])
def test_the_probe_threshold_lies_below_the_threshold(bad):
    with pytest.raises(ConfigError, match="probe_threshold"):
        JobClassifier(**bad, **FAST)


@pytest.mark.slow
@pytest.mark.parametrize("oracle", ["no-false-large", "no-false-small", "no-blind-week"])
def test_a_partial_oracle_removes_one_kind_of_error_and_nothing_else(oracle):
    jobs = synthetic_jobs(seed=3)
    for j in jobs[::4]:  # every fourth job runs like the other users' jobs: errors both ways
        j.runtime = 300.0 if j.runtime < 50 else 10.0
    plain = run(JobClassifier(**FAST), events_of(jobs)).predictions()
    fixed = run(JobClassifier(partial_oracle=oracle, **FAST), events_of(jobs)).predictions()
    assert fixed.p_small.equals(plain.p_small)  # the same forest, the same features
    said, truth, was = fixed.predicted_small, fixed.actual_small.fillna(False).astype(bool), plain.predicted_small
    blind = fixed.week == 0
    if oracle == "no-false-large":
        assert not (~said & truth & ~blind).any() and (~was & truth & ~blind).any()
        assert said.tolist() == (was | (truth & ~blind)).tolist()
    elif oracle == "no-false-small":
        assert not (said & ~truth).any() and (was & ~truth).any()
        assert said.tolist() == (was & truth).tolist()
    else:  # the first week's jobs get their true class against the median of the completed runtimes
        assert said[~blind].tolist() == was[~blind].tolist()
        assert not was[blind].any() and said[blind].any()
        assert (said[blind] <= (fixed.runtime[blind] < 300)).all()


def test_a_partial_oracle_needs_the_forest():
    with pytest.raises(ConfigError, match="partial_oracle"):
        JobClassifier(method="oracle", partial_oracle="no-false-large", **FAST)
    with pytest.raises(ConfigError, match="partial_oracle"):
        SchedulerConfig(classifier="oracle", partial_oracle="no-false-small")


@pytest.mark.slow
def test_no_blind_week_runs_under_the_safeguard_from_the_first_week():
    config = SchedulerConfig.variant("classification-idempotent", partial_oracle="no-blind-week")
    workload = generate(600, weeks=3, nb_res=32, seed=2, load=0.8)
    result, core = simulate(workload, config)
    preds = core.classes.classifier.predictions()
    assert preds[preds.week == 0].predicted_small.any()  # small jobs in the model-less week, watched...
    accounting = core.outcome().accounting
    assert accounting["completed"] + accounting["rejected"] == len(workload.jobs)  # ...and every job ends
