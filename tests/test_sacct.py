"""Slurm accounting (sacct --parsable2) as a workload (issue 50): the corpus of tests/data/sacct/ (synthetic
files in the formats clusters produce), each converted with its jobs asserted; the round trip of an SWF trace
through sacct output; the errors, through the CLI."""

from __future__ import annotations

import gzip
import re

import numpy as np
import pandas as pd
import pytest

from batsim_classifier_scheduler.cli import main
from batsim_classifier_scheduler.errors import WorkloadError
from batsim_classifier_scheduler.platforms import read_platform
from batsim_classifier_scheduler.workloads import load_workload, workload_format
from batsim_classifier_scheduler.workloads.sacct import convert_sacct
from batsim_classifier_scheduler.workloads.sacct_fields import SacctOptions, columns_for, parse_field_list
from batsim_classifier_scheduler.workloads.sacct_jobs import STATUS, peak_usage
from batsim_classifier_scheduler.workloads.sacct_write import write_sacct
from batsim_classifier_scheduler.workloads.swf import read_swf, write_swf

from tests.helpers import DATA, REPO, SHARED

SACCT = DATA / "sacct"
COLUMNS = ["id", "subtime", "res", "walltime", "runtime"]


def jobs_of(name: str, **options) -> tuple[list[tuple], object]:
    workload, report = convert_sacct(SACCT / name, options=SacctOptions(**options))
    rows = [tuple(row) for row in workload.jobs[COLUMNS].itertuples(index=False)]
    return rows, report


def exit_code(argv: list[str]) -> int:
    try:
        return main([str(arg) for arg in argv])
    except SystemExit as stop:
        return stop.code


# --- the corpus --------------------------------------------------------------------------------------------


def test_steps_are_not_jobs_and_every_state_is_kept_or_dropped_as_documented():
    rows, report = jobs_of("steps.sacct")
    assert rows == [("1001", 0, 8, 3600, 1800), ("1002", 300, 16, 93630, 93630), ("1003", 1200, 4, 600, 100),
                    ("1004", 1800, 2, 7200, 600), ("1005", 3300, 32, 97200, 1200), ("1006", 3600, 8, 97200, 600),
                    ("1007", 6600, 4, 3600, 300), ("1011", 12000, 2, 600, 600), ("1014", 14400, 1, 1200, 600)]
    assert report.records == {"records": 24, "steps": 10, "requeue_attempts": 0, "het_components": 0,
                              "array_elements": 0}
    assert (report.swf_jobs, report.kept_jobs) == (14, 9)
    assert {rule: n for rule, n in report.dropped.items() if n} == {
        "not-finished": 3, "cancelled-before-start": 1, "never-started": 1}  # RUNNING, PENDING, REQUEUED; 1008; 1012
    assert report.fixed["walltime_missing"] == 2 and report.missing_walltime == 97200  # UNLIMITED, Partition_Limit
    assert report.fixed["walltime_raised"] == 1  # the TIMEOUT ran 30 s past its limit
    assert (report.nb_res, report.unit) == (56, "processors")  # 1002, 1005 and 1006 at 11:05
    text = report.format()
    assert "10  job steps: not jobs" in text and "the peak of processors in use at once" in text
    assert "TIMEOUT 1 (SWF status 0)" in text and "CANCELLED 1 (SWF status 5)" in text
    assert "times: without a UTC offset" in text and "runtime: field Elapsed" in text


def test_users_and_groups_are_numbered_by_first_submission_unless_kept():
    workload, _ = convert_sacct(SACCT / "steps.sacct")
    assert workload.jobs["user"].tolist() == [1, 2, 1, 3, 2, 4, 1, 1, 1]
    assert workload.jobs["group"].tolist() == [1, 2, 1, 3, 2, 3, 1, 1, 1]
    named, _ = convert_sacct(SACCT / "steps.sacct", options=SacctOptions(keep_names=True))
    assert named.jobs["user"].tolist()[:4] == ["alice", "bob", "alice", "carol"]


def test_eligible_time_as_the_submission():
    rows, report = jobs_of("steps.sacct", submit="eligible")
    assert rows[-1] == ("1014", 18000, 1, 1200, 600)  # held an hour: eligible at 15:00
    assert "submission: field Eligible" in report.format()


