"""Issue 39, names and doors: a trace's archive name or cached file name is read by every command that reads
a workload; no command writes over its own input; a socket endpoint without its transport is a command-line
mistake (exit 2) with a hint."""

from __future__ import annotations

import gzip
import json
import os

import pytest

from batsim_classifier_scheduler.cli import main
from batsim_classifier_scheduler.config.variants import VARIANTS
from batsim_classifier_scheduler.workloads import workload_path

from tests.helpers import DATA, REPO, shared

KTH_FILE = "KTH-SP2-1996-2.1-cln.swf.gz"


def exit_code(argv: list[str]) -> int:
    try:
        return main(argv)
    except SystemExit as stop:
        return stop.code


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """A trace cache holding a small trace under KTH-SP2's archive file name; the working folder is empty."""
    folder = tmp_path / "cache"
    folder.mkdir()
    (folder / KTH_FILE).write_bytes(gzip.compress((DATA / "tiny.swf").read_bytes()))
    monkeypatch.setenv("BATSIM_CLASSIFIER_SCHEDULER_CACHE", str(folder))
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    return folder


@pytest.mark.parametrize("name", ["KTH-SP2", "kth-sp2", KTH_FILE])
def test_a_trace_name_or_its_file_name_is_found_in_the_cache(cache, name):
    assert workload_path(name) == cache / KTH_FILE


def test_an_existing_path_always_wins(cache):
    (cache.parent / "work" / KTH_FILE).write_bytes(b"mine")
    assert workload_path(KTH_FILE) == type(cache)(KTH_FILE)


def test_simulate_and_convert_read_a_cached_trace_by_name(cache, capsys):
    assert exit_code(["simulate", "KTH-SP2", "--no-progress"]) == 0
    captured = capsys.readouterr()
    assert "machine: 100 processors (KTH-SP2 machine of the paper)" in captured.out
    assert f"KTH-SP2: reading {cache / KTH_FILE}" in captured.err
    assert exit_code(["convert", KTH_FILE, "-o", "kth.json", "--platform-out", "kth.xml"]) == 0
    assert json.loads(open("kth.json").read())["nb_res"] == 100 and os.path.exists("kth.xml")


@pytest.mark.parametrize("command", [["simulate", "SDSC-SP2"], ["convert", "SDSC-SP2", "-o", "w.json"],
                                     ["batsim-peer", "-p", "p.xml", "-w", "SDSC-SP2"]])
def test_a_trace_not_downloaded_says_how_to_fetch_it(cache, command, capsys):
    assert exit_code(command) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and "trace SDSC-SP2 is not downloaded yet" in error
    assert "fetch it with: python -m batsim_classifier_scheduler fetch-trace SDSC-SP2" in error
    assert os.listdir() == []


def test_a_name_that_is_neither_a_file_nor_a_trace_lists_the_traces(cache, capsys):
    assert exit_code(["simulate", "KTH-SP3"]) == 1
    assert capsys.readouterr().err == ("error: KTH-SP3: no such file, nor a trace name; known traces: CTC-SP2, "
                                       "HPC2N, KTH-SP2, SDSC-BLUE, SDSC-SP2, KIT-FH2, MetaCentrum2-zegox "
                                       "(python -m batsim_classifier_scheduler fetch-trace --list)\n")


def test_the_real_kth_sp2_is_converted_from_the_cache(tmp_path, monkeypatch, capsys):
    folder = tmp_path / "cache"
    folder.mkdir()
    (folder / KTH_FILE).symlink_to(shared(f"workloads/{KTH_FILE}"))
    monkeypatch.setenv("BATSIM_CLASSIFIER_SCHEDULER_CACHE", str(folder))
    monkeypatch.chdir(tmp_path)
    assert exit_code(["convert", KTH_FILE, "-o", "kth.json", "--platform-out", "kth.xml"]) == 0
    assert "28,476 jobs read, 28,467 kept" in capsys.readouterr().out


# --- no command writes over its own input ---------------------------------------------------


@pytest.fixture
def trace(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "k.swf").write_bytes((DATA / "tiny.swf").read_bytes())
    (tmp_path / "sub").mkdir()
    return tmp_path / "k.swf"


