"""Archive catalogue and downloader (urllib is mocked: no network)."""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import urllib.error
import urllib.request

import pytest

from batsim_classifier_scheduler.errors import WorkloadError
from batsim_classifier_scheduler.workloads import archive, load_workload
from batsim_classifier_scheduler.workloads.archive import (TRACES, Trace, default_cache_dir, fetch_trace, find_trace,
                                         known_machine_size, manifest, zegox_partition)
from batsim_classifier_scheduler.workloads.swf import read_swf

from tests.helpers import DATA, REPO  # noqa: E402
PAPER = {"CTC-SP2": 338, "HPC2N": 240, "KTH-SP2": 100, "SDSC-BLUE": 1152, "SDSC-SP2": 128,
         "KIT-FH2": 24048, "MetaCentrum2-zegox": 576}


class FakeArchive:
    """Stands in for ``urllib.request.urlopen``: serves bytes by URL and records requests."""

    def __init__(self, files: dict[str, bytes]):
        self.files = files
        self.requests: list[str] = []

    def __call__(self, url, timeout=None):
        self.requests.append(url)
        name = url.rsplit("/", 1)[-1]
        if name not in self.files:
            raise urllib.error.HTTPError(url, 404, "Not Found", {}, None)
        return io.BytesIO(self.files[name])


@pytest.fixture
def fake_archive(monkeypatch):
    def install(files: dict[str, bytes]) -> FakeArchive:
        fake = FakeArchive(files)
        monkeypatch.setattr(urllib.request, "urlopen", fake)
        return fake
    return install


def test_the_catalogue_knows_the_seven_traces_of_the_paper():
    assert {name: trace.nb_res for name, trace in TRACES.items()} == PAPER
    for trace in TRACES.values():
        assert trace.url.startswith("https://www.cs.huji.ac.il/labs/parallel/workload/l_")
        assert trace.url.endswith("/" + trace.file) and trace.file.endswith(".swf.gz")
    assert TRACES["KTH-SP2"].size == 387704 and TRACES["SDSC-SP2"].size == 1205570


def test_the_committed_manifest_matches_the_catalogue():
    committed = json.loads((REPO / "workloads" / "manifest.json").read_text())
    assert committed == manifest()


def test_find_trace_by_name_or_file():
    assert find_trace("kth-sp2").name == "KTH-SP2"
    assert find_trace("SDSC-SP2-1998-4.2-cln.swf.gz").name == "SDSC-SP2"
    assert find_trace("METACENTRUM-2013-3-zegox.swf.gz").name == "MetaCentrum2-zegox"
    with pytest.raises(WorkloadError, match="unknown trace 'LANL'.*KTH-SP2"):
        find_trace("LANL")


def test_known_machine_sizes():
    assert known_machine_size("CTC-SP2-1996-3.1-cln.swf.gz") == ("CTC-SP2", 338)
    assert known_machine_size("METACENTRUM-2013-3-zegox.swf.gz") == ("MetaCentrum2-zegox", 576)
    assert known_machine_size("METACENTRUM-2013-3.swf.gz") is None  # the whole grid is not zegox
    assert known_machine_size("tiny.swf") is None


