"""Issue 31, the numbers that misled: utilisation of useful work, the share of jobs killed, what the classifier's
scores count, the report's figures, each run's own wall time, the comparison's jobs rows, and smaller labels."""

from __future__ import annotations

import contextlib
import io
import json
import re
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from batsim_classifier_scheduler.cli import main
from batsim_classifier_scheduler.cli.results_table import format_table
from batsim_classifier_scheduler.experiments import report as report_module
from batsim_classifier_scheduler.experiments.collect import analyze_runs, discover_runs
from batsim_classifier_scheduler.experiments.report_tables import Report
from batsim_classifier_scheduler.platforms import platform_xml
from batsim_classifier_scheduler.workloads import write_batsim_json
from batsim_classifier_scheduler.workloads.synthetic import generate

from tests.helpers import REPO, comparison_table, named

VARIANTS = ["base", "class-clairvoyant", "classification-probing", "classification-bounded"]


def table_rows(out: str, names: list[str]) -> dict[str, list[str]]:
    """The rows of a comparison table, by label, one value per variant."""
    shown, rows = comparison_table(out)
    assert shown == names
    return rows


@pytest.fixture(scope="module")
def compared(tmp_path_factory):
    """Four variants of a five-week synthetic workload (the last 30-day period covers 5 days), compared by
    ``simulate``: its printed table and the runs' folder."""
    folder = tmp_path_factory.mktemp("compared")
    workload = folder / "five-weeks.json"
    write_batsim_json(generate(500, weeks=5, nb_res=32, seed=2), workload)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["simulate", str(workload), "--variant", ",".join(map(named, VARIANTS)), "-e", str(folder / "runs" / "run"),
                     "--no-progress"]) == 0
    return out.getvalue(), folder / "runs"


def summaries(runs) -> dict[str, dict]:
    return {name: json.loads((runs / f"run_{name}_summary.json").read_text()) for name in VARIANTS}


@pytest.mark.slow
def test_the_comparison_shows_useful_utilisation_and_the_share_of_jobs_killed(compared):
    out, runs = compared
    rows, runs = table_rows(out, VARIANTS), summaries(runs)
    metrics = {name: run["metrics"] for name, run in runs.items()}
    # point 1: probing adds kills, not useful work; its utilisation is base's, not base's plus the waste
    assert rows["useful utilisation"] == [f"{metrics[name]['utilisation']:.3f}" for name in VARIANTS]
    assert metrics["classification-probing"]["wasted_core_seconds"] > 0
    for name in VARIANTS:
        assert abs(metrics[name]["utilisation"] - metrics["base"]["utilisation"]) < 0.02, name
        assert metrics[name]["utilisation"] == pytest.approx(
            metrics[name]["useful_core_seconds"] / (32 * metrics[name]["span"]))
    # point 2: the jobs killed at least once, and their share of all jobs; killed attempts keep their row
    killed = [metrics[name]["nb_jobs_killed"] for name in VARIANTS]
    assert rows["jobs killed"] == [f"{count:,}" for count in killed] and killed[0] == 0 < killed[2]
    assert rows["share of all jobs"] == [f"{count / 500:.2%}" for count in killed]
    kills = [metrics[name]["nb_kills"] for name in VARIANTS]
    if kills != killed:  # issue 39: the killed attempts have their row when a job was killed more than once
        assert rows["killed attempts"] == [f"{count:,}" for count in kills]
    else:
        assert "killed attempts" not in rows
    assert "wasted processor-hours" in rows and "share of the work" in rows
    # point 6: the jobs by final state, with their total
    assert rows["jobs"] == ["500"] * 4
    assert [int(a) + int(b) for a, b in zip(rows["succeeded"], rows["reached their walltime"])] == [500] * 4
    # point 7: an option of probing is no setting where probing is off; AF is not an unexplained label
    assert rows["probe_length"] == ["–", "–", "1.0", "0.5"]
    assert re.search(r"^mean response +[\d.]+ (s|min|h|d) ", out, re.M) and "(AF)" not in out
    # point 3: the scores' definition is said
    assert "classifier: scores of the jobs classified small; uncertain jobs count as not small" in " ".join(out.split())


