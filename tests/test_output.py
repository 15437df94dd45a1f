"""Batsim's output files: byte-identical ``_jobs.csv``, and ``_schedule.csv`` computed as Batsim does."""

import gzip
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from procset import ProcSet

from batsim_classifier_scheduler.errors import WorkloadError
from batsim_classifier_scheduler.jobs_columns import JOBS_COLUMNS
from batsim_classifier_scheduler.sim.batsim_files import (
    SCHEDULE_COLUMNS, VERSION_STRING, read_jobs_csv, schedule_summary, write_jobs_csv, write_schedule_csv,
)

from tests.helpers import REPO, SHARED  # noqa: E402
KTH = SHARED / "reference-schedules" / "KTH-SP2"
TRANSCRIPTS = SHARED / "batsim-transcripts"
FIXTURE = REPO / "tests" / "data" / "metrics" / "lineage_jobs.csv"

REFERENCE_JOBS = [KTH / "batsched_easy_bf_jobs.csv.gz", KTH / "batsched_easy_bf_fast_jobs.csv.gz"] + [
    TRANSCRIPTS / name / "out_jobs.csv"
    for name in ["easy-250", "walltime", "same-submit", "kill-resubmit", "kill-resubmit-sameworkload"]
]


def text_of(path: Path) -> str:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8", newline="") as stream:
        return stream.read()


def schedule_of(jobs_path: Path) -> Path:
    if jobs_path.name == "out_jobs.csv":
        return jobs_path.with_name("out_schedule.csv")
    return jobs_path.with_name(jobs_path.name.replace("_jobs.csv.gz", "_schedule.csv"))


def reference(path: Path) -> Path:
    if not path.exists():
        pytest.skip(f"{path} is absent")
    return path


@pytest.mark.slow
@pytest.mark.parametrize("path", REFERENCE_JOBS + [FIXTURE], ids=lambda p: f"{p.parent.name}/{p.name}")
@pytest.mark.parametrize("reader", ["read_jobs_csv", "pandas"])
def test_jobs_csv_round_trip_is_byte_identical(path, reader, tmp_path):
    path = reference(path)
    table = read_jobs_csv(path) if reader == "read_jobs_csv" else pd.read_csv(path)
    write_jobs_csv(tmp_path / "out_jobs.csv", table)
    assert text_of(tmp_path / "out_jobs.csv") == text_of(path)


def test_read_jobs_csv_types():
    table = read_jobs_csv(FIXTURE)
    assert list(table.columns) == JOBS_COLUMNS
    assert table["job_id"].tolist() == ["0", "3", "1", "2", "0#1", "1#1", "4", "1#2"]
    assert table["requested_number_of_resources"].dtype == np.int64
    assert table["metadata"].iloc[1] == "" and table["allocated_resources"].iloc[1] == ""
    rejected = table.iloc[1]
    assert rejected["final_state"] == "REJECTED" and np.isnan(rejected["starting_time"])
    assert np.isnan(rejected["consumed_energy"])


def test_writer_accepts_the_engine_table(tmp_path):
    table = pd.DataFrame([
        ["w0!7", "w0", "delay_5", 0.0, 4, 10.0, 1, "COMPLETED_SUCCESSFULLY", 1.5, 5.0, 6.5, 1.5, 6.5, 1.3,
         ProcSet((0, 3), 7), -1.0, "parent=w0!3;class=large"],
        ["w0!8", "w0", "delay_5", 2.0, 1, -1.0, 0, "REJECTED", 0.0, 0.0, 0.0, 0.0, 0.0, np.nan, "", -1.0, None],
        ["12", "dyn", "p", 3.0, 2, 10.0, 0, "COMPLETED_KILLED", 3.0, 0.0, 3.0, 0.0, 0.0, np.nan, [5, 4], -1.0, ""],
    ], columns=JOBS_COLUMNS)
    path = tmp_path / "out_jobs.csv.gz"
    write_jobs_csv(path, table)
    assert text_of(path).splitlines() == [
        ",".join(JOBS_COLUMNS),
        '7,w0,delay_5,0.000000,4,10.000000,1,COMPLETED_SUCCESSFULLY,1.500000,5.000000,6.500000,1.500000,'
        '6.500000,1.300000,0-3 7,-1.000000,"parent=w0!3;class=large"',
        '8,w0,delay_5,2.000000,1,-1.000000,0,REJECTED,,,,,,,,,""',
        '12,dyn,p,3.000000,2,10.000000,0,COMPLETED_KILLED,3.000000,0.000000,3.000000,0.000000,0.000000,'
        '-nan,4-5,-1.000000,""',
    ]


