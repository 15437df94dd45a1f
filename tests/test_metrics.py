"""Per-job and aggregate metrics: lineage folding, bsld, AWF, P2SF, and the reference numbers."""

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from batsim_classifier_scheduler.metrics import (
    FOLDED_COLUMNS, awf, bounded_slowdown, cumulative_bsld, fold_attempts, p_alpha_sf, summarize,
)
from batsim_classifier_scheduler.jobs_columns import JOBS_COLUMNS
from batsim_classifier_scheduler.sim.batsim_files import read_jobs_csv

from tests.helpers import REPO, SHARED  # noqa: E402
KTH = SHARED / "reference-schedules" / "KTH-SP2"
FIXTURE = REPO / "tests" / "data" / "metrics" / "lineage_jobs.csv"


@pytest.fixture(scope="module")
def lineage():
    return read_jobs_csv(FIXTURE)


def reference(path: Path) -> Path:
    if not path.exists():
        pytest.skip(f"{path} is absent")
    return path


def test_bounded_slowdown():
    assert bounded_slowdown(0.0, 5.0, 10.0) == 1.0
    assert bounded_slowdown(15.0, 5.0, 10.0) == 2.0
    assert bounded_slowdown(30.0, 60.0, 60.0) == 1.5
    assert bounded_slowdown(np.array([0.0, 90.0]), np.array([100.0, 30.0]), 60.0).tolist() == [1.0, 2.0]
    series = bounded_slowdown(pd.Series([120.0]), pd.Series([0.0]), 60.0)
    assert isinstance(series, pd.Series) and series.iloc[0] == 2.0


def test_fold_attempts(lineage):
    folded = fold_attempts(lineage)
    assert list(folded.columns) == FOLDED_COLUMNS + ["class"]
    assert folded["job_id"].tolist() == ["0", "2", "1", "3", "4"]  # original jobs, by submission time
    assert (folded["workload_name"] == "w0").all()
    rows = folded.set_index("job_id")
    # w0!0: killed after 10 s on 2 machines, resubmitted as 0#1 which ran 40 s.
    assert rows.loc["0", ["submission_time", "start", "finish", "runtime", "response", "wait"]].tolist() == [
        0.0, 10.0, 50.0, 40.0, 50.0, 10.0]
    assert (rows.loc["0", "attempts"], rows.loc["0", "wasted_core_seconds"]) == (2, 20.0)
    # w0!1: killed twice (8 s, then 4 s in workload dyn), final attempt dyn!1#2 whose parent is dyn!1#1.
    assert rows.loc["1", ["submission_time", "finish", "runtime", "response", "wait"]].tolist() == [
        2.0, 60.0, 30.0, 58.0, 28.0]
    assert (rows.loc["1", "attempts"], rows.loc["1", "wasted_core_seconds"]) == (3, 12.0)
    assert rows.loc["1", "requested_time"] == 100.0 and rows.loc["1", "final_state"] == "COMPLETED_SUCCESSFULLY"
    assert rows.loc["4", "final_state"] == "COMPLETED_WALLTIME_REACHED" and rows.loc["4", "wait"] == 5.0
    assert rows.loc["3", "final_state"] == "REJECTED" and np.isnan(rows.loc["3", "wait"])
    # The class a job was first scheduled under (the resubmissions say "large").
    assert rows["class"].tolist() == ["small", "large", "small", "", ""]


def test_parents_by_suffix_by_bare_name_and_cycles():
    def row(job_id, workload, submit, start, runtime, state="COMPLETED_SUCCESSFULLY", metadata=""):
        return [job_id, workload, "p", submit, 1, 100.0, int(state == "COMPLETED_SUCCESSFULLY"), state, start,
                runtime, start + runtime, start - submit, start + runtime - submit, 1.0, "0", -1.0, metadata]
    jobs = pd.DataFrame([
        row("5", "w0", 0.0, 0.0, 3.0, "COMPLETED_KILLED"),
        row("5#1", "w0", 3.0, 4.0, 10.0),                           # no metadata: parent by suffix
        row("6", "w0", 1.0, 1.0, 2.0, "COMPLETED_KILLED"),
        row("r6", "w0", 4.0, 14.0, 5.0, metadata="parent=6"),       # bare parent name: same workload
        row("x#1", "w1", 0.0, 0.0, 1.0, metadata="parent=w1!x#1"),  # names itself: no endless loop
    ], columns=JOBS_COLUMNS)
    folded = fold_attempts(jobs).set_index("job_id")
    assert folded.loc["5", ["attempts", "wait", "response"]].tolist() == [2, 4.0, 14.0]
    assert folded.loc["6", ["attempts", "wait", "response", "wasted_core_seconds"]].tolist() == [2, 13.0, 18.0, 2.0]
    assert folded.loc["x", "attempts"] == 1


