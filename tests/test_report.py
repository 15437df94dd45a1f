"""``report``: tables and plots from sweep results, from ``simulate`` output and from Batsim-style folders."""

import json
import shutil

import pandas as pd
import pytest

from batsim_classifier_scheduler.cli import main
from batsim_classifier_scheduler.config import SchedulerConfig
from batsim_classifier_scheduler.errors import WorkloadError
from batsim_classifier_scheduler.experiments.collect import analyze_run, analyze_runs, discover_runs, variant_of
from batsim_classifier_scheduler.experiments.grid import parse_config
from batsim_classifier_scheduler.experiments.report import write_report
from batsim_classifier_scheduler.experiments.report_markdown import markdown_to_html
from batsim_classifier_scheduler.experiments.report_tables import Report
from batsim_classifier_scheduler.experiments.sweep import run_sweep
from batsim_classifier_scheduler.metrics import summarize
from batsim_classifier_scheduler.sim.batsim_files import read_jobs_csv

from tests.helpers import REPO, preset

SAMPLE = REPO / "workloads" / "sample.json"


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    """A small sweep: the sample's first 1,000 jobs (one week with a classifier), 2 policies x 3 variants."""
    folder = tmp_path_factory.mktemp("sweep")
    config = parse_config({
        "name": "report-test",
        "traces": [{"name": "sample", "path": str(SAMPLE), "max_jobs": 1000}],
        "policies": ["fcfs", "spf"],
        "variants": ["base", "classification-idempotent", "runtimes-clairvoyant"],
    })
    outcome = run_sweep(config, folder / "results", workers=2)
    assert not outcome.failed
    return folder / "results"


@pytest.mark.slow
def test_report_tables_and_plots(results, tmp_path):
    written = write_report(results, tmp_path / "report")
    text = (tmp_path / "report" / "REPORT.md").read_text()
    for heading in ("## Mean bounded slowdown", "(Table 7)", "## Small and large jobs (Figure 8)",
                    "## Classifier quality (Tables 5 and 6)", "## Packing and fairness costs: AWF and P2SF",
                    "## Kills and wasted work", "## Gain against harm"):
        assert heading in text, heading
    assert "| sample | EASY-FCFS | 0% |" in text  # the reference run's own reduction
    names = sorted(p.name for p in written["plots"])
    assert names == ["fig4_classifier_weeks_sample.png", "fig6_cumulative_bsld_sample.png",
                     "fig7_monthly_bsld_sample.png", "fig8_classes_sample.png", "fig9_variants_sample.png",
                     "tradeoff_sample.png"]
    for path in written["plots"]:
        assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and path.stat().st_size < 200_000
        assert f"(img/{path.name})" in text
    html = (tmp_path / "report" / "REPORT.html").read_text()
    assert "<table>" in html and '<img alt="Figure 6: cumulative bsld" src="img/fig6_cumulative_bsld_sample.png"' in html
    weekly = html[html.index("<details>"):html.index("</details>")]
    assert "<table>" in weekly and "| week |" not in weekly  # the Markdown table inside <details> is converted too

    runs = pd.read_csv(tmp_path / "report" / "runs.csv")
    assert len(runs) == 6
    # recomputed from the jobs files, the metrics are the runs' own
    for row in runs.itertuples():
        summary = json.loads((results / "sample" / row.policy / row.variant / "seed0" / "run_summary.json").read_text())
        assert row.mean_bsld == pytest.approx(summary["metrics"]["mean_bsld"])
        assert row.nb_kills == summary["metrics"]["nb_kills"]
        if row.variant == "classification-idempotent":
            assert row.nb_kills > 0 and row.wasted_core_seconds > 0
            assert row.classifier_precision == pytest.approx(summary["classifier"]["precision"])
            assert row.classifier_recall == pytest.approx(summary["classifier"]["recall"])
            assert row.classifier_n == summary["classifier"]["n"]
    reduction = pd.read_csv(tmp_path / "report" / "tables" / "reduction.csv", index_col=[0, 1])
    bsld = pd.read_csv(tmp_path / "report" / "tables" / "mean_bsld.csv", index_col=[0, 1])
    expected = 1 - bsld.loc[("sample", "spf"), "base"] / bsld.loc[("sample", "fcfs"), "base"]
    assert reduction.loc[("sample", "spf"), "base"] == pytest.approx(expected)