def test_writer_requires_every_column(tmp_path):
    with pytest.raises(ValueError, match="stretch"):
        write_jobs_csv(tmp_path / "x.csv", read_jobs_csv(FIXTURE).drop(columns="stretch"))


def test_read_errors_name_the_file_line_and_column(tmp_path):
    with pytest.raises(WorkloadError, match="no such file"):
        read_jobs_csv(tmp_path / "missing.csv")
    lines = FIXTURE.read_text().splitlines()
    bad_header = tmp_path / "header.csv"
    bad_header.write_text("\n".join([lines[0].replace(",stretch", "")] + [l.replace(",1.000000,0-1", ",0-1")
                                                                        for l in lines[1:2]]) + "\n")
    with pytest.raises(WorkloadError, match=r"header\.csv.*missing column\(s\) stretch"):
        read_jobs_csv(bad_header)
    bad_number = tmp_path / "number.csv"
    bad_number.write_text("\n".join(lines[:3] + [lines[3].replace("2.000000,1,100", "soon,1,100")]) + "\n")
    with pytest.raises(WorkloadError, match=r"number\.csv, line 4: column submission_time: .*'soon'"):
        read_jobs_csv(bad_number)
    bad_int = tmp_path / "int.csv"
    bad_int.write_text("\n".join(lines[:2] + [lines[2].replace("5.000000,1,50", "5.000000,1.5,50")]) + "\n")
    with pytest.raises(WorkloadError, match=r"line 3: column requested_number_of_resources: expected an integer, "
                                            r"got 1\.5$"):
        read_jobs_csv(bad_int)
    truncated = tmp_path / "truncated.csv"  # issue 23: the error showed np.float64(nan)
    truncated.write_text("\n".join(lines[:3] + [lines[3][:lines[3].index(",", lines[3].index(",") + 1)]]) + "\n")
    with pytest.raises(WorkloadError, match=r"truncated\.csv, line 4: column requested_number_of_resources: "
                                            r"expected an integer, got nothing \(a truncated line\?\)$"):
        read_jobs_csv(truncated)


def test_schedule_summary_of_the_fixture():
    row = schedule_summary(read_jobs_csv(FIXTURE), 4)
    stretches = [1, 1, 1, 1, 3.75, 2, 35 / 30]
    assert row["batsim_version"] == VERSION_STRING
    assert row["nb_jobs"] == 8 and row["nb_jobs_rejected"] == 1 and row["nb_jobs_finished"] == 7
    assert row["nb_jobs_success"] == 3 and row["nb_jobs_killed"] == 4  # killed and walltime alike
    assert row["success_rate"] == 3 / 8
    assert row["makespan"] == 60.0
    assert row["mean_waiting_time"] == pytest.approx(21 / 8)  # rejected jobs count in the division
    assert row["mean_turnaround_time"] == pytest.approx(138 / 8)
    assert row["mean_slowdown"] == pytest.approx(sum(stretches) / 8, abs=1e-6)
    assert (row["max_waiting_time"], row["max_turnaround_time"], row["max_slowdown"]) == (11.0, 40.0, 3.75)
    assert row["time_computing"] == 167.0
    assert row["time_idle"] == 50 + 50 + 30 + 60 - 167.0  # up to each machine's last job end