@pytest.mark.slow
def test_the_classifier_scores_count_the_jobs_classified_small_and_the_uncertain_apart(compared):
    _, folder = compared
    runs = summaries(folder)
    classifier = runs["classification-probing"]["classifier"]
    assert classifier["uncertain"] > 0 and classifier["uncertain_rate"] == classifier["uncertain"] / classifier["n"]
    # the weekly report counts the same jobs: small ones as predicted small, uncertain ones apart
    weeks = pd.read_csv(folder / "run_classification-probing_classifier_weeks.csv")
    assert weeks["n_uncertain"].sum() > 0
    assert classifier["tp"] + classifier["fp"] <= weeks["n_predicted_small"].sum()
    # report recomputes the same scores from the jobs file: predicted small = class=small only
    data = {d.files.variant: d for d in analyze_runs(discover_runs([folder]))}
    recomputed = data["classification-probing"].metrics
    for key in ("precision", "recall", "false_small_rate", "uncertain", "n"):
        assert recomputed[f"classifier_{key}"] == pytest.approx(classifier[key]), key
    jobs = pd.read_csv(folder / "run_classification-probing_jobs.csv", dtype={"job_id": str})
    first_class = jobs[~jobs["job_id"].str.contains("#")]["metadata"].str.extract(r"class=(\w+)")[0]
    small = int((first_class == "small").sum())
    assert recomputed["nb_jobs_small"] == recomputed["nb_predicted_small"] == small  # Figure 8's count
    assert recomputed["nb_jobs_uncertain"] == int((first_class == "uncertain").sum()) > 0
    # precision counts true small among the classified-small only: more precise than small-or-uncertain
    assert classifier["tp"] + classifier["fp"] < small + recomputed["nb_jobs_uncertain"]


@pytest.mark.slow
def test_the_report_draws_every_variant_and_says_what_it_leaves_out(compared, tmp_path, monkeypatch):
    _, folder = compared
    drawn: dict[str, list] = {}

    def record(name):
        def figure(*args, **kwargs):
            drawn.setdefault(name, []).append(args)
            return None
        return figure

    for name in ("cumulative_bsld", "monthly_bsld", "class_bars", "grouped_bars", "tradeoff", "classifier_weeks"):
        monkeypatch.setattr(report_module.figures_module, name, record(name))
    report = Report(analyze_runs(discover_runs([folder])))
    # point 4: every variant that ran, in the report's order, the recommended one and class-clairvoyant included
    assert report.plotted_variants == report.variants == VARIANTS
    report_module._figures(report, tmp_path / "img")
    for name in ("cumulative_bsld", "monthly_bsld"):
        (args,) = drawn[name]
        assert list(args[2]) == report.plotted_variants
        assert {variant for _, variant in args[0]} == set(VARIANTS)
    # the last 30-day period covers 5 days, and the monthly tables say so
    (args,) = drawn["monthly_bsld"]
    days = args[0][("fcfs", "base")]["days"].tolist()
    assert days[0] == 30 and 4 < days[-1] < 6
    assert report.why_not("fig9", "five-weeks") is None and report.why_not("tradeoff", "five-weeks") is None
    assert drawn["grouped_bars"] and drawn["tradeoff"]


