"""Where results go (issue 23): every output location is checked before any work, with one line naming it;
files are written atomically; ``-e DIR/`` writes inside DIR, as Batsim does; the progress bar moves."""

from __future__ import annotations

import socket
import time

import pytest

from batsim_classifier_scheduler.cli import main
from batsim_classifier_scheduler.errors import OutputError
from batsim_classifier_scheduler.util.output_files import atomic_open, check_output
from batsim_classifier_scheduler.workloads import write_batsim_json
from batsim_classifier_scheduler.workloads.synthetic import generate

from tests.helpers import DATA, REPO, named

SAMPLE = REPO / "workloads" / "sample.json"
PLATFORM = REPO / "platforms" / "small-16.xml"


def free_endpoint() -> str:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return f"tcp://127.0.0.1:{probe.getsockname()[1]}"


@pytest.fixture
def blocked(tmp_path):
    """A file where a folder is expected: nothing can be written under it."""
    path = tmp_path / "afile"
    path.write_text("")
    return path


def commands(blocked, tmp_path):
    small = tmp_path / "small.json"
    write_batsim_json(generate(60, weeks=0.2, nb_res=8, seed=1), small)
    return {
        "--output-prefix": ["simulate", str(small), "-e", str(blocked / "run")],
        "--save-model": ["simulate", str(small), "--variant", "classification", "--save-model", str(blocked / "m")],
        "--export": ["serve", "-s", free_endpoint(), "-e", str(blocked / "run")],
        "--output": ["generate", "--jobs", "10", "-o", str(blocked / "w.json")],
        "--platform-out": ["convert", str(DATA / "tiny.swf"), "-o", str(tmp_path / "t.json"),
                           "--platform-out", str(blocked / "p.xml")],
        "report --output": ["report", str(tmp_path), "-o", str(blocked / "report")],
        "batsim-peer --export": ["batsim-peer", "-p", str(PLATFORM), "-w", str(small), "-e", str(blocked / "x"),
                                "-s", free_endpoint()],
        "convert --output": ["convert", str(DATA / "tiny.swf"), "-o", str(blocked / "t.json")],
        "sweep --output": ["sweep", str(REPO / "experiments" / "ci-sample.json"), "-o", str(blocked / "r")],
    }


@pytest.mark.parametrize("option", ["--output-prefix", "--save-model", "--export", "--output", "--platform-out",
                                    "report --output", "batsim-peer --export", "convert --output", "sweep --output"])
def test_an_unwritable_output_stops_the_command_before_any_work(option, blocked, tmp_path, capsys):
    argv = commands(blocked, tmp_path)[option]
    started = time.perf_counter()
    assert main(argv) == 1
    assert time.perf_counter() - started < 5  # nothing simulated, no socket waited on
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1
    assert err.startswith(f"error: {option.split()[-1]} {blocked}/") and err.endswith(f": {blocked} is not a folder\n")
    assert not (tmp_path / "t.json").exists()  # convert wrote nothing before finding the bad --platform-out


def test_check_output_names_the_reason(tmp_path):
    assert check_output(tmp_path / "new" / "deeper" / "x.csv", "-o") == tmp_path / "new" / "deeper" / "x.csv"
    with pytest.raises(OutputError, match=r"^-o .*: is a folder, not a file$"):
        check_output(tmp_path, "-o")


def test_a_failed_write_leaves_neither_a_partial_nor_a_changed_file(tmp_path):
    target = tmp_path / "run_jobs.csv"
    target.write_text("the previous result\n")
    with pytest.raises(RuntimeError):
        with atomic_open(target) as stream:
            stream.write("half of a new")
            raise RuntimeError("the disk is full")
    assert target.read_text() == "the previous result\n"
    assert [p.name for p in tmp_path.iterdir()] == ["run_jobs.csv"]


def test_a_prefix_ending_in_a_separator_writes_inside_the_folder(tmp_path, monkeypatch, capsys):
    """``-e o/`` wrote ./o_jobs.csv; Batsim's ``-e o/`` writes o/_jobs.csv."""
    small = tmp_path / "small.json"
    write_batsim_json(generate(60, weeks=0.2, nb_res=8, seed=1), small)
    monkeypatch.chdir(tmp_path)
    assert main(["simulate", str(small), "-e", "o/", "--no-progress"]) == 0
    assert sorted(p.name for p in (tmp_path / "o").iterdir()) == ["_jobs.csv", "_schedule.csv", "_summary.json"]
    assert not list(tmp_path.glob("o_*"))
    assert "wrote o/_jobs.csv, _schedule.csv, _summary.json" in capsys.readouterr().out


class Bar:
    """Stands for tqdm: counts what the run reports."""

    def __init__(self, total: int, label: str | None) -> None:
        self.total, self.n = total, 0

    def __enter__(self) -> "Bar":
        BARS.append(self)
        return self

    def __exit__(self, *exc) -> None:
        pass

    def update(self, n: int) -> None:
        self.n += n


BARS: list[Bar] = []


@pytest.mark.slow
@pytest.mark.parametrize("workload, variant", [(SAMPLE, "base"), ("small", "classification-probing")])
def test_the_progress_bar_advances_to_the_job_count(workload, variant, tmp_path, monkeypatch):
    """The bar stayed at 0/3000: completions were counted outside the window the loop watched. With the
    safeguard (the small workload), a killed job and its resubmission count once."""
    if workload == "small":
        workload = tmp_path / "small.json"
        write_batsim_json(generate(400, weeks=2, nb_res=16, seed=2), workload)
    BARS.clear()
    monkeypatch.setattr("batsim_classifier_scheduler.cli.simulate.progress_bar", Bar)
    monkeypatch.setattr("sys.stderr.isatty", lambda: True)
    assert main(["simulate", str(workload), "--variant", named(variant), "-e", str(tmp_path / "run")]) == 0
    [bar] = BARS
    assert bar.n == bar.total == (3000 if workload == SAMPLE else 400)
    if variant != "base":  # 126 jobs were killed and resubmitted
        assert '"killed": 126' in (tmp_path / "run_summary.json").read_text()