def test_write_schedule_csv_format(tmp_path):
    row = schedule_summary(read_jobs_csv(FIXTURE), 4, scheduling_time=0.25, simulation_time=1.5)
    write_schedule_csv(tmp_path / "out_schedule.csv", row)
    header, values = (tmp_path / "out_schedule.csv").read_text().splitlines()
    assert header.split(",") == SCHEDULE_COLUMNS == sorted(SCHEDULE_COLUMNS)
    fields = dict(zip(SCHEDULE_COLUMNS, values.split(",")))
    assert fields["batsim_version"] == VERSION_STRING
    assert fields["nb_jobs"] == "8" and fields["nb_computing_machines"] == "4"
    assert fields["makespan"] == "60.000000" and fields["success_rate"] == "0.375000"
    assert fields["scheduling_time"] == "0.250000" and fields["time_idle"] == "23.000000"
    with pytest.raises(ValueError, match="makespan"):
        write_schedule_csv(tmp_path / "x.csv", {k: v for k, v in row.items() if k != "makespan"})


@pytest.mark.slow
@pytest.mark.parametrize("path", REFERENCE_JOBS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_schedule_summary_reproduces_batsim(path, tmp_path):
    path = reference(path)
    expected = pd.read_csv(schedule_of(path)).iloc[0]
    row = schedule_summary(read_jobs_csv(path), int(expected["nb_computing_machines"]),
                           scheduling_time=expected["scheduling_time"], simulation_time=expected["simulation_time"],
                           batsim_version=expected["batsim_version"])
    write_schedule_csv(tmp_path / "out_schedule.csv", row)
    if path.parent == KTH:  # whole seconds: every value is exact
        assert (tmp_path / "out_schedule.csv").read_text() == schedule_of(path).read_text()
    for column in SCHEDULE_COLUMNS[1:]:
        # _jobs.csv rounds times to 1e-6 s; time_idle sums up to 128 of them.
        assert row[column] == pytest.approx(expected[column], rel=1e-9, abs=2e-4), column


def test_writer_formats_row_chunks_as_one_table(tmp_path, monkeypatch):
    """The rows are written a chunk at a time: chunks of 2 rows (one all integral times, one with a fraction, a
    rejected row in the last) give the text of one chunk."""
    import batsim_classifier_scheduler.sim.batsim_files as output

    table = read_jobs_csv(FIXTURE)
    write_jobs_csv(tmp_path / "whole_jobs.csv", table)
    monkeypatch.setattr(output, "ROWS_PER_WRITE", 2)
    write_jobs_csv(tmp_path / "chunked_jobs.csv", table)
    assert text_of(tmp_path / "chunked_jobs.csv") == text_of(tmp_path / "whole_jobs.csv") == text_of(FIXTURE)


def test_jobs_columns_let_go_of_the_records():
    from batsim_classifier_scheduler.core.job import Job
    from batsim_classifier_scheduler.sim.engine_types import SimJob
    from batsim_classifier_scheduler.sim.jobs_builder import jobs_columns

    done = SimJob(Job("w0!7", 1.0, 2, 10.0, "delay_5", 5.0), 2.0, 7.0, "COMPLETED_SUCCESSFULLY", 0b110)
    rejected = SimJob(Job("w0!8", 3.0, 200, 10.0, "delay_5", 5.0), state="REJECTED")
    sims = [done, rejected]
    columns = jobs_columns(sims)
    assert sims == []  # the records are freed before the table's strings are made
    assert columns["job_id"] == ["7", "8"] and columns["workload_name"] == ["w0", "w0"]
    assert columns["allocated_resources"] == ["1-2", ""] and columns["success"] == [1, 0]
    assert columns["execution_time"][0] == 5.0 and np.isnan(columns["starting_time"][1])
    assert list(columns) == JOBS_COLUMNS
