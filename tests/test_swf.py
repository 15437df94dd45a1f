"""SWF reader: fields, header, gzip, speed, and errors that name the file, line and field."""

from __future__ import annotations

import gzip
import shutil
import time
from pathlib import Path

import pandas as pd
import pytest

from batsim_classifier_scheduler.errors import WorkloadError
from batsim_classifier_scheduler.workloads.swf import COLUMNS, read_header, read_swf, write_swf

from tests.helpers import DATA, SHARED, shared  # noqa: F401


def gzipped(source: Path, target: Path) -> Path:
    with open(source, "rb") as plain, gzip.open(target, "wb") as packed:
        shutil.copyfileobj(plain, packed)
    return target


def test_reads_the_18_fields_with_names():
    trace = read_swf(DATA / "tiny.swf")
    assert tuple(trace.jobs.columns) == COLUMNS
    assert len(trace.jobs) == 10
    first = trace.jobs.iloc[0]
    assert first[["job", "submit", "runtime", "procs_alloc", "time_req"]].tolist() == [1, 100, 50, 2, 60]
    assert trace.jobs["think_time"].eq(-1).all()
    assert trace.skipped_lines == []


def test_parses_the_header():
    header = read_swf(DATA / "tiny.swf").header
    assert header["MaxProcs"] == 8 and header["MaxNodes"] == 8
    assert header["UnixStartTime"] == 1_000_000_000
    assert header["TimeZoneString"] == "Europe/Paris"
    assert header["Version"] == "2.2"
    assert header["Information"] == "first line\ncontinued line"
    assert header["Queue"] == ["1 short", "2 long"]
    assert len(header["Note"]) == 1 and header["Note"][0].count("\n") == 2


def test_trace_properties():
    trace = read_swf(DATA / "tiny.swf")
    assert trace.max_procs == 8
    assert trace.unix_start_time == 1_000_000_000


def test_gzip_reads_like_plain(tmp_path):
    plain = read_swf(DATA / "tiny.swf")
    packed = read_swf(gzipped(DATA / "tiny.swf", tmp_path / "tiny.swf.gz"))
    pd.testing.assert_frame_equal(plain.jobs, packed.jobs)
    assert plain.header == packed.header


def test_gzip_is_detected_by_content(tmp_path):
    odd_name = gzipped(DATA / "tiny.swf", tmp_path / "tiny.swf")
    assert len(read_swf(odd_name).jobs) == 10


def test_where_filters_while_reading():
    trace = read_swf(DATA / "tiny.swf", where=lambda chunk: chunk["user"] == 1)
    assert trace.jobs["job"].tolist() == [1, 3, 9]


@pytest.mark.parametrize("characters", [1, 40, 200])
def test_text_read_a_chunk_at_a_time_gives_the_same_table(monkeypatch, characters):
    whole = read_swf(DATA / "tiny.swf")
    monkeypatch.setattr("batsim_classifier_scheduler.workloads.swf._CHUNK_CHARACTERS", characters)
    chunked = read_swf(DATA / "tiny.swf")
    assert chunked.table.tolist() == whole.table.tolist() and chunked.header == whole.header
    filtered = read_swf(DATA / "tiny.swf", where=lambda chunk: chunk["user"] == 1)
    assert filtered.jobs["job"].tolist() == [1, 3, 9]


def test_write_then_read_round_trip(tmp_path):
    trace = read_swf(DATA / "tiny.swf")
    back = read_swf(write_swf(tmp_path / "copy.swf.gz", trace.jobs, trace.header))
    pd.testing.assert_frame_equal(back.jobs, trace.jobs)
    assert back.header == trace.header


def test_a_line_with_17_fields_names_file_line_and_field():
    with pytest.raises(WorkloadError, match=r"bad_fields\.swf:4: 17 fields, expected 18 .*'think_time'"):
        read_swf(DATA / "bad_fields.swf")


def test_a_non_numeric_field_is_named():
    with pytest.raises(WorkloadError, match=r"bad_text\.swf:3: field 4 'runtime' is not a number: '12x'"):
        read_swf(DATA / "bad_text.swf")