def test_arrays_heterogeneous_jobs_and_requeues():
    rows, report = jobs_of("arrays_het_requeue.sacct")
    assert rows == [("2000_1", 0, 4, 1800, 300), ("2000_2", 0, 4, 1800, 600),
                    ("3000", 3600, 18, 3600, 1800),  # 3000+0 and 3000+1: sizes summed, longest runtime and limit
                    ("4000", 7860, 8, 7200, 3600),  # the last attempt
                    ("5000", 9000, 1, 7200, 30)]
    assert report.records == {"records": 8, "steps": 0, "requeue_attempts": 1, "het_components": 2,
                              "array_elements": 2}
    assert report.dropped["array-pending"] == 1 and report.nb_res == 18
    text = report.format()
    for said in ("earlier attempts of requeued jobs: the last attempt kept", "components of heterogeneous jobs",
                 "array elements: a job each", "array elements still pending"):
        assert said in text


def test_a_partition_filter_and_its_machine():
    rows, report = jobs_of("arrays_het_requeue.sacct", partitions=("gpu",))
    assert [row[0] for row in rows] == ["2000_1", "2000_2"]
    assert report.dropped["other-partition"] == 3 and report.nb_res == 8
    assert "partition gpu" in report.nb_res_from


def test_mixed_offsets_are_normalised_to_utc_and_nodes_can_be_the_unit():
    rows, report = jobs_of("offsets.sacct")
    # 600 ran 01:40+0100 to 03:40+0200, one hour across the change to summer time; runtime from End - Start
    assert rows == [("600", 0, 64, 7200, 3600), ("601", 2400, 32, 3600, 1800), ("602", 2700, 4, 600, 100)]
    assert "UTC offsets +0100, +0200: normalised to UTC" in report.format() and report.nb_res == 100
    nodes, report = jobs_of("offsets.sacct", unit="nodes")
    assert [row[2] for row in nodes] == [2, 1, 1] and report.nb_res == 4 and "4 nodes" in report.format()


def test_one_offset_is_the_classifier_s_time_zone():
    workload, report = convert_sacct(SACCT / "one_offset.sacct")
    assert workload.header == {"UnixStartTime": 1704895200, "TimeZone": -18000}
    assert workload.jobs["unix_submit_time"].tolist() == [1704895200, 1704895800]
    assert "CANCELLED 1 (SWF status 5)" in report.format()  # cancelled while it ran: kept


def test_without_header_given_the_fields_and_the_same_with_header_gzipped_and_trailing_bars():
    fields = parse_field_list("JobID,Submit,Start,End,ElapsedRaw,TimelimitRaw%10,AllocCPUS,user,State")
    bare, _ = jobs_of("noheader.sacct", fields=fields)
    assert bare == [("700", 0, 2, 900, 600), ("701", 300, 2, 960, 960)]  # TIMEOUT past 15 min: raised
    packed, _ = jobs_of("parsable.sacct.gz")  # sacct -p: each line ends with '|'
    assert packed == bare
    with pytest.raises(WorkloadError, match=r"noheader\.sacct:1: not a sacct --parsable2 header"):
        convert_sacct(SACCT / "noheader.sacct")
    with pytest.raises(ValueError, match="'Sbumit' is not a sacct field"):
        parse_field_list("JobID,Sbumit")


def test_the_format_is_recognised_by_name_header_or_fields(tmp_path):
    plain = tmp_path / "accounting.txt"
    plain.write_text((SACCT / "offsets.sacct").read_text())
    assert workload_format(plain) == "sacct" and len(load_workload(plain)) == 3
    assert workload_format(SACCT / "noheader.sacct") == "sacct"  # by its name
    bare = tmp_path / "bare.txt"
    bare.write_text((SACCT / "noheader.sacct").read_text())
    with pytest.raises(WorkloadError, match="unknown workload format"):
        workload_format(bare)
    assert workload_format(bare, SacctOptions(fields=("JobID",))) == "sacct"


