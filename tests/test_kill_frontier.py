"""The frontier figure of issue 32 (``plots.kill_frontier``), drawn from a points table."""

import pandas as pd
import pytest

from batsim_classifier_scheduler.experiments.plots import kill_frontier


def test_the_frontier_draws_one_point_per_rule_and_order(tmp_path):
    points = pd.DataFrame({"rule": ["bounded", "bounded", "blocking-order", "blocking-order"],
                           "trace": ["KTH-SP2"] * 4, "policy": ["fcfs", "spf", "fcfs", "spf"],
                           "share_of_cc": [1.04, 0.99, 0.96, 0.93], "killed": [0.53, 0.53, 0.114, 0.094]})
    path = kill_frontier(points, "KTH-SP2", tmp_path / "kill_frontier_kth.png", highlight="blocking-order",
                         rules=["idempotent", "bounded", "blocking-order"])
    assert path.read_bytes().startswith(b"\x89PNG") and path.with_suffix(".svg").exists()
    assert kill_frontier(points.iloc[:0], "KTH-SP2", tmp_path / "none.png") is None


def _kill_frontier_script():
    """experiments/kill_frontier.py, imported as a module."""
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "experiments" / "kill_frontier.py"
    spec = importlib.util.spec_from_file_location("kill_frontier", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module



def _jobs_csv(path, rows):
    """A _jobs.csv of (job id, wait, runtime, metadata) rows, one processor each; an id with "!k" is killed."""
    from batsim_classifier_scheduler.jobs_columns import JOBS_COLUMNS

    table = pd.DataFrame([{column: "" for column in JOBS_COLUMNS} | {
        "job_id": job_id.removesuffix("!k"), "workload_name": "w0", "profile": "p", "submission_time": 0.0,
        "requested_number_of_resources": 1, "requested_time": 1e4, "success": 0 if job_id.endswith("!k") else 1,
        "final_state": "COMPLETED_KILLED" if job_id.endswith("!k") else "COMPLETED_SUCCESSFULLY",
        "starting_time": wait, "execution_time": runtime, "finish_time": wait + runtime, "waiting_time": wait,
        "turnaround_time": wait + runtime, "stretch": (wait + runtime) / runtime, "allocated_resources": "0",
        "consumed_energy": -1.0, "metadata": metadata} for job_id, wait, runtime, metadata in rows])
    table.to_csv(path, index=False)
    return path


def test_the_gap_by_class_adds_up_to_the_difference_of_the_means(tmp_path):
    # jobs 1 and 2 are small (runtimes 30 and 40 s, below the median), 3 and 4 large. Job 1 is classified small;
    # job 2 uncertain, killed after 20 s, its retry starting at 1000 s; under class-clairvoyant job 1 waits 60 s
    run = _jobs_csv(tmp_path / "run_jobs.csv", [("1", 0, 30, "class=small"), ("2!k", 0, 20, "class=uncertain"),
                                                ("2#1", 1000, 40, "parent=w0!2;class=large"),
                                                ("3", 0, 6000, "class=large"), ("4", 0, 7000, "class=large")])
    cc = _jobs_csv(tmp_path / "cc_jobs.csv", [("1", 60, 30, "class=small"), ("2", 0, 40, "class=small"),
                                              ("3", 0, 6000, "class=large"), ("4", 0, 7000, "class=large")])
    table = _kill_frontier_script().gap_by_class(run, cc)
    assert table["jobs"].to_dict() == {("large", False, False): 2, ("small", True, False): 1,
                                       ("uncertain", True, True): 1}
    # bsld = max((wait + runtime) / max(runtime, 60), 1), over the trace's four jobs
    assert table.loc[("uncertain", True, True), "difference"] == pytest.approx((1040 / 60 - 1) / 4)
    assert table.loc[("small", True, False), "difference"] == pytest.approx((1 - 90 / 60) / 4)
    assert table.loc[("large", False, False), "difference"] == 0