def test_summarize(lineage):
    summary = summarize(lineage, nb_machines=4, tau=10.0)
    bsld = [50 / 40, 1.0, 58 / 30, 1.0]  # jobs 0, 2, 1, 4; 3 was rejected
    assert (summary["nb_jobs"], summary["nb_attempts"], summary["nb_completed"]) == (5, 8, 4)
    assert (summary["nb_success"], summary["nb_rejected"], summary["nb_kills"]) == (3, 1, 3)
    assert summary["mean_bsld"] == pytest.approx(np.mean(bsld))
    assert summary["max_bsld"] == pytest.approx(58 / 30)
    assert summary["cumulative_bsld"] == pytest.approx(sum(bsld))
    assert (summary["mean_wait"], summary["max_wait"]) == (10.75, 28.0)
    assert summary["mean_response"] == 34.5
    assert summary["wasted_core_seconds"] == 32.0
    assert summary["makespan"] == 60.0
    # issue 31: utilisation is useful work, the final attempts (2 x 40 + 20 + 30 + 5); the killed ones
    # (20 + 8 + 4) are the wasted work
    assert summary["utilisation"] == pytest.approx((80 + 20 + 30 + 5) / (4 * 60))
    assert summary["utilisation"] == pytest.approx(summary["useful_core_seconds"] / (4 * summary["span"]))
    # jobs 0 and 1 were killed (1 twice): 2 of the 5 jobs, in 3 killed attempts
    assert (summary["nb_jobs_killed"], summary["share_jobs_killed"], summary["nb_kills"]) == (2, 2 / 5, 3)
    assert (summary["nb_jobs_killed_small"], summary["nb_jobs_killed_large"]) == (2, 0)
    assert (summary["nb_success"], summary["nb_walltime"], summary["nb_rejected"]) == (3, 1, 1)
    # q p F over final attempts: job 0 (2, 40, 50), 2 (1, 20, 20), 1 (1, 30, 58), 4 (1, 5, 10).
    assert summary["awf"] == pytest.approx((80 * 50 + 20 * 20 + 30 * 58 + 5 * 10) / (80 + 20 + 30 + 5))
    m3 = 2 * (50**4 - 10**4) + 20**4 + (58**4 - 28**4) + (10**4 - 5**4)
    m2 = 2 * (50**3 - 10**3) + 20**3 + (58**3 - 28**3) + (10**3 - 5**3)
    assert summary["p2sf"] == pytest.approx((m3 / 4) / (m2 / 3))
    assert summary["nb_jobs_small"] == 2 and summary["nb_kills_small"] == 3
    assert summary["mean_bsld_small"] == pytest.approx((50 / 40 + 58 / 30) / 2)
    assert summary["wasted_core_seconds_small"] == 32.0
    assert summary["nb_jobs_large"] == 1 and summary["mean_bsld_large"] == 1.0 and summary["nb_kills_large"] == 0
    assert summarize(lineage, nb_machines=4, tau=60.0)["mean_bsld"] == 1.0
    assert np.isnan(summarize(lineage)["utilisation"])
    assert summarize(fold_attempts(lineage), nb_machines=4, tau=10.0) == summary
    assert all(isinstance(v, (int, float)) for v in summary.values())


def test_class_column_overrides_metadata(lineage):
    jobs = lineage.assign(**{"class": ["big", "", "", "", "", "", "tiny", ""]})
    summary = summarize(jobs, tau=10.0)
    assert summary["nb_jobs_big"] == 1 and summary["nb_jobs_tiny"] == 1
    assert summary["nb_jobs_small"] == 1 and summary["nb_jobs_large"] == 1  # jobs 1 and 2, from metadata


def test_rejected_rows_with_zero_times_are_excluded(lineage):
    jobs = lineage.copy()
    rejected = jobs["final_state"] == "REJECTED"
    jobs.loc[rejected, ["starting_time", "execution_time", "finish_time", "waiting_time"]] = 0.0
    assert summarize(jobs, 4, 10.0) == summarize(lineage, 4, 10.0)


def test_cumulative_bsld(lineage):
    series = cumulative_bsld(lineage, tau=10.0)
    assert series.index.tolist() == [0.0, 1.0, 2.0, 20.0]
    assert series.to_numpy() == pytest.approx(np.cumsum([50 / 40, 1.0, 58 / 30, 1.0]))


