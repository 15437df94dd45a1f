"""``simulate`` on the command line: the README's quick start (a comparison of variants), one variant,
bad variant lists, and what the cleaning and the scheduler left out, said on the console."""

import json
import re
import shlex

import pandas as pd
import pytest

from batsim_classifier_scheduler.cli import main
from batsim_classifier_scheduler.workloads import write_batsim_json
from batsim_classifier_scheduler.workloads.synthetic import generate

from tests.helpers import DATA, REPO, comparison_table


def quick_start_command() -> list[str]:
    """The arguments of ``python -m batsim_classifier_scheduler`` in the README's first command (the quick start)."""
    readme = (REPO / "README.md").read_text()
    section = readme[readme.index("## Set up"):]
    command = re.search(r"```sh\n(.+)\n", section).group(1)
    install, run = command.rsplit(" && ", 1)
    assert install.startswith("python3 -m venv .venv && .venv/bin/pip install")
    assert run.startswith(".venv/bin/python -m batsim_classifier_scheduler simulate ")
    return shlex.split(run)[3:]


@pytest.mark.slow
def test_the_readme_quick_start_compares_variants_side_by_side(tmp_path, monkeypatch, capsys):
    argv = quick_start_command()
    variants = argv[argv.index("--variant") + 1].split(",")
    assert variants == ["base", "classification-idempotent", "class-clairvoyant", "classification-ordered",
                        "classification-guaranteed"]
    (tmp_path / "workloads").symlink_to(REPO / "workloads")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("COLUMNS", "100")
    assert main(argv) == 0
    out, err = capsys.readouterr()
    prefix = argv[argv.index("--output-prefix") + 1]
    summaries = {name: json.loads((tmp_path / f"{prefix}_{name}_summary.json").read_text()) for name in variants}

    # issue 39: the whole output fits the console's 100 columns (it was 187 wide)
    assert max(len(line) for line in (out + err).splitlines()) <= 100
    names, rows = comparison_table(out)
    assert names == variants
    bsld = [summaries[name]["metrics"]["mean_bsld"] for name in variants]
    assert rows["mean bsld (tau=60s)"] == [f"{value:.2f}" for value in bsld]
    assert rows["reduction vs base"] == ["–"] + [f"{1 - value / bsld[0]:.1%}" for value in bsld[1:]]
    # issue 39: what the README's claims rest on: the large jobs' change and the longest wait against base's
    large = [summaries[name]["metrics"]["mean_bsld_actual_large"] for name in variants]
    assert rows["large jobs vs base"] == ["–"] + [f"{value / large[0] - 1:+.1%}" for value in large[1:]]
    longest = [summaries[name]["metrics"]["max_wait"] for name in variants]
    assert rows["vs base"] == ["–"] + [f"{value / longest[0]:.2f}×" for value in longest[1:]]
    assert rows["makespan"][0] == "35.4 d" and rows["mean wait"][0] == "5.60 h"  # 3,059,789 s and 20,158 s
    low, high = summaries["classification-ordered"]["classifier"]["divider_range"]
    assert rows["divider"] == ["–"] + [f"{low / 60:.1f}–{high / 60:.1f} min"] * 4
    assert rows["classifier"] == ["none", "rf", "oracle", "rf", "rf"]
    assert rows["safeguard"] == ["none", "kill", "none", "kill", "kill"]
    assert rows["probe_threshold"] == ["–", "–", "–", "0.02", "0.02"]  # issue 23: not None
    assert rows["probe_limit"] == ["–", "–", "–", "300.0", "300.0"]
    assert rows["kill_on"] == ["–", "deadline", "–", "blocking", "blocking"]  # no safeguard: –
    assert rows["head_slack"] == ["–", "–", "–", "0.3", "0.3"]  # acts with kill_on blocking only
    assert rows["promote_after"] == ["–", "never", "never", "7.0", "7.0"]  # needs a classifier
    assert rows["order_by"] == ["–", "–", "–", "estimate", "estimate"]  # needs divider_estimates all
    assert rows["kill_limit"] == ["–", "–", "–", "–", "0.1"]  # the site's limits: guaranteed's alone
    assert rows["promote_overdue"] == ["–", "none", "–", "none", "queue-user"]
    assert rows["classifier precision"][0] == "–" and rows["classifier precision"][2] == "1.000"
    assert rows["classifier recall"][1] == f"{summaries['classification-idempotent']['classifier']['recall']:.3f}"
    kills = [summaries[name]["metrics"]["nb_kills"] for name in variants]
    assert kills[1] > 0 and kills[0] == kills[2] == 0
    assert rows["wasted processor-hours"][0] == "0" and rows["share of the work"][1].endswith("%")
    # issue 31: the utilisation of useful work (a variant that only adds kills keeps base's), the jobs killed
    utilisation = [summaries[name]["metrics"]["utilisation"] for name in variants]
    assert rows["useful utilisation"] == [f"{u:.3f}" for u in utilisation]
    assert all(abs(u - utilisation[0]) < 0.02 for u in utilisation)
    killed = [summaries[name]["metrics"]["nb_jobs_killed"] for name in variants]
    assert rows["jobs killed"] == [f"{k:,}" for k in killed] and 0 < killed[1]
    # no job of the sample is killed twice: the killed attempts would only repeat the jobs killed
    assert killed == kills and "killed attempts" not in rows
    assert rows["share of all jobs"] == [f"{k / 3000:.2%}" for k in killed]
    assert "scheduler EASY-FCFS, estimates=requested" in out
    for name in variants:
        assert f"wrote {prefix}_{name}_jobs.csv, _schedule.csv, _summary.json" in out
        assert summaries[name]["config"]["classifier"] == rows["classifier"][variants.index(name)]

    # Issue 23: `report` on this output gives each run its own column, with the values simulate printed
    assert main(["report", str((tmp_path / prefix).parent), "-o", str(tmp_path / "report"), "--no-plots"]) == 0
    report = pd.read_csv(tmp_path / "report" / "runs.csv").set_index("variant")
    assert sorted(report.index) == sorted(variants)
    for name in variants:
        column = variants.index(name)
        assert f"{report.loc[name, 'mean_bsld']:.2f}" == rows["mean bsld (tau=60s)"][column]
        assert f"{report.loc[name, 'nb_kills']:,}" == rows["jobs killed"][column]
        assert f"{report.loc[name, 'nb_jobs_killed']:,}" == rows["jobs killed"][column]
        assert f"{report.loc[name, 'utilisation']:.3f}" == rows["useful utilisation"][column]
        own = summaries[name].get("classifier") or {}
        if name != "base" and not own.get("trials_refused"):
            assert f"{report.loc[name, 'classifier_precision']:.3f}" == rows["classifier precision"][column]
            assert f"{report.loc[name, 'classifier_recall']:.3f}" == rows["classifier recall"][column]
        elif name != "base":  # the report reads the class a job was treated as: a job refused a trial is large
            assert report.loc[name, "classifier_n"] == own["n"] and report.loc[name, "classifier_tp"] <= own["tp"]
    bsld = (tmp_path / "report" / "REPORT.md").read_text().split("## Mean bounded slowdown")[1]
    assert "| trace | policy | " + " | ".join(variants) + " |" in bsld