def test_every_state_named_in_the_docs_has_a_final_state():
    for state in ("COMPLETED", "TIMEOUT", "FAILED", "OUT_OF_MEMORY", "NODE_FAIL", "PREEMPTED", "CANCELLED",
                  "RUNNING", "PENDING", "REQUEUED", "DEADLINE", "BOOT_FAIL", "SUSPENDED"):
        assert state in STATUS
    assert STATUS["COMPLETED"] == 1 and STATUS["CANCELLED"] == 5 and STATUS["RUNNING"] is None


def test_the_documented_sacct_command_gives_what_every_option_needs_and_every_state_is_documented():
    fields = parse_field_list(re.search(r"--format (\S+) \\", (REPO / "docs" / "usage.md").read_text()).group(1))
    for options in (SacctOptions(), SacctOptions(submit="eligible", unit="nodes", partitions=("batch",))):
        chosen = columns_for(fields, options)
        assert {chosen["elapsed"], chosen["limit"], chosen["user"]} == {"ElapsedRaw", "Timelimit", "User"}
    slurm = (REPO / "docs" / "slurm.md").read_text()
    for state in STATUS:
        assert f"`{state}`" in slurm, state


def test_peak_usage_frees_before_it_takes_at_one_instant():
    assert peak_usage(np.array([0.0, 10.0]), np.array([10.0, 5.0]), np.array([4, 4])) == 4
    assert peak_usage(np.array([0.0, 5.0]), np.array([10.0, 5.0]), np.array([4, 3])) == 7


# --- the CLI and its errors ----------------------------------------------------------------------------------


def test_convert_writes_the_workload_and_its_platform(tmp_path, capsys):
    out, xml = tmp_path / "w.json", tmp_path / "p.xml"
    assert exit_code(["convert", SACCT / "steps.sacct", "-o", out, "--platform-out", xml]) == 0
    printed = capsys.readouterr().out
    assert "14 jobs read, 9 kept, 5 dropped" in printed and "not-finished" in printed
    workload = load_workload(out)
    assert len(workload) == 9 and workload.nb_res == 56 and "alice" not in out.read_text()
    assert read_platform(xml).nb_compute_hosts == 56


def test_simulate_reads_it_with_its_options(tmp_path, capsys):
    argv = ["simulate", SACCT / "arrays_het_requeue.sacct", "--partition", "gpu", "--no-progress", "-e", tmp_path / "r"]
    assert exit_code(argv) == 0
    assert "2 kept" in capsys.readouterr().out
    assert pd.read_csv(tmp_path / "r_jobs.csv")["job_id"].astype(str).tolist() == ["2000_1", "2000_2"]


@pytest.mark.parametrize("argv, code, says", [
    (["convert", SACCT / "bad_header.sacct", "--format", "sacct"], 2,
     "bad_header.sacct:1: not a sacct --parsable2 header"),
    (["convert", SACCT / "missing_field.sacct"], 2, "missing_field.sacct:1: no State field"),
    (["convert", SACCT / "bad_time.sacct"], 2, "bad_time.sacct:3: field Start: '2024-06-01 10:02:00' is not a time"),
    (["convert", SACCT / "unfinished.sacct"], 1, "unfinished.sacct: no job left of 2 in 2 records"),
    (["simulate", SACCT / "bad_time.sacct"], 2, "bad_time.sacct:3: field Start"),
    (["convert", SACCT / "noheader.sacct", "--sacct-fields", "JobID,Sbumit"], 2, "'Sbumit' is not a sacct field"),
    (["convert", SACCT / "noheader.sacct", "--sacct-fields", "JobID,Submit,Start"], 2, "--sacct-fields: no State"),
    (["simulate", DATA / "mixed.json", "--unit", "nodes"], 2, "--unit reads Slurm accounting"),
])
def test_bad_input_is_one_line_naming_file_line_and_field(tmp_path, capsys, argv, code, says):
    assert exit_code([*argv, *(["-o", tmp_path / "x.json"] if argv[0] == "convert" else [])]) == code
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error: ") and says in err, err