def test_cache_dir_from_the_environment(monkeypatch, tmp_path):
    monkeypatch.delenv(archive.CACHE_ENV, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert default_cache_dir() == tmp_path / "xdg" / "batsim-classifier-scheduler"
    monkeypatch.setenv(archive.CACHE_ENV, str(tmp_path / "mine"))
    assert default_cache_dir() == tmp_path / "mine"


def test_download_once_and_verify(monkeypatch, tmp_path, fake_archive):
    content = gzip.compress((DATA / "tiny.swf").read_bytes())
    trace = Trace("Tiny", "tiny.swf.gz", "https://example.org/l_tiny/tiny.swf.gz", 8, size=len(content),
                  sha256=hashlib.sha256(content).hexdigest())
    monkeypatch.setitem(TRACES, "Tiny", trace)
    fake = fake_archive({"tiny.swf.gz": content})
    path = fetch_trace("Tiny", cache_dir=tmp_path)
    assert path == tmp_path / "tiny.swf.gz" and path.read_bytes() == content
    assert fetch_trace("Tiny", cache_dir=tmp_path) == path
    assert len(fake.requests) == 1
    fetch_trace("Tiny", cache_dir=tmp_path, force=True)
    assert len(fake.requests) == 2
    assert len(load_workload(path)) == 7


def test_a_wrong_download_is_refused_and_not_kept(monkeypatch, tmp_path, fake_archive):
    trace = Trace("Tiny", "tiny.swf.gz", "https://example.org/l_tiny/tiny.swf.gz", 8, size=5,
                  sha256="0" * 64)
    monkeypatch.setitem(TRACES, "Tiny", trace)
    fake_archive({"tiny.swf.gz": b"not the trace"})
    with pytest.raises(WorkloadError, match=r"13 bytes, expected 5 for Tiny"):
        fetch_trace("Tiny", cache_dir=tmp_path)
    assert list(tmp_path.iterdir()) == []
    assert fetch_trace("Tiny", cache_dir=tmp_path, verify=False).read_bytes() == b"not the trace"


def test_a_changed_cached_file_is_reported(monkeypatch, tmp_path, fake_archive):
    fake_archive({})
    (tmp_path / TRACES["KTH-SP2"].file).write_bytes(b"x" * 387704)
    with pytest.raises(WorkloadError, match="SHA-256 .* differs"):
        fetch_trace("KTH-SP2", cache_dir=tmp_path)


def test_network_errors_become_workload_errors(tmp_path, fake_archive):
    fake_archive({})
    with pytest.raises(WorkloadError, match=r"HPC2N-2002-2.2-cln.swf.gz: download failed \(Not Found\)"):
        fetch_trace("HPC2N", cache_dir=tmp_path)
    assert list(tmp_path.iterdir()) == []


def metacentrum(header: str) -> bytes:
    """A tiny stand-in for METACENTRUM-2013-3: jobs on partitions 9 (zegox) and 3."""
    lines = [f"{j} {j * 10} 0 100 12 -1 -1 12 3600 -1 1 {j} 1 -1 1 {9 if j % 2 else 3} -1 -1"
             for j in range(1, 11)]
    return gzip.compress((header + "\n".join(lines) + "\n").encode())


def test_zegox_is_extracted_by_partition(tmp_path, fake_archive):
    fake = fake_archive({"METACENTRUM-2013-3.swf.gz": metacentrum("; MaxProcs: 8412\n")})
    path = fetch_trace("MetaCentrum2-zegox", cache_dir=tmp_path)
    assert path.name == "METACENTRUM-2013-3-zegox.swf.gz"
    assert path.read_bytes()[:2] == b"\x1f\x8b"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["METACENTRUM-2013-3-zegox.swf.gz",
                                                          "METACENTRUM-2013-3.swf.gz"]
    trace = read_swf(path)
    assert trace.jobs["job"].tolist() == [1, 3, 5, 7, 9]
    assert trace.max_procs == 576
    assert "partition 9" in trace.header["Note"][-1]
    assert load_workload(path).nb_res == 576
    assert fake.requests == [TRACES["MetaCentrum2-zegox"].url]


def test_zegox_partition_from_the_header_or_given(tmp_path, fake_archive):
    fake_archive({"METACENTRUM-2013-3.swf.gz": metacentrum("; Partition: 3 hdc.cerit-sc.cz (zegox)\n")})
    path = fetch_trace("MetaCentrum2-zegox", cache_dir=tmp_path)
    assert read_swf(path).jobs["job"].tolist() == [2, 4, 6, 8, 10]
    path = fetch_trace("MetaCentrum2-zegox", cache_dir=tmp_path, partition=9)
    assert read_swf(path).jobs["job"].tolist() == [1, 3, 5, 7, 9]
    with pytest.raises(WorkloadError, match="no job in partition 42"):
        fetch_trace("MetaCentrum2-zegox", cache_dir=tmp_path, partition=42)


def test_zegox_partition_default():
    assert zegox_partition({"MaxProcs": 8412, "Note": ["nothing here"]}) == archive.ZEGOX_PARTITION == 9
    assert zegox_partition({"Partition": ["1 ajax", "12 zegox (hdc)"]}) == 12
