"""Cleaning rules: each rule counted, the fallbacks, and the reference KTH-SP2 conversion."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from batsim_classifier_scheduler.errors import WorkloadError
from batsim_classifier_scheduler.workloads import CleaningRules, convert_swf
from batsim_classifier_scheduler.workloads.cleaning import _as_int_if_integral, clean
from batsim_classifier_scheduler.workloads.swf import read_swf

from tests.helpers import DATA, SHARED, shared  # noqa: F401


def tiny(**rules):
    return convert_swf(DATA / "tiny.swf", cleaning=CleaningRules(**rules))


def test_each_drop_rule_is_counted():
    workload, report = tiny()
    assert report.swf_jobs == 10 and report.kept_jobs == 7 and report.dropped_jobs == 3
    assert report.dropped == {"runtime<=0": 1, "res<=0": 1, "res>nb_res": 1, "submit<0": 0, "runtime>reqtime": 0}
    assert workload.jobs["id"].tolist() == ["1", "2", "5", "7", "8", "9", "10"]


def test_machine_size_comes_from_the_header():
    workload, report = tiny()
    assert workload.nb_res == report.nb_res == 8
    assert report.nb_res_from == "header MaxProcs"


def test_processors_fall_back_to_the_request():
    workload, report = tiny()
    job5 = workload.jobs.set_index("id").loc["5"]
    assert job5["res"] == 4 and job5["requested_procs"] == 4
    assert report.fixed["res_from_requested"] == 1


def test_allocated_processors_win_over_the_request():
    job9 = tiny()[0].jobs.set_index("id").loc["9"]
    assert (job9["res"], job9["requested_procs"]) == (3, 2)


def test_missing_request_gets_the_trace_maximum_rounded_to_the_hour():
    workload, report = tiny()
    job8 = workload.jobs.set_index("id").loc["8"]
    assert job8["walltime"] == 7200  # largest runtime, 4000 s, rounded up to the hour
    assert report.fixed["walltime_missing"] == 1 and report.missing_walltime == 7200


def test_missing_request_other_rules():
    assert tiny(missing_walltime="none")[0].jobs.set_index("id").loc["8", "walltime"] == -1
    assert tiny(missing_walltime=5000)[0].jobs.set_index("id").loc["8", "walltime"] == 5000
    raised = tiny(missing_walltime=100)[0].jobs.set_index("id").loc["8"]
    assert raised["walltime"] == raised["runtime"] == 4000


def test_runtime_past_the_request_raises_the_walltime():
    workload, report = tiny()
    job7 = workload.jobs.set_index("id").loc["7"]
    assert job7["runtime"] == job7["walltime"] == 90
    assert report.fixed["walltime_raised"] == 1
    assert report.notes["walltime==runtime"] == 2  # jobs 7 and 9


def test_walltime_pad_and_drop_rules():
    job7 = tiny(walltime_pad=10)[0].jobs.set_index("id").loc["7"]
    assert job7["walltime"] == 100
    workload, report = tiny(over_request="drop")
    assert "7" not in workload.jobs["id"].tolist()
    assert report.dropped["runtime>reqtime"] == 1


def test_every_kept_job_has_runtime_at_most_walltime():
    for rules in ({}, {"walltime_pad": 5}, {"over_request": "drop"}, {"missing_walltime": 100}):
        jobs = tiny(**rules)[0].jobs
        assert (jobs["runtime"] <= jobs["walltime"]).all()


def test_times_ids_profiles_and_extras():
    jobs = tiny()[0].jobs
    assert jobs["subtime"].tolist() == [0, 60, 200, 220, 300, 400, 800]
    assert jobs.loc[0, "unix_submit_time"] == 1_000_000_100
    assert jobs["profile"].tolist()[:2] == ["delay_50", "delay_120"]
    assert {"user", "group", "executable", "queue", "partition", "requested_procs"} <= set(jobs.columns)


def test_machine_size_priority():
    trace = read_swf(DATA / "tiny.swf")
    assert clean(trace, nb_res=16)[1].nb_res_from == "given"
    assert clean(trace, nb_res=16)[1].dropped["res>nb_res"] == 0
    trace.header.pop("MaxProcs"), trace.header.pop("MaxNodes")
    workload, report = clean(trace)
    assert (workload.nb_res, report.nb_res_from) == (16, "largest job (no MaxProcs header)")


def test_report_format_lists_what_happened():
    text = tiny()[1].format()
    assert "10 jobs read, 7 kept, 3 dropped" in text
    for expected in ("runtime<=0", "res<=0", "res>nb_res", "7200 s", "COMPLETED_WALLTIME_REACHED"):
        assert expected in text


def test_invalid_rules_and_empty_result():
    with pytest.raises(WorkloadError, match="over_request"):
        CleaningRules(over_request="keep")
    with pytest.raises(WorkloadError, match="missing_walltime"):
        CleaningRules(missing_walltime="max")
    with pytest.raises(WorkloadError, match="no job left after cleaning"):
        clean(read_swf(DATA / "tiny.swf", where=lambda chunk: chunk["runtime"] <= 0))
    for pad in (math.nan, math.inf, -1.0):
        with pytest.raises(WorkloadError, match="walltime_pad must be seconds from 0 to 8589934592"):
            CleaningRules(walltime_pad=pad)
    with pytest.raises(WorkloadError, match="missing_walltime must be positive seconds"):
        CleaningRules(missing_walltime=math.inf)


def test_the_machine_size_and_the_start_time_must_fit_the_simulator(tmp_path):
    path = tmp_path / "big.swf"
    path.write_text("; MaxProcs: 99999999999\n; UnixStartTime: 1\n1 0 0 10 4 -1 -1 4 20 -1 1 1 1 1 1 1 -1 -1\n")
    with pytest.raises(WorkloadError, match=r"big\.swf: machine size 99999999999 \(header MaxProcs\) must be in "
                                            r"1\.\.16,777,216"):
        clean(read_swf(path))
    path.write_text("; MaxProcs: 8\n; UnixStartTime: 99999999999999\n1 0 0 10 4 -1 -1 4 20 -1 1 1 1 1 1 1 -1 -1\n")
    with pytest.raises(WorkloadError, match=r"big\.swf: header: invalid 'UnixStartTime': 99999999999999 \(expected "
                                            r"seconds within 8589934592"):
        clean(read_swf(path))
    # found by tests/test_fuzz_doors.py: convert wrote a TimeZone its own reader refused
    path.write_text("; MaxProcs: 8\n; TimeZone: 9007199254740993\n1 0 0 10 4 -1 -1 4 20 -1 1 1 1 1 1 1 -1 -1\n")
    with pytest.raises(WorkloadError, match=r"big\.swf: header: invalid 'TimeZone': 9007199254740993 \(expected an "
                                            r"offset in seconds within a day\)"):
        clean(read_swf(path))


def test_kth_counts_match_the_reference_conversion():
    stats = json.loads(shared("reference-schedules/KTH-SP2/conversion-stats.json").read_text())
    workload, report = convert_swf(shared("workloads/KTH-SP2-1996-2.1-cln.swf.gz"))
    assert report.swf_jobs == stats["swf_jobs"]
    assert report.kept_jobs == stats["kept_jobs"]
    assert report.nb_res == stats["machine_size"]
    assert report.first_submit == stats["first_submit_raw"]
    assert {k: v for k, v in report.dropped.items() if v} == stats["dropped_by_first_reason"]
    assert report.fixed["walltime_raised"] == stats["notes"]["walltime_from_runtime_reqtime<runtime"]
    assert report.notes["walltime==runtime"] == stats["notes"]["walltime==runtime"]
    assert report.notes["alloc!=requested_procs"] == stats["notes"]["alloc!=requested_procs"]
    assert workload.jobs["profile"].nunique() == stats["nb_profiles"]


def test_lublin_trace_without_requests_converts():
    workload, report = convert_swf(shared("workloads/lublin_256.swf.gz"))
    jobs = workload.jobs
    assert workload.nb_res == 256 and report.kept_jobs == 10000
    assert report.fixed["walltime_missing"] == 10000
    assert jobs["walltime"].nunique() == 1
    assert (jobs["runtime"] < jobs["walltime"]).all()
    assert np.isclose(jobs["walltime"].iloc[0] % 3600, 0)


JOB = "1 0 0 10 4 -1 -1 4 20 -1 1 1 1 1 1 1 -1 -1\n"


@pytest.mark.parametrize("header, size, said", [
    ("; MaxNodes: 184  ( 6,  171,   7)\n; MaxProcs: 1664 (72, 1368, 224)\n", 1664,
     "header MaxProcs, 3 partitions: 72 + 1,368 + 224"),
    ("; MaxNodes: 184  ( 6,  171,   7)\n", 184, "header MaxNodes, 3 partitions: 6 + 171 + 7"),
    ("; MaxProcs: 32\n", 32, "header MaxProcs"),
    ("; MaxProcs: many\n", 4, "largest job (no MaxProcs header)"),
    ("", 4, "largest job (no MaxProcs header)"),
])
def test_a_header_with_a_partition_list_gives_the_machine_s_total(header, size, said, tmp_path):
    path = tmp_path / "multi.swf"
    path.write_text(header + JOB)
    workload, report = convert_swf(path)
    assert (workload.nb_res, report.nb_res_from) == (size, said)
    assert f"machine: {size:,} processors ({said})" in report.format()


def test_sdsc_ds_runs_on_its_1664_processors():
    from batsim_classifier_scheduler.workloads.swf import SwfTrace, read_header

    header = read_header(shared("workloads/SDSC-DS-2004-2.1-cln.swf.gz"))
    assert SwfTrace(table=None, header=header, path=None).declared_size() == ("MaxProcs", 1664, (72, 1368, 224))


@pytest.mark.parametrize("values, dtype", [([3.0, -1.0, 7.0], np.int32), ([3, 2**31], np.int64),
                                           ([-(2**31), 2**31 - 1], np.int32), ([1.5, 2.0], np.float64)])
def test_integral_extra_fields_are_kept_as_narrow_integers_as_their_values_allow(values, dtype):
    kept = _as_int_if_integral(np.array(values))
    assert kept.dtype == dtype and kept.tolist() == values
