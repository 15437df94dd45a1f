"""The metrics registry: a metric is one entry of ``batsim_classifier_scheduler.metrics.METRICS``, and the run summary, ``simulate``'s
table, ``report``'s recomputation and its Markdown all show it."""

import json

import numpy as np
import pandas as pd

from batsim_classifier_scheduler import metrics
from batsim_classifier_scheduler.cli import main
from batsim_classifier_scheduler.cli.formats import duration
from batsim_classifier_scheduler.metrics import METRICS, Metric, summarize
from batsim_classifier_scheduler.util.values import DEFAULT_TAU

from tests.helpers import DATA

TINY = DATA / "tiny.swf"


def test_one_entry_adds_a_metric_everywhere(tmp_path, monkeypatch, capsys):
    median_wait = Metric("median_wait", lambda run: float(np.median(run.done["wait"])), "median wait", "s",
                         report="median wait")
    monkeypatch.setitem(METRICS, "median_wait", median_wait)

    assert main(["simulate", str(TINY), "-e", str(tmp_path / "runs" / "tiny"), "--no-progress"]) == 0
    table = capsys.readouterr().out
    summary = json.loads((tmp_path / "runs" / "tiny_summary.json").read_text())
    value = summary["metrics"]["median_wait"]
    assert f"median wait          {duration(value)}" in table.splitlines()
    keys = list(summary["metrics"])  # after the registry's others, before the per-class keys
    assert keys[keys.index("median_wait") - 1] == "mean_wait_actual_large"

    assert main(["report", str(tmp_path / "runs"), "-o", str(tmp_path / "report"), "--no-plots"]) == 0
    runs = pd.read_csv(tmp_path / "report" / "runs.csv")
    assert runs["median_wait"].tolist() == [value]
    assert "median_wait" in pd.read_csv(tmp_path / "report" / "tables" / "costs.csv").columns
    text = (tmp_path / "report" / "REPORT.md").read_text()
    assert "| trace | policy | variant | AWF | P2SF | mean wait | max wait | utilisation (useful work) | median wait |" in text


def test_without_the_entry_nothing_shows_it(tmp_path, capsys):
    assert "median_wait" not in METRICS  # the test above removed its metric
    assert main(["simulate", str(TINY), "--no-progress"]) == 0
    assert "median wait" not in capsys.readouterr().out


def test_report_only_metrics_come_after_the_per_class_keys(monkeypatch):
    jobs = pd.read_csv(DATA / "metrics" / "lineage_jobs.csv", dtype={"job_id": str})
    plain = summarize(jobs)
    full = summarize(jobs, recomputed=True)
    assert list(full)[:len(plain)] == list(plain)
    assert {"wasted_fraction", "nb_predicted_small"} <= set(full) - set(plain)
    assert {"class_divider", "nb_jobs_actual_large", "mean_bsld_actual_large"} <= set(plain)  # simulate's table
    assert plain["tau"] == DEFAULT_TAU == metrics.bounded_slowdown.__defaults__[0]
