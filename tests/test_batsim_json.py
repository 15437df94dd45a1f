"""Batsim JSON workloads: SWF round trip, the reference workload, format and errors."""

from __future__ import annotations

import gzip
import json
import math
from pathlib import Path

import pandas as pd
import pytest

from batsim_classifier_scheduler.errors import WorkloadError
from batsim_classifier_scheduler.workloads import convert_swf, load_workload, read_batsim_json, write_batsim_json
from batsim_classifier_scheduler.workloads.batsim_json import delay_profile_names, workload_json
from batsim_classifier_scheduler.workloads.model import Workload

from tests.helpers import DATA, SHARED, shared  # noqa: F401


def workload(**columns) -> Workload:
    jobs = {"id": ["1", "2"], "subtime": [0.0, 5.0], "res": [1, 2], "walltime": [100.0, -1.0],
            "runtime": [10.0, 12.5], "profile": ["delay_10", "delay_12.5"], **columns}
    return Workload(jobs=pd.DataFrame(jobs), nb_res=4)


@pytest.mark.parametrize("name", ["tiny.json", "tiny.json.gz"])
def test_swf_to_json_round_trip(tmp_path, name):
    converted, _ = convert_swf(DATA / "tiny.swf")
    back = load_workload(write_batsim_json(converted, tmp_path / name))
    pd.testing.assert_frame_equal(back.jobs, converted.jobs, check_dtype=False)
    assert back.nb_res == converted.nb_res
    # the time-zone header fields the classifier needs survive the conversion
    for key in ("UnixStartTime", "TimeZoneString", "TimeZone"):
        assert back.header.get(key) == converted.header.get(key)


def test_written_format_shares_one_delay_profile_per_runtime(tmp_path):
    converted, _ = convert_swf(DATA / "tiny.swf")
    data = json.loads(workload_json(converted, description="from tiny.swf"))
    header = [key for key in ("UnixStartTime", "TimeZoneString", "TimeZone") if key in converted.header]
    assert header  # tiny.swf gives its start time and time zone
    assert list(data) == ["nb_res", "description", *header, "jobs", "profiles"]
    first = data["jobs"][0]
    assert first == {"id": 1, "subtime": 0, "res": 2, "walltime": 60, "profile": "delay_50", "user": 1,
                     "group": 1, "executable": 1, "queue": 1, "partition": -1, "requested_procs": 2,
                     "unix_submit_time": 1000000100}
    assert data["profiles"]["delay_4000"] == {"type": "delay", "delay": 4000}
    assert len(data["profiles"]) == converted.jobs["runtime"].nunique()


def test_one_job_per_line():
    text = workload_json(workload())
    assert '{"id":1,"subtime":0,"res":1,"walltime":100,"profile":"delay_10"},\n' in text


def test_float_runtimes_and_string_ids():
    data = json.loads(workload_json(workload(id=["a", "b"], subtime=[0.25, 5.0])))
    assert [job["id"] for job in data["jobs"]] == ["a", "b"]
    assert data["jobs"][0]["subtime"] == 0.25
    assert data["profiles"]["delay_12.5"]["delay"] == 12.5


def test_missing_extra_values_are_left_out(tmp_path):
    text = workload_json(read_batsim_json(DATA / "mixed.json"))
    assert '{"id":"b","subtime":7.5,"res":2,"walltime":-1,"profile":"p1","user":3},' in text
    assert '{"id":"c","subtime":7.5,"res":4,"walltime":-1,"profile":"p1"}\n' in text


def test_reading_sorts_by_subtime_and_defaults_walltime():
    jobs = read_batsim_json(DATA / "mixed.json").jobs
    assert jobs["id"].tolist() == ["a", "b", "c"]
    assert jobs["walltime"].tolist() == [-1, -1, -1]
    assert jobs["runtime"].tolist() == [3, 12.5, 12.5]


def test_delay_profile_names():
    assert delay_profile_names([3477, 12.5, 1.0]).tolist() == ["delay_3477", "delay_12.5", "delay_1"]


@pytest.mark.slow
def test_reference_kth_workload_reads_exactly():
    path = shared("reference-schedules/KTH-SP2/workload.json.gz")
    with gzip.open(path, "rt") as text:
        raw = json.load(text)
    loaded = read_batsim_json(path)
    assert loaded.nb_res == raw["nb_res"] == 100
    expected = pd.DataFrame(raw["jobs"])
    jobs = loaded.jobs
    assert jobs["id"].tolist() == [str(i) for i in expected["id"]]
    for column in ("subtime", "res", "walltime", "profile", "user"):
        assert jobs[column].tolist() == expected[column].tolist(), column
    delays = {name: p["delay"] for name, p in raw["profiles"].items()}
    assert jobs["runtime"].tolist() == [delays[p] for p in expected["profile"]]


@pytest.mark.slow
def test_kth_conversion_gives_the_reference_jobs():
    reference = read_batsim_json(shared("reference-schedules/KTH-SP2/workload.json.gz")).jobs
    converted = convert_swf(shared("workloads/KTH-SP2-1996-2.1-cln.swf.gz"))[0].jobs
    columns = ["id", "subtime", "res", "walltime", "runtime", "profile", "user"]
    pd.testing.assert_frame_equal(converted[columns], reference[columns], check_dtype=False)