@pytest.mark.parametrize("command, says", [
    (["convert", "k.swf", "-o", "k.swf"], "--output k.swf: it is the trace k.swf too"),
    (["convert", "k.swf", "-o", "sub/../k.swf"], "--output sub/../k.swf: it is the trace k.swf too"),
    (["convert", "link.swf", "-o", "w.json", "--platform-out", "k.swf"], "--platform-out k.swf: it is the trace"),
    (["convert", "k.swf", "-o", "w.json", "--platform-out", "w.json"], "--platform-out w.json: it is --output"),
    (["generate", "-o", "w.json", "--platform-out", "./w.json"], "--platform-out w.json: it is --output"),
    (["simulate", "k_jobs.csv", "-e", "k"], "--output-prefix k_jobs.csv: it is the workload"),
    (["simulate", "k.swf", "--classifier", "rf", "-e", "k", "--save-model", "k_summary.json"],
     "--save-model k_summary.json: it is --output-prefix"),
    (["batsim-peer", "-p", "p.xml", "-w", "k_jobs.csv", "-e", "k"], "--export k_jobs.csv: it is --workload"),
])
def test_no_command_writes_over_its_own_input(trace, command, says, capsys):
    (trace.parent / "link.swf").symlink_to(trace)
    (trace.parent / "k_jobs.csv").write_bytes(trace.read_bytes())
    before = {path.name: path.read_bytes() for path in trace.parent.iterdir() if path.is_file()}
    assert exit_code(command) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and says in error and "writing it would overwrite it" in error
    assert {path.name: path.read_bytes() for path in trace.parent.iterdir() if path.is_file()} == before


def test_the_sweep_does_not_write_its_record_over_its_config(tmp_path, capsys):
    config = tmp_path / "sweep_config.json"
    config.write_text(json.dumps({"traces": [str(REPO / "workloads" / "sample.json")]}))
    assert exit_code(["sweep", str(config), "-o", str(tmp_path)]) == 2
    assert "it is the sweep config" in capsys.readouterr().err


# --- endpoints ---------------------------------------------------------------------------------


@pytest.mark.parametrize("command", [["serve"], ["batsim-peer", "-p", "p.xml", "-w", "w.json"]])
@pytest.mark.parametrize("endpoint", ["localhost:28000", "tcp://localhost", "tcp://:28000", "tcp://h:port",
                                      "tcp://h:70000", "bogus://x", "ipc://"])
def test_an_endpoint_without_its_transport_is_a_command_line_mistake(command, endpoint, capsys):
    assert exit_code([*command, "-s", endpoint]) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and "argument -s/--socket-endpoint: expected a ZeroMQ endpoint tcp://HOST:PORT" in error


@pytest.mark.parametrize("endpoint", ["tcp://*:28000", "tcp://localhost:28000", "tcp://[::1]:5", "ipc:///tmp/s",
                                      "inproc://x"])
def test_well_formed_endpoints_are_taken(endpoint):
    from batsim_classifier_scheduler.cli.batsim import endpoint_flag

    assert endpoint_flag(endpoint) == endpoint


# --- sweep files ---------------------------------------------------------------------------------


def test_the_sweep_file_s_keys_are_documented():
    import msgspec

    from batsim_classifier_scheduler.experiments.grid import _SweepFile, _TraceEntry

    text = (REPO / "docs" / "sweeps.md").read_text()
    for struct in (_SweepFile, _TraceEntry):
        for field in msgspec.structs.fields(struct):
            assert f"| `{field.name}` |" in text, field.name


def test_an_unknown_trace_name_stops_the_sweep_before_its_first_run(tmp_path, capsys):
    config = tmp_path / "sweep.json"
    config.write_text(json.dumps({"traces": [str(REPO / "workloads" / "sample.json"), "KTH-SP3"]}))
    assert exit_code(["sweep", str(config), "-o", str(tmp_path / "results"), "--workers", "0"]) == 1
    assert capsys.readouterr().err == (
        f"error: {config}: traces[1]: 'KTH-SP3' is neither a trace name nor a workload file (.swf[.gz], "
        ".json[.gz], sacct output); known traces: CTC-SP2, HPC2N, KTH-SP2, SDSC-BLUE, SDSC-SP2, KIT-FH2, MetaCentrum2-zegox\n")
    assert not (tmp_path / "results").exists()


def test_a_sweep_finds_a_trace_file_name_in_the_cache(cache):
    from batsim_classifier_scheduler.experiments.grid import parse_config
    from batsim_classifier_scheduler.experiments.traces import resolve_trace_file

    config = parse_config({"traces": [KTH_FILE, {"name": "mine", "path": f"elsewhere/{KTH_FILE}"}]})
    assert config.traces[0].archive == "KTH-SP2"
    assert [resolve_trace_file(trace, download=False) for trace in config.traces] == [cache / KTH_FILE] * 2


# --- report ------------------------------------------------------------------------------------------


def test_report_reads_what_batsim_peer_writes(tmp_path, monkeypatch, capsys):
    """batsim-peer -e NAME writes NAME_jobs.csv and NAME_schedule.csv (as Batsim): a simulate run's files
    without its summary are the same."""
    monkeypatch.chdir(tmp_path)
    assert exit_code(["simulate", str(REPO / "workloads" / "sample.json"), "-e", "out/peer", "--no-progress"]) == 0
    (tmp_path / "out" / "peer_summary.json").unlink()
    assert sorted(os.listdir("out")) == ["peer_jobs.csv", "peer_schedule.csv"]
    capsys.readouterr()
    assert exit_code(["report", "out", "-o", "report", "--no-plots"]) == 0
    captured = capsys.readouterr()
    assert "note: out/peer_jobs.csv: labelled trace peer, policy fcfs, variant base" in captured.err
    assert "| peer | 3,000 | 128 | 1 | batsim |" in (tmp_path / "report" / "REPORT.md").read_text()


