"""The convert, platform, fetch-trace and generate subcommands."""

from __future__ import annotations

import argparse
import gzip
import io
import urllib.request

import pytest

from batsim_classifier_scheduler.cli import workloads as cli
from batsim_classifier_scheduler.errors import OutputError, SchedulerError, WorkloadError
from batsim_classifier_scheduler.platforms import read_platform
from batsim_classifier_scheduler.workloads import archive, load_workload

from tests.helpers import DATA  # noqa: E402


def run(*argv: str) -> int:
    parser = argparse.ArgumentParser(prog="python -m batsim_classifier_scheduler")
    cli.register(parser.add_subparsers())
    args = parser.parse_args([str(a) for a in argv])
    return args.func(args)


def test_convert_writes_the_workload_and_platform_and_prints_the_report(tmp_path, capsys):
    out, xml = tmp_path / "tiny.json", tmp_path / "tiny.xml"
    assert run("convert", DATA / "tiny.swf", "-o", out, "--platform-out", xml) == 0
    printed = capsys.readouterr().out
    assert "10 jobs read, 7 kept, 3 dropped" in printed and "runtime<=0" in printed
    assert f"wrote {out}" in printed and f"wrote {xml}" in printed
    assert len(load_workload(out)) == 7
    assert read_platform(xml).nb_compute_hosts == 8
    assert "Converted from tiny.swf" in out.read_text()


def test_convert_options(tmp_path, capsys):
    out = tmp_path / "tiny.json.gz"
    run("convert", DATA / "tiny.swf", "-o", out, "--nb-res", 16, "--missing-walltime", "none",
        "--over-request", "drop")
    jobs = load_workload(out).jobs.set_index("id")
    assert "6" in jobs.index and "7" not in jobs.index
    assert jobs.loc["8", "walltime"] == -1
    with gzip.open(out) as packed:
        assert packed.read(1) == b"{"


def test_convert_bad_inputs_raise_one_line_errors(tmp_path):
    for argv, error, message in [
        (("convert", DATA / "bad_fields.swf"), WorkloadError, r"bad_fields\.swf:4: 17 fields"),
        (("convert", DATA / "absent.swf.gz"), WorkloadError, "no such file"),
        (("convert", DATA / "mixed.json"), WorkloadError, "expected an SWF trace"),
    ]:
        with pytest.raises(error, match=message) as caught:
            run(*argv, "-o", tmp_path / "x.json")
        assert isinstance(caught.value, SchedulerError) and "\n" not in str(caught.value)


def test_convert_can_skip_bad_lines(tmp_path, capsys):
    run("convert", DATA / "bad_fields.swf", "-o", tmp_path / "x.json", "--skip-bad-lines")
    assert "malformed lines skipped: 1" in capsys.readouterr().out


def test_platform(tmp_path, capsys):
    path = tmp_path / "p.xml"
    assert run("platform", "--nb-res", 32, "-o", path, "--name", "test") == 0
    assert read_platform(path).nb_compute_hosts == 32
    assert run("platform", "--nb-res", 4, "-o", tmp_path / "new" / "dir.xml") == 0  # folders are made
    with pytest.raises(OutputError, match=r"^--output .*p\.xml/dir\.xml: .*p\.xml is not a folder$"):
        run("platform", "--nb-res", 4, "-o", path / "dir.xml")
    with pytest.raises(SystemExit):
        run("platform", "--nb-res", 0, "-o", path)


def test_generate(tmp_path, capsys):
    out, xml = tmp_path / "s.json", tmp_path / "s.xml"
    assert run("generate", "--jobs", 200, "--weeks", 1, "--nb-res", 32, "--seed", 5, "-o", out,
               "--platform-out", xml) == 0
    workload = load_workload(out)
    assert (len(workload), workload.nb_res) == (200, 32)
    assert read_platform(xml).nb_compute_hosts == 32


def test_fetch_trace_list(capsys):
    assert run("fetch-trace", "--list") == 0
    printed = capsys.readouterr().out
    for name in archive.TRACES:
        assert name in printed


def test_fetch_trace_prints_the_path(monkeypatch, tmp_path, capsys):
    content = (DATA / "tiny.swf").read_bytes()
    monkeypatch.setitem(archive.TRACES, "Tiny", archive.Trace("Tiny", "tiny.swf", "https://example.org/tiny.swf", 8))
    monkeypatch.setattr(urllib.request, "urlopen", lambda url, timeout=None: io.BytesIO(content))
    assert run("fetch-trace", "Tiny", "--cache-dir", tmp_path) == 0
    assert capsys.readouterr().out.strip() == str(tmp_path / "tiny.swf")
    with pytest.raises(WorkloadError, match="give a trace name"):
        run("fetch-trace")


def test_the_main_entry_point_prints_errors_in_one_line(capsys):
    from batsim_classifier_scheduler.cli import build_parser, main

    try:
        build_parser()
    except ImportError as exc:
        pytest.skip(f"the full CLI does not import yet: {exc}")
    assert main(["convert", str(DATA / "bad_text.swf"), "-o", "unused.json"]) == 1
    error = capsys.readouterr().err
    assert error.startswith("error: ") and error.count("\n") == 1 and "field 4 'runtime'" in error