@pytest.mark.slow
def test_report_from_a_batsim_style_folder(results, tmp_path):
    """Plain NAME_jobs.csv files with a NAME_config.json give the same numbers."""
    flat = tmp_path / "batsim-out"
    flat.mkdir()
    for policy in ("fcfs", "spf"):
        for variant in ("base", "classification-idempotent", "runtimes-clairvoyant"):
            run = results / "sample" / policy / variant / "seed0"
            name = f"sample-{policy}-{variant}"
            shutil.copy(run / "run_jobs.csv", flat / f"{name}_jobs.csv")
            if (run / "run_classifier_weeks.csv").exists():
                shutil.copy(run / "run_classifier_weeks.csv", flat / f"{name}_classifier_weeks.csv")
            (flat / f"{name}_config.json").write_text(json.dumps(
                {"trace": "sample", "policy": policy, "variant": variant, "nb_machines": 128}))
    (flat / "stray_jobs.csv").write_text("not a run\n")  # no config: skipped with a note
    notes = []
    found = discover_runs([flat], log=notes.append)
    assert len(found) == 6 and {r.origin for r in found} == {"batsim"}
    assert any("stray_jobs.csv" in note for note in notes)

    assert main(["report", str(flat), "-o", str(tmp_path / "from-batsim"), "--no-plots"]) == 0
    write_report(results, tmp_path / "from-sweep", plots=False)
    for table in ("mean_bsld", "reduction", "classes", "classifier", "costs"):
        ours = pd.read_csv(tmp_path / "from-sweep" / "tables" / f"{table}.csv")
        theirs = pd.read_csv(tmp_path / "from-batsim" / "tables" / f"{table}.csv")
        pd.testing.assert_frame_equal(ours, theirs, check_exact=False)


@pytest.mark.slow
def test_resubmissions_are_folded(results):
    run = results / "sample" / "fcfs" / "classification-idempotent" / "seed0"
    jobs = read_jobs_csv(run / "run_jobs.csv")
    resubmitted = jobs["job_id"].str.contains("#")
    assert resubmitted.any()
    (files,) = [f for f in discover_runs([run])]
    data = analyze_run(files)
    assert data.metrics["nb_jobs"] == len(jobs) - resubmitted.sum() == 1000
    assert data.metrics["nb_kills"] == resubmitted.sum()
    assert data.metrics["mean_bsld"] == pytest.approx(summarize(jobs, nb_machines=128)["mean_bsld"])
    assert data.metrics["nb_jobs_actual_small"] + data.metrics["nb_jobs_actual_large"] == 1000


@pytest.mark.slow
def test_report_of_simulate_output(tmp_path):
    """``simulate -e`` output is a run too: its labels come from its summary."""
    assert main(["simulate", str(SAMPLE), "--policy", "spf", "--variant", "class-clairvoyant",
                 "-e", str(tmp_path / "runs" / "spf-cc"), "--no-progress"]) == 0
    (files,) = discover_runs([tmp_path / "runs"])
    assert (files.trace, files.policy, files.variant, files.origin) == ("sample", "spf", "class-clairvoyant", "simulate")
    written = write_report(tmp_path / "runs", tmp_path / "report", plots=False)
    assert written["runs"] == 1 and written["plots"] == []
    assert "| sample | EASY-SPF | – |" in (tmp_path / "report" / "REPORT.md").read_text()  # no reference run


def test_variant_of_reads_every_option():
    """Issue 23: any run with classifier rf and safeguard kill was classification-idempotent, whatever its probe
    or classifier threshold, so probing runs were averaged into idempotent ones."""
    assert variant_of({"classifier": "rf", "safeguard": "kill", "estimates": "requested"}) == "classification-idempotent"
    assert variant_of({"classifier": "none", "safeguard": "none", "estimates": "clairvoyant"}) == "runtimes-clairvoyant"
    assert variant_of(SchedulerConfig.variant("classification-ordered", policy="spf", seed=3).to_dict()) \
        == "classification-ordered"
    assert variant_of({"classifier": "rf", "safeguard": "kill", "probe_threshold": 0.3}) \
        == "classification-idempotent+probe_threshold=0.3"
    assert variant_of({**SchedulerConfig.variant(preset("classification-probing")).to_dict(),
                       "classifier_threshold": 0.7}) \
        == "classification-idempotent+classifier_threshold=0.7+probe_threshold=0.02+divider_estimates=all"
    assert variant_of({"classifier": "oracle", "safeguard": "kill"}, recorded="class-clairvoyant") \
        == "class-clairvoyant+safeguard=kill"
    assert variant_of({"predictor": "ave2", "backfill_order": "spf"}) == "base+backfill_order=spf+predictor=ave2"
    assert variant_of({"model": "m.clf", "classifier": "rf", "safeguard": "kill"}) \
        == "classification-idempotent+model=m.clf"


