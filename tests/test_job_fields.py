"""A workload's extra fields per job (Workload.job_fields): shared-name JobFields, or dicts when values miss."""

from __future__ import annotations

import math
import pickle

from batsim_classifier_scheduler.core.job import JobFields
from batsim_classifier_scheduler.workloads.model import RowFields, Workload


def workload(**extras: list) -> Workload:
    columns = {"id": ["1", "2"], "subtime": [0.0, 1.0], "res": [1, 2], "walltime": [10.0, -1.0],
               "runtime": [5.0, 5.0], "profile": ["p", "p"], **extras}
    return Workload(columns, nb_res=4)


def test_complete_columns_give_job_fields_that_read_as_dicts():
    fields = workload(user=[7, 8], queue=["a", "b"], unix_submit_time=[1.0e9, 1.5e9]).job_fields()
    assert all(isinstance(each, JobFields) for each in fields)
    assert fields[0] == {"user": 7, "queue": "a", "unix_submit_time": 1.0e9} and fields[1] != fields[0]
    second = fields[1]
    assert second["queue"] == "b" and second.get("user") == 8 and second.get("group") is None
    assert second.get("group", 3) == 3 and "user" in second and "group" not in second
    assert list(second) == ["user", "queue", "unix_submit_time"] and len(second) == 3
    assert dict(second.items()) == {"user": 8, "queue": "b", "unix_submit_time": 1.5e9}
    assert {**second} == dict(second) and repr(second) == repr(dict(second))
    assert pickle.loads(pickle.dumps(second)) == second


def test_missing_values_are_left_out_of_each_jobs_dict():
    fields = workload(user=[7, None], think=[1.5, math.nan]).job_fields()
    assert fields == [{"user": 7, "think": 1.5}, {}]
    assert all(type(each) is dict for each in fields)


def test_no_extra_columns_give_empty_fields():
    fields = workload().job_fields()
    assert fields == [{}, {}] and not any("user" in each for each in fields)


def test_numpy_columns_give_fields_that_read_their_row():
    import numpy as np

    fields = workload(user=np.array([7, 8]), queue=np.array(["a", "b"]), unix_submit_time=np.array([1.0e9, 1.5e9])
                      ).job_fields()
    assert all(isinstance(each, RowFields) for each in fields)
    assert list(fields[1]) == ["user", "queue", "unix_submit_time"] and len(fields[1]) == 3 and "queue" in fields[1]
    assert fields[1] == {"user": 8, "queue": "b", "unix_submit_time": 1.5e9}
    assert type(fields[1]["user"]) is int and type(fields[0].get("queue")) is str and fields[0].get("group") is None
    back = pickle.loads(pickle.dumps(fields[0]))
    assert type(back) is JobFields and back == fields[0]
    with_nan = workload(think=np.array([1.5, math.nan])).job_fields()
    assert with_nan == [{"think": 1.5}, {}]