# --- Ctrl-C --------------------------------------------------------------------------------------------


def _interrupt_on(monkeypatch, target: str, call: int) -> None:
    """Make ``batsim_classifier_scheduler.cli.simulate.<target>`` raise KeyboardInterrupt on its ``call``-th call (from 1)."""
    import batsim_classifier_scheduler.cli.simulate as simulate

    real, calls = getattr(simulate, target), []

    def stopping(*args, **kwargs):
        calls.append(1)
        if len(calls) == call:
            if target == "write_results":  # half way: the jobs file is written
                open(args[0] + "_jobs.csv", "w").write("half")
            raise KeyboardInterrupt
        return real(*args, **kwargs)

    monkeypatch.setattr(simulate, target, stopping)


@pytest.mark.parametrize("target, says", [
    ("simulate_outcome", "those of runtimes-clairvoyant were not written"),
    ("write_results", "the half-written files of out_runtimes-clairvoyant were removed"),
])
def test_ctrl_c_during_several_variants_says_which_files_are_whole(tmp_path, monkeypatch, capsys, target, says):
    monkeypatch.chdir(tmp_path)
    _interrupt_on(monkeypatch, target, 2)
    workload = str(REPO / "workloads" / "sample.json")
    assert exit_code(["simulate", workload, "--variant", "base,runtimes-clairvoyant,class-clairvoyant", "-e", "out", "--no-progress"]) == 130
    assert capsys.readouterr().err == (
        "interrupted: during variant runtimes-clairvoyant (2 of 3): the files of base are complete (out_VARIANT_jobs.csv, ...); "
        f"{says}\n")
    assert sorted(os.listdir()) == ["out_base_jobs.csv", "out_base_schedule.csv", "out_base_summary.json"]


def test_ctrl_c_without_an_output_prefix(monkeypatch, capsys):
    _interrupt_on(monkeypatch, "simulate_outcome", 1)
    assert exit_code(["simulate", str(REPO / "workloads" / "sample.json"), "--variant", "all"]) == 130
    assert capsys.readouterr().err.endswith(f"interrupted: during variant base (1 of {len(VARIANTS)}); no file written "
                                            "(no --output-prefix)\n")


def test_runs_of_a_trace_s_first_jobs_are_marked_beside_the_paper_s_figures(tmp_path, capsys):
    """A sweep's max_jobs: the report says the runs are truncated wherever the paper's (whole-trace) figures
    stand beside them."""
    config = tmp_path / "sweep.json"
    config.write_text(json.dumps({"traces": [{"name": "KTH-SP2", "path": str(REPO / "workloads" / "sample.json"),
                                              "max_jobs": 100}],
                                  "variants": ["base", "classification-idempotent"]}))
    assert exit_code(["sweep", str(config), "-o", str(tmp_path / "results"), "--workers", "0", "--no-progress"]) == 0
    assert exit_code(["report", str(tmp_path / "results"), "-o", str(tmp_path / "report"), "--no-plots"]) == 0
    text = (tmp_path / "report" / "REPORT.md").read_text()
    assert "| KTH-SP2 | 100 (the trace's first 100) | 128 | 2 | sweep |" in text
    assert ("Truncated runs: KTH-SP2, the first 100 jobs only (the sweep's `max_jobs`). The paper's figures are for "
            "whole traces") in text
    assert "| 50% (whole trace) |" in text


def test_the_option_reference_says_easy_bf_fast_backfills_jobs_that_end_before_the_priority_job_s_start():
    text = " ".join((REPO / "docs" / "options.md").read_text().split())
    assert "easy_bf_fast, EASY whose priority job keeps its first expected start (a job backfills only if it ends " \
           "by then)" in text and "no backfilling beside it" not in text


def test_a_write_that_fails_before_replacing_a_file_keeps_an_earlier_run_s_files(tmp_path, monkeypatch, capsys):
    import batsim_classifier_scheduler.cli.simulate as simulate
    from batsim_classifier_scheduler.errors import OutputError

    monkeypatch.chdir(tmp_path)
    earlier = {name: f"earlier {name}" for name in ("out_jobs.csv", "out_schedule.csv", "out_summary.json")}
    for name, text in earlier.items():
        (tmp_path / name).write_text(text)

    def failing(*args, **kwargs):
        raise OutputError("out_jobs.csv: cannot write (No space left on device)")

    monkeypatch.setattr(simulate, "write_results", failing)
    assert exit_code(["simulate", str(REPO / "workloads" / "sample.json"), "-e", "out", "--no-progress"]) == 1
    assert {name: (tmp_path / name).read_text() for name in earlier} == earlier
