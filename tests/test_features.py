"""Features of the job classifier: temporal features, keys, and the completion log."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings, strategies as st

from batsim_classifier_scheduler.core.job import Job
from batsim_classifier_scheduler.errors import ConfigError
from batsim_classifier_scheduler.knowledge.classified_jobs import JobTable
from batsim_classifier_scheduler.knowledge.features import (
    CATEGORIES,
    HISTORY_STATS,
    N_LAGS,
    STATIC_FEATURES,
    CategoryCodes,
    CompletionLog,
    FeatureEncoder,
    feature_names,
    requested_procs,
    resolve_timezone,
    submission_instant,
    temporal_features,
    timezone_from_header,
    user_key,
)


def job(subtime=0.0, res=1, walltime=100.0, **extras) -> Job:
    return Job("w0!1", subtime, res, walltime, "", None, extras)


# --- static features -------------------------------------------------------------------

@pytest.mark.parametrize("unix", [1e30, -1e12, math.nan, 2 ** 63])
def test_a_submission_time_the_calendar_cannot_hold_is_not_used(unix):
    """Found by tests/test_fuzz_doors.py: ``unix_submit_time`` 1e30 crashed ``datetime.fromtimestamp``."""
    assert submission_instant(job(subtime=7.0, unix_submit_time=unix)) == (7.0, False)
    assert submission_instant(job(subtime=7.0, unix_submit_time=8589934592)) == (8589934592.0, True)


def test_temporal_features_in_the_traces_local_time():
    stockholm = resolve_timezone("Europe/Stockholm")
    # KTH-SP2's header: UnixStartTime 843480031 = Mon Sep 23 14:00:31 CEST 1996.
    assert temporal_features(843480031, True, stockholm) == (14, 0, 23, 9, 39, 3)
    # 1997-01-01 00:00 UTC is 01:00 CET, a Wednesday in ISO week 1.
    assert temporal_features(852076800, True, stockholm) == (1, 2, 1, 1, 1, 1)
    # US/Pacific (SDSC-SP2): 893466664 = Fri Apr 24 18:11:04 PDT 1998.
    assert temporal_features(893466664, True, resolve_timezone("US/Pacific")) == (18, 4, 24, 4, 17, 2)
    # A fixed offset, and UTC by default.
    assert temporal_features(0, True, resolve_timezone(3600))[0] == 1
    assert temporal_features(0, True, resolve_timezone(None)) == (0, 3, 1, 1, 1, 1)


def test_without_unix_time_subtime_counts_from_a_monday_in_utc():
    utc = resolve_timezone("Europe/Stockholm")  # ignored: subtime is read in UTC
    assert temporal_features(0.0, False, utc)[:2] == (0, 0)
    assert temporal_features(1.5 * 86400, False, utc)[:2] == (12, 1)
    encoder = FeatureEncoder("Europe/Stockholm")
    static, _ = encoder.encode(job(subtime=7 * 86400 + 3600))
    assert static[STATIC_FEATURES.index("hour")] == 1 and static[STATIC_FEATURES.index("day_of_week")] == 0


def test_timezone_resolution_and_errors():
    assert timezone_from_header({"TimeZoneString": "Europe/Stockholm", "TimeZone": 3600}) == "Europe/Stockholm"
    assert timezone_from_header({"TimeZone": -28800}) == -28800.0
    assert timezone_from_header({}) is None
    with pytest.raises(ConfigError, match="unknown time zone"):
        resolve_timezone("Mars/Olympus_Mons")
    with pytest.raises(ConfigError):
        resolve_timezone(90000)
    with pytest.raises(ConfigError):
        resolve_timezone(["Europe/Paris"])


def test_static_features_and_keys():
    encoder = FeatureEncoder(None)
    static, keys = encoder.encode(job(subtime=0.0, res=8, walltime=3600, user=np.int64(7), requested_procs=10))
    assert static[:3] == [3600.0, 8.0, 10.0]
    assert len(static) == len(STATIC_FEATURES)
    user = encoder.user_code(job(user=7))
    assert keys == [(user, 3600.0), (user, 8.0), (user, 0.0), (user, 0.0)]
    # No walltime, no user, no requested_procs.
    static, keys = encoder.encode(job(walltime=-1, res=4))
    assert static[:3] == [-1.0, 4.0, 4.0]
    assert keys[0] == (encoder.user_code(job()), -1.0)
    assert user_key(job(user="alice")) == "alice"
    assert user_key(job(user=3.0)) == 3 and user_key(job(user=float("nan"))) is None
    assert requested_procs(job(res=2, requested_procs=-1)) == 2


def test_feature_names_and_category_validation():
    names = feature_names()
    assert names[: len(STATIC_FEATURES)] == list(STATIC_FEATURES)
    assert len(names) == len(STATIC_FEATURES) + len(CATEGORIES) * len(HISTORY_STATS)
    assert "user_reqtime_lag1" in names and "user_procs_small_frac" in names and "user_day_count" in names
    with pytest.raises(ConfigError):
        FeatureEncoder(None, ("user", "user"))
    with pytest.raises(ConfigError):
        FeatureEncoder(None, ("group",))


def test_category_codes_round_trip():
    codes = CategoryCodes()
    assert [codes.code(k) for k in [(0, 1.0), (1, 1.0), (0, 1.0), (0, 2.5)]] == [0, 1, 0, 2]
    again = CategoryCodes.from_arrays(*codes.to_arrays())
    assert again.keys == codes.keys and again.code((0, 2.5)) == 2 and len(again) == 3


def test_job_table_rows_matrices_and_round_trip():
    table = JobTable(n_categories=2, n_features=3)
    assert table.add("a", run=0, week=1, predicted=1, p_small=0.75, divider=60.0, codes=[4, 5], anchors=[0, -1],
                     features=[1.0, 0.1, 3.0]) == 0
    assert table.add("b", run=0, codes=[6, 7]) == 1  # seen at its completion only
    assert table.complete(1, 30.0, 100.0) and not table.complete(1, 31.0, 101.0)
    assert table.codes_of(1) == [6, 7] and table.rows == {"a": 0, "b": 1}
    np.testing.assert_array_equal(table.matrix("anchors", np.array([1, 0])), [[-1, -1], [0, -1]])
    assert table.matrix("features", np.array([0])).dtype == np.float32  # stored as the forest compares them
    assert table.matrix("features", np.array([0]))[0, 1] == np.float32(0.1)
    assert table.matrix("codes", np.array([], dtype=np.int64)).shape == (0, 2)
    assert table.column("runtime")[1] == 30.0 and math.isnan(table.column("runtime")[0])
    again = JobTable.from_arrays(table.to_arrays(), 2, 3, run=0)
    for name in ("week", "predicted", "p_small", "runtime", "complete_time"):
        np.testing.assert_array_equal(again.column(name), table.column(name))
    np.testing.assert_array_equal(again.matrix("features", np.array([0, 1])), table.matrix("features", np.array([0, 1])))
    assert again.ids == ["a", "b"] and again.rows == table.rows
    assert JobTable.from_arrays(table.to_arrays(), 2, 3, run=1).rows == {}  # rows of another run


# --- the completion log ----------------------------------------------------------------

def naive_history(completions, anchor_positions, divider):
    """Reference: for each category, the classes of the completions of its code, in order."""
    out = []
    for c, (code, upto) in enumerate(anchor_positions):
        seen = [rt for rt, codes in completions[:upto] if codes[c] == code]
        classes = [int(rt < divider) for rt in seen][::-1]
        lags = [float(x) for x in classes[:N_LAGS]] + [-1.0] * (N_LAGS - min(N_LAGS, len(classes)))
        frac = sum(classes) / len(classes) if classes else -1.0
        out.extend(lags + [frac, float(len(classes))])
    return out


def logged(entries, divider: float) -> tuple[CompletionLog, list]:
    """A log of ``(runtime, code a, code b)`` completions under ``divider``, and its snapshot before each."""
    log = CompletionLog(2)
    log.relabel(divider)
    snapshots = []
    for rt, a, b in entries:
        snapshots.append(log.snapshot())
        log.append(float(rt), [a, b])
    snapshots.append(log.snapshot())
    return log, snapshots


@pytest.mark.slow
@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 50), st.integers(0, 3), st.integers(0, 2)), min_size=0, max_size=40),
       st.floats(1, 60), st.floats(1, 60), st.integers(0, 3), st.integers(0, 2))
def test_log_features_equal_a_naive_recomputation_under_any_divider(entries, d1, d2, qa, qb):
    completions = [(float(rt), (a, b)) for rt, a, b in entries]
    log, snapshots = logged(entries, d2)
    relabelled, _ = logged(entries, d1)
    relabelled.relabel(d2)  # classes and small counts rebuilt from the stored runtimes
    assert relabelled.nsmall == log.nsmall
    for upto, snapshot in enumerate(snapshots):  # what a job submitted before completion `upto` saw
        expected = naive_history(completions, [(qa, upto), (qb, upto)], d2)
        anchors, online = log.history([qa, qb], snapshot)
        assert online == pytest.approx(expected)
        assert relabelled.features(np.array([anchors]))[0].tolist() == pytest.approx(expected)
    assert log.history([qa, qb]) == log.history([qa, qb], snapshots[-1])  # live: everything completed


def test_small_counts_are_a_cumulative_sum_per_category_and_relabel_recounts():
    rng = np.random.default_rng(3)
    log = CompletionLog(3)
    log.relabel(20.0)
    runtimes, codes = rng.integers(1, 40, 300).astype(float), rng.integers(0, 5, (300, 3))
    for i in range(300):
        log.append(runtimes[i], codes[i].tolist())
    small = runtimes < 20.0
    for c in range(3):
        expected = pd.Series(small.astype(int)).groupby(codes[:, c]).cumsum().to_numpy()
        entries = rng.permutation(300)[:50]
        np.testing.assert_array_equal(log.small_counts(c, small, entries), expected[entries])
    nsmall = [counts.copy() for counts in log.nsmall]
    log.relabel(20.0)
    assert log.nsmall == nsmall
    assert nsmall[0] == np.bincount(codes[small, 0], minlength=5).tolist()
    log.relabel(math.nan)  # undefined divider: nothing is small
    assert not any(map(any, log.nsmall))
    log.relabel(20.0)
    again = CompletionLog.from_arrays(log.to_arrays(), 3, 20.0)
    assert again.nsmall == nsmall and again.history([1, 2, 3]) == log.history([1, 2, 3])


def test_small_counts_summed_from_where_the_jobs_saw_their_history():
    """Sums from ``first`` (the log's length when the oldest job saw its history) count the anchors older than it
    too: no completion of their category came between them and ``first``."""
    rng = np.random.default_rng(5)
    log = CompletionLog(1)
    log.relabel(20.0)
    runtimes, codes = rng.integers(1, 40, 400).astype(float), rng.integers(0, 30, 400)
    for i in range(400):
        log.append(runtimes[i], [int(codes[i])])
    small = runtimes < 20.0
    expected = pd.Series(small.astype(int)).groupby(codes).cumsum().to_numpy()
    seen_at = np.sort(rng.integers(250, 401, 80))  # each job saw the first seen_at completions
    wanted = rng.integers(0, 30, 80)
    anchors = np.array([max([e for e in range(length) if codes[e] == code], default=-1)
                        for length, code in zip(seen_at, wanted)])
    assert (anchors[anchors >= 0] < seen_at[0]).any()  # some anchors are older than the sums' start
    counts = log.small_counts(0, small, anchors, first=int(seen_at[0]))
    np.testing.assert_array_equal(counts, np.where(anchors >= 0, expected[anchors], 0))
    np.testing.assert_array_equal(counts, log.small_counts(0, small, anchors))