@pytest.mark.slow
def test_runs_that_differ_in_any_option_are_never_merged(tmp_path):
    for name, options in [("a", []), ("b", ["--classifier-threshold", "0.7"]), ("c", ["--tau", "10"])]:
        assert main(["simulate", str(SAMPLE), "--variant", "class-clairvoyant", "--divider", "3600",
                     "-e", str(tmp_path / "runs" / name), "--no-progress", *options]) == 0
    summary = json.loads((tmp_path / "runs" / "a_summary.json").read_text())
    assert summary["variant"] == "class-clairvoyant"  # what the run recorded
    found = {run.prefix.name: run.variant for run in discover_runs([tmp_path / "runs"])}
    assert found == {"a": "class-clairvoyant+divider=3600+tau=60",  # a and c differ in tau only: it tells them apart
                     "b": "class-clairvoyant+divider=3600+classifier_threshold=0.7",
                     "c": "class-clairvoyant+divider=3600+tau=10"}


def test_empty_folder_is_an_error_naming_it(tmp_path, capsys):
    with pytest.raises(WorkloadError, match=f"no run found in {tmp_path} "):
        write_report(tmp_path, tmp_path / "report")
    assert main(["report", str(tmp_path / "absent"), "-o", str(tmp_path / "r")]) == 1