def small_workload(tmp_path, jobs=300):
    path = tmp_path / "small.json"
    write_batsim_json(generate(jobs, weeks=2, nb_res=16, seed=2), path)
    return path


def test_one_variant_prints_one_table_and_writes_under_the_prefix_itself(tmp_path, capsys):
    assert main(["simulate", str(small_workload(tmp_path)), "--variant", "class-clairvoyant",
                 "-e", str(tmp_path / "run")]) == 0
    out = capsys.readouterr().out
    assert out.startswith("workload             small.json (300 jobs, 16 machines)\n")
    assert "classifier           oracle: precision 1.000" in out
    assert (tmp_path / "run_jobs.csv").is_file() and not list(tmp_path.glob("run_class-clairvoyant*"))


@pytest.mark.slow
def test_all_variants_and_option_flags_apply_to_each(tmp_path, capsys):
    assert main(["simulate", str(small_workload(tmp_path)), "--variant", "all", "--policy", "spf",
                 "-e", str(tmp_path / "cmp")]) == 0
    out = capsys.readouterr().out
    assert "scheduler EASY-SPF" in out and "reduction vs base" in out
    summaries = {path.name.removeprefix("cmp_").removesuffix("_summary.json"): json.loads(path.read_text())
                 for path in tmp_path.glob("cmp_*_summary.json")}
    from batsim_classifier_scheduler.config import VARIANTS

    assert set(summaries) == set(VARIANTS)
    assert {summary["config"]["policy"] for summary in summaries.values()} == {"spf"}
    assert summaries["runtimes-clairvoyant"]["config"]["estimates"] == "clairvoyant"