def test_a_sweep_reads_a_sacct_trace_with_its_options(tmp_path):
    from batsim_classifier_scheduler.experiments.grid import parse_config
    from batsim_classifier_scheduler.experiments.traces import prepare_trace, trace_key

    config = parse_config({"traces": [{"path": str(SACCT / "arrays_het_requeue.sacct"),
                                       "sacct": {"partitions": ["gpu"]}}, str(SACCT / "offsets.sacct")]})
    gpu, plain = config.traces
    assert gpu.sacct == {"fields": None, "submit": "submit", "unit": "cpus", "partitions": ["gpu"],
                         "keep_names": False} and plain.sacct is None  # as JSON gives it back: cached keys match
    assert "sacct" not in trace_key(plain, SACCT / "offsets.sacct")  # other traces' keys are as before
    info = prepare_trace(gpu.path, trace_key(gpu, SACCT / "arrays_het_requeue.sacct"), str(tmp_path / "t.pkl"))
    assert (info["jobs"], info["nb_machines"]) == (2, 8)


# --- the round trip ------------------------------------------------------------------------------------------


def synthetic_swf(path, n: int = 300, seed: int = 5) -> None:
    """A small SWF trace: jobs on a 32-processor machine, with unknown requests and runtimes among them."""
    rng = np.random.default_rng(seed)
    runtime = np.round(rng.lognormal(6, 1.5, n)).clip(0, 50_000)
    runtime[rng.random(n) < 0.03] = -1
    request = np.round(runtime.clip(60) * rng.uniform(0.8, 4, n))
    request[rng.random(n) < 0.05] = -1
    jobs = pd.DataFrame({"job": np.arange(1, n + 1), "submit": np.cumsum(rng.integers(0, 900, n)),
                         "wait": rng.integers(0, 3600, n), "runtime": runtime,
                         "procs_alloc": rng.choice([1, 2, 4, 8, 16, 32], n), "procs_req": -1,
                         "time_req": request, "status": rng.choice([0, 1, 5], n, p=[0.2, 0.7, 0.1]),
                         "user": rng.integers(1, 12, n), "group": rng.integers(1, 4, n), "partition": 1})
    jobs["procs_req"] = jobs["procs_alloc"]
    write_swf(path, jobs, {"UnixStartTime": 1_600_000_000, "MaxProcs": 32})


def assert_same_jobs_csv(swf, sacct, nb_res: int, variants: str, tmp_path) -> None:
    for source, prefix in ((swf, "swf"), (sacct, "sacct")):
        assert exit_code(["simulate", source, "--nb-res", nb_res, "--variant", variants, "--no-progress",
                          "-e", tmp_path / prefix]) == 0
    for variant in variants.split(","):
        swf_jobs = (tmp_path / f"swf_{variant}_jobs.csv").read_bytes()
        assert (tmp_path / f"sacct_{variant}_jobs.csv").read_bytes() == swf_jobs, variant


def test_round_trip_of_a_synthetic_trace(tmp_path, capsys):
    swf, sacct = tmp_path / "t.swf", tmp_path / "t.sacct.gz"
    synthetic_swf(swf)
    write_sacct(sacct, read_swf(swf).jobs, unix_start=1_600_000_000, steps=True)
    assert gzip.open(sacct, "rt").readline().startswith("JobID|Submit|")
    assert_same_jobs_csv(swf, sacct, 32, "base,class-clairvoyant,classification-idempotent", tmp_path)
    printed = capsys.readouterr().out
    assert "job steps: not jobs" in printed


def test_round_trip_of_kth_sp2(tmp_path, capsys):
    """The first 2,000 jobs of KTH-SP2 (the whole trace takes 6 s more, and is byte for byte the same too)."""
    trace = SHARED / "workloads" / "KTH-SP2-1996-2.1-cln.swf.gz"
    if not trace.exists():
        pytest.skip(f"{trace} not available")
    read = read_swf(trace)
    swf, sacct = tmp_path / "kth.swf", tmp_path / "kth.sacct"
    write_swf(swf, read.jobs.iloc[:2000], {"UnixStartTime": read.unix_start_time, "MaxProcs": 100})
    write_sacct(sacct, read.jobs.iloc[:2000], unix_start=read.unix_start_time, offset="+0000")
    assert_same_jobs_csv(swf, sacct, 100, "base,class-clairvoyant", tmp_path)