def test_a_non_delay_profile_is_an_error():
    with pytest.raises(WorkloadError, match=r"parallel_profile\.json: job #1 \(id 2\) uses profile 'compute' "
                                            r"of type 'parallel_homogeneous'"):
        read_batsim_json(DATA / "parallel_profile.json")


def write(tmp_path, data) -> Path:
    path = tmp_path / "w.json"
    path.write_text(json.dumps(data))
    return path


BASE = {"nb_res": 4, "jobs": [{"id": 1, "subtime": 0, "res": 1, "profile": "d"}],
        "profiles": {"d": {"type": "delay", "delay": 5}}}


@pytest.mark.parametrize("change, message", [
    ({"nb_res": 0}, "'nb_res' must be a positive integer"),
    ({"jobs": []}, "no jobs"),
    ({"jobs": [{"id": 1, "subtime": 0, "res": 9, "profile": "d"}]},
     r"job #0 \(id 1\) has an invalid 'res': 9 \(expected a whole number in 1..4\)"),
    ({"jobs": [{"id": 1, "subtime": 0, "res": -2, "profile": "d"}]}, r"invalid 'res': -2"),
    ({"jobs": [{"id": 1, "subtime": 0, "res": True, "profile": "d"}]}, r"invalid 'res': True"),
    ({"jobs": [{"id": 1, "res": 1, "profile": "d"}]}, "jobs have no 'subtime' field"),
    ({"jobs": [{"id": 1, "subtime": "x", "res": 1, "profile": "d"}]}, "invalid 'subtime'"),
    ({"jobs": [{"id": 1, "subtime": 0, "res": 1, "profile": "e"}]}, "unknown profile 'e'"),
    ({"jobs": BASE["jobs"] * 2}, r"duplicate job ids \['1'\]"),
    ({"profiles": {"d": {"type": "delay"}}}, "numeric 'delay'"),
    # issue 23: a string or NaN time is no number, a time past the range no time, a negative delay no runtime
    ({"jobs": [{"id": 1, "subtime": "10", "res": 1, "profile": "d"}]}, r"invalid 'subtime': '10' \(expected seconds"),
    ({"jobs": [{"id": 1, "subtime": math.nan, "res": 1, "profile": "d"}]}, r"invalid 'subtime': nan \(expected"),
    ({"jobs": [{"id": 1, "subtime": 0, "res": 1, "profile": "d", "walltime": 1e300}]}, r"invalid 'walltime': 1e\+300"),
    ({"jobs": [{"id": 1, "subtime": 0, "res": 1, "profile": "d", "walltime": 0}]}, r"invalid 'walltime': 0 "),
    ({"jobs": [{"id": 1, "subtime": 10 ** 30, "res": 1, "profile": "d"}]}, r"invalid 'subtime': 1000000000000000"),
    ({"profiles": {"d": {"type": "delay", "delay": -5}}}, r"profile 'd' has an invalid 'delay': -5"),
    ({"profiles": {"d": {"type": "delay", "delay": 10 ** 400}}}, r"profile 'd' has an invalid 'delay': 1000"),
    ({"jobs": [{"id": "a,b", "subtime": 0, "res": 1, "profile": "d"}]}, r"invalid 'id': 'a,b' \(expected a string or"),
    ({"jobs": [{"id": 1.5, "subtime": 0, "res": 1, "profile": "d"}]}, r"invalid 'id': 1.5"),
    ({"jobs": [{"id": 1, "subtime": 0, "res": 1, "profile": 7}]}, r"invalid 'profile': 7 \(expected a string,"),
    ({"nb_res": 2 ** 40}, r"'nb_res' must be a positive integer \(at most 16,777,216\)"),
    ({"UnixStartTime": "x"}, r"invalid 'UnixStartTime': 'x'"),
])
def test_invalid_workloads_name_the_problem(tmp_path, change, message):
    with pytest.raises(WorkloadError, match=message):
        read_batsim_json(write(tmp_path, {**BASE, **change}))


def test_invalid_json_names_line_and_column(tmp_path):
    path = tmp_path / "broken.json"
    path.write_text('{"nb_res": 4,\n "jobs": [}\n')
    with pytest.raises(WorkloadError, match=r"broken\.json:2:\d+: invalid JSON"):
        read_batsim_json(path)


def test_nb_res_override(tmp_path):
    path = write(tmp_path, BASE)
    assert read_batsim_json(path, nb_res=2).nb_res == 2
    assert load_workload(path, nb_res=3).nb_res == 3


def test_unknown_format_and_missing_file(tmp_path):
    with pytest.raises(WorkloadError, match="unknown workload format"):
        load_workload(tmp_path / "trace.csv")
    with pytest.raises(WorkloadError, match="no such file"):
        load_workload(tmp_path / "absent.json")


def test_a_profile_used_with_two_runtimes_cannot_be_written():
    with pytest.raises(WorkloadError, match="profile 'p' is used with several runtimes"):
        workload_json(workload(profile=["p", "p"]))


def test_a_gz_name_without_gzip_data_says_so(tmp_path):
    path = tmp_path / "w.json.gz"
    path.write_bytes(bytes(range(7, 200)))
    with pytest.raises(WorkloadError, match=r"w\.json\.gz: not gzip data, although the name ends in \.gz"):
        read_batsim_json(path)