@pytest.mark.slow
@pytest.mark.parametrize("option, message", [
    ("--reference-policy", "--reference-policy nope: no run has it; the runs' policies: fcfs, spf"),
    ("--reference-variant", "--reference-variant nope: no run has it; the runs' variants: base, "),
    ("--compare", "--compare nope: no run has it; the runs' variants: base, classification-idempotent, "
                  "runtimes-clairvoyant"),
])
def test_a_reference_or_compared_name_no_run_has_is_an_error(results, tmp_path, capsys, option, message):
    """They gave empty tables and exit 0."""
    assert main(["report", str(results), "-o", str(tmp_path / "r"), "--no-plots", option, "nope"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: report: {message}") and err.count("\n") == 1
    assert not (tmp_path / "r" / "REPORT.md").exists()


@pytest.mark.slow
def test_a_machine_size_the_jobs_contradict_is_an_error(results, tmp_path, capsys):
    """A NAME_config.json saying 16 machines for a 128-machine run gave a utilisation of 5.39."""
    run = results / "sample" / "fcfs" / "base" / "seed0"
    shutil.copy(run / "run_jobs.csv", tmp_path / "kth_jobs.csv")
    (tmp_path / "kth_config.json").write_text(json.dumps({"trace": "sample", "nb_machines": 16}))
    assert main(["report", str(tmp_path), "-o", str(tmp_path / "r"), "--no-plots"]) == 1
    assert capsys.readouterr().err.startswith(f"error: {tmp_path / 'kth_config.json'}: 'nb_machines' is 16, but "
                                              "kth_jobs.csv has jobs on machine 127")


def test_markdown_to_html():
    page = markdown_to_html("# Title\n\nSome `code` and **bold**.\n\n| a | b |\n| --- | ---: |\n| x | 1 |\n\n"
                            "![alt](img/x.png)\n\n<details markdown=\"1\"><summary>more</summary>\n\n"
                            "| c |\n| --- |\n| `y` |\n\n</details>\n", title="A & B")
    assert page.startswith("<!DOCTYPE html>") and "<title>A &amp; B</title>" in page
    assert "<h1>Title</h1>" in page and "<code>code</code>" in page and "<strong>bold</strong>" in page
    assert "<th>a</th>" in page and '<td style="text-align: right;">1</td>' in page
    assert '<img alt="alt" src="img/x.png"' in page
    details = page[page.index("<details>"):page.index("</details>")]
    assert "<summary>more</summary>" in details and "<td><code>y</code></td>" in details


@pytest.mark.slow
def test_prediction_accuracy_is_reported(tmp_path):
    """A predictor's run writes its per-job accuracy; ``report`` summarises it, equal to the run's own."""
    assert main(["simulate", str(SAMPLE), "--predictor", "ave2", "--correction", "incremental",
                 "--backfill-order", "spf", "-e", str(tmp_path / "runs" / "easypp"), "--no-progress"]) == 0
    assert main(["simulate", str(SAMPLE), "-e", str(tmp_path / "runs" / "easy"), "--no-progress"]) == 0
    table = pd.read_csv(tmp_path / "runs" / "easypp_predictions.csv")
    assert len(table) == 3000 and (table["first_prediction"] <= table["requested"]).all()
    assert not (tmp_path / "runs" / "easy_predictions.csv").exists()
    summary = json.loads((tmp_path / "runs" / "easypp_summary.json").read_text())["predictions"]
    assert summary["deadline_misses"] == table["deadline_misses"].sum() > 0

    write_report(tmp_path / "runs", tmp_path / "report", plots=False)
    text = (tmp_path / "report" / "REPORT.md").read_text()
    assert "## Runtime prediction accuracy" in text
    runs = pd.read_csv(tmp_path / "report" / "runs.csv").set_index("variant")
    name = "base+backfill_order=spf+predictor=ave2+correction=incremental"
    assert runs.loc[name, "prediction_mae"] == pytest.approx(summary["mae"])
    assert runs.loc[name, "prediction_ra"] == pytest.approx(summary["ra"])
    assert pd.isna(runs.loc["base", "prediction_mae"])
    accuracy = pd.read_csv(tmp_path / "report" / "tables" / "predictions.csv")
    assert list(accuracy["variant"]) == [name]


@pytest.mark.slow
def test_figures_are_fit_for_a_paper(results, tmp_path, monkeypatch):
    """Issue 23: Figure 7 had one labelled tick on a log axis, months ticked 0.2, 0.4 and, on a run shorter than
    a month (this one), an x axis from -0.04 to 0.04; Figure 9's legend covered the tallest bar; PNGs were 90
    dpi. Now: whole months, every panel with labelled y ticks, legends outside every plotting area, PNGs at 150
    dpi with an SVG beside each."""
    import struct

    from batsim_classifier_scheduler.experiments import plots

    figures = {}
    save = plots._save

    def keep(fig, path):
        fig.canvas.draw()
        axes = [ax for ax in fig.axes if ax.get_visible()]
        legends = [*fig.legends, *(ax.get_legend() for ax in axes if ax.get_legend())]
        figures[path.name] = (axes, [legend.get_window_extent() for legend in legends],
                              [ax.get_window_extent() for ax in axes])
        return save(fig, path)

    monkeypatch.setattr(plots, "_save", keep)
    written = write_report(results, tmp_path / "report")
    assert len(figures) == len(written["plots"]) == 6
    for name, (axes, legends, boxes) in figures.items():
        assert legends, name
        for legend in legends:
            assert not any(legend.overlaps(box) for box in boxes), f"{name}: the legend covers a plot"
        for ax in axes:
            low, high = ax.get_ylim()
            labels = [t.get_text() for t in ax.get_yticklabels() if t.get_text() and low <= t.get_position()[1] <= high]
            assert len(labels) >= 3, f"{name}: y ticks {labels}"
            assert ax.get_xlabel() and ax.get_ylabel(), name
    for ax in figures["fig7_monthly_bsld_sample.png"][0]:
        ticks = [t for t in ax.get_xticks() if ax.get_xlim()[0] <= t <= ax.get_xlim()[1]]
        assert ticks == [1.0] and ax.get_xlim() == (0.5, 1.5)  # the one month, as a whole number
    for path in written["plots"]:
        data = path.read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n"
        x_ppm, y_ppm, unit = struct.unpack(">IIB", data[data.index(b"pHYs") + 4:][:9])
        assert unit == 1 and round(x_ppm * 0.0254) == round(y_ppm * 0.0254) == 150
        assert path.with_suffix(".svg").read_text().startswith("<?xml") and f"{path.stem}.svg" in str(path.with_suffix(".svg"))


@pytest.mark.slow
@pytest.mark.parametrize("low, high", [(12.0, 380.0), (1.5, 48.0), (20.0, 9000.0)])
def test_a_log_axis_has_several_labelled_ticks(low, high):
    from batsim_classifier_scheduler.experiments import plots

    fig, ax = plots._pyplot().subplots()
    ax.bar([0, 1], [low, high])
    plots._scale(ax, [low, high])
    fig.canvas.draw()
    bottom, top = ax.get_ylim()
    labels = [t.get_text() for t in ax.get_yticklabels() if t.get_text() and bottom <= t.get_position()[1] <= top]
    plots._pyplot().close(fig)
    assert ax.get_yscale() == "log" and len(labels) >= 4, labels


@pytest.mark.slow
def test_the_tradeoff_table_sets_each_variant_against_base_under_its_own_order(results):
    report = Report(analyze_runs(discover_runs([results])))
    table = report.tradeoff()
    for policy in ("fcfs", "spf"):
        base = table.loc[("sample", policy, "base")]
        assert base["large_vs_base"] == 0 and base["max_wait_vs_base"] == 1 and base["wasted_fraction"] == 0
        idempotent = table.loc[("sample", policy, "classification-idempotent")]
        assert idempotent["wasted_fraction"] > 0
        assert idempotent["reduction"] == pytest.approx(report.reduction().loc[("sample", policy),
                                                                               "classification-idempotent"])