def test_a_base_run_alone_gets_no_one_bar_or_one_point_figure(tmp_path, monkeypatch):
    workload = tmp_path / "alone.json"
    write_batsim_json(generate(120, weeks=1, nb_res=16, seed=1), workload)
    assert main(["simulate", str(workload), "-e", str(tmp_path / "runs" / "base"), "--no-progress"]) == 0
    drawn = []
    for name in ("cumulative_bsld", "monthly_bsld", "class_bars", "grouped_bars", "tradeoff", "classifier_weeks"):
        monkeypatch.setattr(report_module.figures_module, name, lambda *a, name=name, **k: drawn.append(name))
    report_module.write_report(tmp_path / "runs", tmp_path / "report")
    assert "grouped_bars" not in drawn and "tradeoff" not in drawn
    assert drawn.count("cumulative_bsld") == drawn.count("monthly_bsld") == 1
    text = (tmp_path / "report" / "REPORT.md").read_text()
    assert "No Figure 9 for alone: it sets runs side by side, and the trace has one run" in text
    assert "No gain-against-harm figure for alone: it sets each variant against base, and only base ran." in text
    # point 7: no "polic(ies)"; point 2: the kills table has every variant, base's zero included
    assert "1 run from" in text and "1 trace, 1 policy, 1 variant." in text
    assert "| alone | EASY-FCFS | base | 0 | 0.00% | 0 | 0 | 0.00% |" in text


@pytest.mark.slow
def test_figure_7_marks_a_month_the_trace_covers_in_part(tmp_path):
    from batsim_classifier_scheduler.experiments import plots

    monthly = pd.DataFrame({"month": [0, 1], "mean_bsld": [40.0, 12.0], "jobs": [300, 50], "days": [30.0, 5.2]})
    shown = {}
    save = plots._save

    def keep(fig, path):
        fig.canvas.draw()
        ax = fig.axes[0]
        low, high = ax.get_xlim()
        shown["ticks"] = [t.get_text() for t in ax.get_xticklabels() if low <= t.get_position()[0] <= high]
        shown["hollow"] = [line.get_markerfacecolor() for line in ax.get_lines()]
        return save(fig, path)

    plots._save = keep
    try:
        plots.monthly_bsld({("fcfs", "base"): monthly}, ["fcfs"], ["base"], "t", tmp_path / "fig7.png")
    finally:
        plots._save = save
    assert shown["ticks"] == ["1", "2\n(only 5 days)"]
    assert "white" in shown["hollow"]


def test_the_single_table_shows_the_jobs_killed_and_the_jobs_by_state():
    summary = {"workload": {"name": "w.json", "jobs": 10}, "nb_machines": 4, "tau": 60.0, "wall_time": 0.5,
               "config": {"policy": "fcfs", "estimates": "requested", "classifier": "rf", "safeguard": "kill"},
               "accounting": {"reject_reasons": {}},
               "classifier": {"method": "rf", "precision": 0.8, "recall": 0.5, "false_small_rate": 0.1,
                              "uncertain_rate": 0.25},
               "metrics": {"nb_jobs": 10, "nb_success": 7, "nb_walltime": 2, "nb_rejected": 0, "nb_jobs_killed": 3,
                           "share_jobs_killed": 0.3, "nb_kills": 4, "wasted_core_seconds": 7200.0,
                           "useful_core_seconds": 72000.0, "mean_bsld": 2.0, "mean_wait": 1.0, "max_wait": 2.0,
                           "mean_response": 3.0, "makespan": 9.0, "utilisation": 0.5, "awf": 1.0, "p2sf": 1.0}}
    table = format_table(summary, 100)
    assert re.search(r"^jobs +10: 7 succeeded, 2 reached their walltime, 1 failed or killed$", table, re.M)
    assert re.search(r"^jobs killed +3 \(30\.00% of all jobs\), in 4 killed attempts$", table, re.M)
    assert re.search(r"^wasted work +2 processor-hours \(10\.00% of the useful work\)$", table, re.M)
    assert re.search(r"^useful utilisation +0\.500$", table, re.M)
    assert ("uncertain 25.00%, divider – (scores of the jobs classified small; uncertain jobs count as not small)"
            in " ".join(table.split()))  # the row wrapped to the width; no divider_range: not applicable
    assert max(map(len, table.splitlines())) <= 100
    # issue 39: every job killed once: the killed attempts would repeat the count
    summary["metrics"]["nb_kills"] = 3
    assert re.search(r"^jobs killed +3 \(30\.00% of all jobs\)$", format_table(summary, 100), re.M)