def test_awf_and_p_alpha_sf():
    wait, runtime, res = np.array([0.0, 100.0]), np.array([10.0, 50.0]), np.array([4, 1])
    assert awf(wait, runtime, res) == pytest.approx((40 * 10 + 50 * 150) / 90)
    # alpha = 0: area-weighted mean of (W + F) / 2.
    assert p_alpha_sf(wait, runtime, res, 0.0) == pytest.approx((40 * 5 + 50 * 125) / 90)
    flow = wait + runtime
    for alpha in (2.0, 1.5):
        naive = (np.sum(res * (flow ** (alpha + 2) - wait ** (alpha + 2))) / (alpha + 2)) / (
            np.sum(res * (flow ** (alpha + 1) - wait ** (alpha + 1))) / (alpha + 1))
        assert p_alpha_sf(wait, runtime, res, alpha) == pytest.approx(naive)
    assert np.isnan(awf([], [], []))


def test_empty_table():
    summary = summarize(pd.DataFrame({c: [] for c in JOBS_COLUMNS}), nb_machines=4)
    assert summary["nb_jobs"] == 0 and summary["cumulative_bsld"] == 0.0 and np.isnan(summary["mean_bsld"])


jobs_strategy = st.lists(
    st.tuples(st.integers(0, 1000), st.integers(0, 500), st.integers(1, 1000), st.integers(1, 8)),
    min_size=1, max_size=30)


@pytest.mark.slow
@settings(max_examples=50, deadline=None)
@given(jobs_strategy)
def test_without_lineage_folding_keeps_every_job(rows):
    table = pd.DataFrame([
        [str(i), "w0", "p", float(s), q, 2000.0, 1, "COMPLETED_SUCCESSFULLY", float(s + w), float(p),
         float(s + w + p), float(w), float(w + p), (w + p) / p, "0", -1.0, ""]
        for i, (s, w, p, q) in enumerate(rows)], columns=JOBS_COLUMNS)
    folded = fold_attempts(table)
    assert len(folded) == len(rows)
    assert folded["submission_time"].is_monotonic_increasing
    assert sorted(folded["wait"]) == sorted(float(w) for _, w, _, _ in rows)
    assert (folded["attempts"] == 1).all() and (folded["wasted_core_seconds"] == 0).all()
    summary = summarize(table, tau=10.0)
    assert summary["mean_bsld"] >= 1.0
    assert summary["cumulative_bsld"] == pytest.approx(cumulative_bsld(table, 10.0).iloc[-1])
    flows = [w + p for _, w, p, _ in rows]
    assert min(flows) - 1e-9 <= summary["awf"] <= max(flows) + 1e-9
    # Every processor-second runs between its job's wait W and flow F after submission.
    assert min(w for _, w, _, _ in rows) - 1e-9 <= summary["p2sf"] <= max(flows) + 1e-9


@pytest.mark.slow
@pytest.mark.parametrize("name, bsld10, bsld60, mean_wait, max_wait", [
    ("batsched_easy_bf_jobs.csv.gz", 81.7, 28.7, 6627, 262194),
    ("batsched_easy_bf_fast_jobs.csv.gz", 96.5, 31.5, 8299, 307523),
])
def test_reference_schedules_readme_numbers(name, bsld10, bsld60, mean_wait, max_wait):
    jobs = read_jobs_csv(reference(KTH / name))
    summary = summarize(jobs, nb_machines=100, tau=10.0)
    assert round(summary["mean_bsld"], 1) == bsld10
    assert round(summarize(jobs, nb_machines=100, tau=60.0)["mean_bsld"], 1) == bsld60
    assert round(summary["mean_wait"]) == mean_wait and summary["max_wait"] == max_wait
    assert round(summary["utilisation"], 3) == 0.701
    assert summary["nb_jobs"] == 28467 and summary["nb_kills"] == 0 and summary["nb_rejected"] == 0


def test_transcript_resubmission_is_folded():
    path = reference(SHARED / "batsim-transcripts" / "kill-resubmit-sameworkload" / "out_jobs.csv")
    folded = fold_attempts(read_jobs_csv(path)).set_index("job_id")
    assert len(folded) == 10
    job = folded.loc["0"]
    assert job["attempts"] == 2 and job["submission_time"] == 0.0
    assert job["finish"] == pytest.approx(15.00012) and job["runtime"] == 10.0
    assert job["wasted_core_seconds"] == pytest.approx(4.999955)