@pytest.mark.parametrize("argv, message", [
    (["--variant", " , "], "argument --variant: empty variant list"),
    (["--variant", "base,nope"], "argument --variant: unknown variant 'nope'"),
    (["--variant", "base,base"], "argument --variant: base is listed twice"),
    (["--variant", "base,classification", "--save-model", "m.pkl"], "--save-model .* single --variant"),
])
def test_bad_variant_lists_are_one_line_errors_naming_the_option(tmp_path, capsys, argv, message):
    assert main(["simulate", str(tmp_path / "not-read.json"), *argv]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and re.fullmatch(f"error: simulate: {message}.*\n", captured.err)


def swf(tmp_path, lines: list[str], header: str = "") -> str:
    path = tmp_path / "trace.swf"
    path.write_text(header + "".join(f"{line} -1 -1 -1 200 -1 1 1 1 1 1 -1 -1 -1\n" for line in lines))
    return str(path)


def test_a_job_wider_than_the_machine_dropped_by_the_cleaning_is_said(tmp_path, capsys):
    # the header gives 16 processors: the cleaning drops the 32-processor job before the run
    trace = swf(tmp_path, ["1 0 0 100 32", "2 10 0 100 4"], header="; MaxProcs: 16\n")
    assert main(["simulate", trace, "-e", str(tmp_path / "run")]) == 0
    out = capsys.readouterr().out
    assert "trace.swf: 2 jobs read, 1 kept, 1 dropped" in out
    assert re.search(r"dropped +1  res>nb_res +more processors than the machine", out)
    assert "(1 jobs, 16 machines)" in out and "rejected" not in out
    cleaning = json.loads((tmp_path / "run_summary.json").read_text())["workload"]["cleaning"]
    assert cleaning["dropped"]["res>nb_res"] == 1 and cleaning["kept_jobs"] == 1


def test_a_job_wider_than_the_platform_rejected_by_the_scheduler_is_said(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "100")  # the lines below fit it whole
    # no header: the cleaning sizes the machine by the largest job (32); the run is on 16 machines
    trace = swf(tmp_path, ["1 0 0 100 32", "2 10 0 100 4"])
    assert main(["simulate", trace, "--nb-res", "16"]) == 0
    out = capsys.readouterr().out
    assert "2 jobs read, 2 kept, 0 dropped" in out and "(2 jobs, 16 machines)" in out
    assert "jobs                 2: 1 succeeded, 1 rejected\n" in out
    assert "rejected             1 job: requests 32 processors, the platform has 16 (1 job)\n" in out
    # in a comparison, below the table, for each variant
    assert main(["simulate", trace, "--nb-res", "16", "--variant", "base,runtimes-clairvoyant"]) == 0
    out = capsys.readouterr().out
    assert "rejected (every variant): 1 job: requests 32 processors, the platform has 16 (1 job)" in out


def test_every_cleaning_rule_is_reported_with_its_count(capsys):
    assert main(["simulate", str(DATA / "tiny.swf")]) == 0
    out = capsys.readouterr().out
    for expected in [r"tiny\.swf: 10 jobs read, 7 kept, 3 dropped", r"machine: 8 processors \(header MaxProcs\)",
                     r"dropped +1  runtime<=0", r"dropped +1  res<=0", r"dropped +1  res>nb_res",
                     r"fixed +1  processors taken from the request", r"fixed +1  no requested time: walltime = 7200 s",
                     r"fixed +1  ran past the request: walltime raised to the runtime",
                     r"note +2  walltime == runtime"]:
        assert re.search(expected, out), expected