def test_a_negative_processor_count_is_an_error():
    with pytest.raises(WorkloadError, match=r"bad_negative\.swf:3: field 5 'procs_alloc' is -4"):
        read_swf(DATA / "bad_negative.swf")


@pytest.mark.parametrize("name, kept, skipped", [("bad_fields", [1, 3], [4]), ("bad_negative", [1, 3], [3]),
                                                 ("bad_text", [1], [3])])
def test_skip_bad_lines_drops_and_counts(name, kept, skipped):
    trace = read_swf(DATA / f"{name}.swf", skip_bad_lines=True)
    assert trace.jobs["job"].tolist() == kept
    assert trace.skipped_lines == skipped


def test_missing_file():
    with pytest.raises(WorkloadError, match=r"nowhere\.swf: no such file"):
        read_swf(DATA / "nowhere.swf")


def test_truncated_gzip(tmp_path):
    data = gzip.compress((DATA / "tiny.swf").read_bytes())
    truncated = tmp_path / "truncated.swf.gz"
    truncated.write_bytes(data[: len(data) // 2])
    with pytest.raises(WorkloadError, match=r"truncated\.swf\.gz: truncated or corrupt gzip"):
        read_swf(truncated)


HUGE = ("; MaxProcs: 16\n"
        "1 0 0 99999999999999999999999999 4 -1 -1 4 1e300 -1 1 1 1 1 1 1 -1 -1\n"
        "2 10 0 100 4 -1 -1 4 200 -1 1 1 1 1 1 1 -1 -1\n")


def test_values_beyond_the_simulators_range_are_refused_with_the_line(tmp_path):
    """Issue 23: a runtime of 1e26 s and a walltime of 1e300 s once became a corrupt workload."""
    path = tmp_path / "huge.swf"
    path.write_text(HUGE)
    with pytest.raises(WorkloadError, match=r"huge\.swf:2: field 4 'runtime' is 99999999999999999999999999: beyond "
                                            r"what the simulator holds, at most 8589934592 s"):
        read_swf(path)
    path.write_text(HUGE.replace("99999999999999999999999999", "50"))
    with pytest.raises(WorkloadError, match=r"huge\.swf:2: field 9 'time_req' is 1e300: beyond"):
        read_swf(path)
    path.write_text(HUGE.replace("1e300", "50").replace("1 0 0 99", "1e17 0 0 99"))
    with pytest.raises(WorkloadError, match=r"huge\.swf:2: field 1 'job' is 1e17: beyond what the simulator holds, "
                                            r"at most 9007199254740992 in absolute value"):
        read_swf(path)
    assert read_swf(path, skip_bad_lines=True).skipped_lines == [2]  # dropped and counted on demand


def test_a_gz_name_without_gzip_data_says_so(tmp_path):
    path = tmp_path / "random.swf.gz"
    path.write_bytes(bytes(range(7, 200)) * 3)
    with pytest.raises(WorkloadError, match=r"random\.swf\.gz: not gzip data, although the name ends in \.gz"):
        read_swf(path)


def test_a_file_without_jobs(tmp_path):
    empty = tmp_path / "empty.swf"
    empty.write_text("; MaxProcs: 4\n;\n")
    with pytest.raises(WorkloadError, match="no job lines"):
        read_swf(empty)


def test_read_header_only():
    assert read_header(DATA / "tiny.swf")["MaxProcs"] == 8


def test_kth_header_and_size():
    trace = read_swf(shared("workloads/KTH-SP2-1996-2.1-cln.swf.gz"))
    assert len(trace.jobs) == 28476
    assert trace.max_procs == 100
    assert trace.unix_start_time == 843480031
    assert trace.header["TimeZoneString"] == "Europe/Stockholm"


def test_sdsc_sp2_loads_fast():
    path = shared("workloads/SDSC-SP2-1998-4.2-cln.swf.gz")
    started = time.perf_counter()
    trace = read_swf(path)
    elapsed = time.perf_counter() - started
    assert len(trace.jobs) == 59715
    assert trace.header["Queue"][0].split() == ["0", "interactive"]
    assert elapsed < 2.0, f"reading 59,715 jobs took {elapsed:.2f} s"