def swf(tmp_path, widths: list[int]) -> str:
    path = tmp_path / "wide.swf"
    path.write_text("".join(f"{i + 1} {10 * i} 0 100 {width} -1 -1 -1 200 -1 1 1 1 1 1 -1 -1 -1\n"
                            for i, width in enumerate(widths)))
    return str(path)


def test_the_comparison_counts_the_rejected_jobs_in_the_table_and_below_it(tmp_path, capsys):
    # five widths beyond the 16 machines: five reasons, one of them twice
    trace = swf(tmp_path, [4, 32, 24, 20, 18, 17, 32, 2])
    assert main(["simulate", trace, "--nb-res", "16", "--variant", "base,runtimes-clairvoyant", "--no-progress"]) == 0
    out = capsys.readouterr().out
    rows = table_rows(out, ["base", "runtimes-clairvoyant"])
    assert rows["jobs"] == ["8", "8"] and rows["succeeded"] == ["2", "2"] and rows["rejected"] == ["6", "6"]
    said = " ".join(out[out.index("\nrejected ("):].split("\n\n")[0].split())  # wrapped to the width
    assert said.startswith("rejected (every variant): 6 jobs: requests 32 processors, the platform has 16 (2 jobs); ")
    assert said.endswith("; 2 other reasons (2 jobs)")


@pytest.mark.slow
def test_each_run_is_timed_without_the_start_up_of_its_kind():
    """classification-idempotent took 2.43 s when it ran first, 0.47 s after probing: its wall time held the
    import of scikit-learn and the first forest fit. Nothing of scikit-learn is imported while a run is timed."""
    script = """
import sys, time
import batsim_classifier_scheduler.cli.simulate as cli
from batsim_classifier_scheduler.cli import main
timed = []
clock = time.perf_counter
class Watch:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] == "sklearn" and timed:
            raise SystemExit(f"imported {name} while a run was timed")
sys.meta_path.insert(0, Watch())
simulate = cli.simulate
def watched(*args, **kwargs):
    timed.append(1)
    try:
        return simulate(*args, **kwargs)
    finally:
        timed.pop()
cli.simulate = watched
from batsim_classifier_scheduler.workloads import write_batsim_json
from batsim_classifier_scheduler.workloads.synthetic import generate
write_batsim_json(generate(150, weeks=2, nb_res=16, seed=1), sys.argv[1])
assert "sklearn" not in sys.modules
sys.exit(main(["simulate", sys.argv[1], "--variant", "classification-idempotent,experiments/presets/variants.json:classification-probing",
               "--no-progress"]))
"""
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        done = subprocess.run([sys.executable, "-c", script, f"{folder}/w.json"], capture_output=True, text=True,
                              cwd=REPO)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "wall time" in done.stdout


def test_a_platform_comment_names_its_own_hosts():
    kth = platform_xml(100, name="kth")
    assert "compute hosts a0-a99 by sorted name: a0, a1, a10, a11, a12, ..." in kth and "a100" not in kth
    assert "a0-a3 by sorted name: a0, a1, a2, a3 -->" in platform_xml(4)


def test_fetch_trace_list_gives_sizes_and_notes_their_own_columns(capsys):
    assert main(["fetch-trace", "--list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    columns = [re.split(r"\s{2,}", line.strip()) for line in lines]
    assert columns[0] == ["trace", "processors", "file", "size", "note"]
    assert all(len(row) == 5 for row in columns), columns
    sizes = {row[0]: row[3] for row in columns[1:]}
    assert sizes["KTH-SP2"] == "0.4 MB" and sizes["MetaCentrum2-zegox"] == "about 58 MB" and sizes["HPC2N"] == "–"
    assert all(not re.search(r"\bMB\b", row[4]) for row in columns[1:])
    assert np.all([row[1].isdigit() for row in columns[1:]])
