"""The README is a front door: short, readable, and every command in it runs as written.

Its ``sh`` blocks are the two set-up commands and the tour. The set-up commands each make a virtual
environment, too slow for the suite: we check that they install what ``.ci/run`` installs (``.ci/run`` runs the
second one verbatim), while their ``python -m batsim_classifier_scheduler simulate`` is run by ``tests/test_simulate_cli.py`` and
their ``pytest`` is this suite. The tour runs line by line, as written, in a scratch folder laid out as a fresh
clone after the first set-up command: ``workloads/``, ``platforms/`` and ``experiments/`` of this checkout, and
``.venv/bin/python`` standing for this interpreter with this checkout's package. The KTH-SP2 trace of
``../shared/workloads/`` is placed in a trace cache of the tour's own (``$BATSIM_CLASSIFIER_SCHEDULER_CACHE``),
so that ``fetch-trace`` finds it there instead of downloading it. One liberty: ``serve``'s port 28000 becomes a
free port, so that a busy port on the test machine cannot fail the tour.
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import REPO, shared

README = (REPO / "README.md").read_text()
KTH = "workloads/KTH-SP2-1996-2.1-cln.swf.gz"
PORT = "28000"


def sh_blocks(text: str) -> list[str]:
    return re.findall(r"^```sh\n(.*?)^```", text, re.S | re.M)


def section(title: str) -> str:
    start = README.index(f"\n## {title}\n")
    end = README.find("\n## ", start + 1)
    return README[start:end if end >= 0 else None]


SET_UP = sh_blocks(section("Set up"))
TOUR = [line for line in sh_blocks(section("A short tour"))[0].splitlines() if line and not line.startswith("#")]


#: What each tour line leaves behind, in the scratch folder (the README says so).
WRITES = {
    "simulate KTH-SP2 ": ["kth/run_base_jobs.csv", "kth/run_class-clairvoyant_summary.json"],
    "convert ": ["kth.json", "kth.xml"],
    "generate ": ["small.json", "small.xml"],
    "batsim-peer ": ["peer/small_jobs.csv", "peer/small_schedule.csv"],
    "report kth ": ["kth-report/REPORT.md", "kth-report/REPORT.html"],
    "sweep ": ["sweep"],
}


def test_the_readme_is_a_front_door():
    lines = README.splitlines()
    assert len(lines) <= 200
    fenced = False
    for number, line in enumerate(lines, 1):
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced:
            assert len(line) <= 120, f"README.md:{number}: {len(line)} characters of prose"


def test_every_command_of_the_readme_is_a_set_up_command_or_the_tour():
    assert len(SET_UP) == 2 and len(sh_blocks(section("A short tour"))) == 1
    assert len(sh_blocks(README)) == 3


def test_the_set_up_commands_install_what_ci_installs():
    quick_start, tests = (block.strip() for block in SET_UP)
    ci = (REPO / ".ci" / "run").read_text().strip().splitlines()[-1]
    assert ci == tests  # .ci/run runs the second command verbatim
    install, run = quick_start.rsplit(" && ", 1)
    ci_steps = ci.split(" && ")
    assert install == " && ".join(ci_steps[:2]).replace("-e '.[test]'", "-e .")  # the same, without test tools
    assert run.startswith(".venv/bin/python -m batsim_classifier_scheduler simulate workloads/sample.json ")


def free_port() -> str:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return str(probe.getsockname()[1])


@pytest.fixture(scope="module")
def tour(tmp_path_factory) -> tuple[Path, dict[str, subprocess.CompletedProcess]]:
    """Run the tour once: each line's completed process, by line."""
    trace = shared(KTH)
    root = tmp_path_factory.mktemp("clone")
    for folder in ("workloads", "platforms", "experiments"):
        (root / folder).symlink_to(REPO / folder)
    python = root / ".venv" / "bin" / "python"
    python.parent.mkdir(parents=True)
    python.write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')
    python.chmod(0o755)
    cache = root / "cache"
    cache.mkdir()
    shutil.copy(trace, cache / trace.name)
    env = {**os.environ, "PYTHONPATH": str(REPO), "BATSIM_CLASSIFIER_SCHEDULER_CACHE": str(cache)}
    port = free_port()
    results, background = {}, {}
    for line in TOUR:
        command = line.replace(PORT, port)
        if command.split("#")[0].rstrip().endswith("&"):
            command = command.split("#")[0].rstrip().removesuffix("&")
            background[line] = subprocess.Popen(["bash", "-c", command], cwd=root, env=env, text=True,
                                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            continue
        try:
            results[line] = subprocess.run(["bash", "-c", command], cwd=root, env=env, text=True,
                                           capture_output=True, timeout=300)
        except subprocess.TimeoutExpired as stop:
            results[line] = subprocess.CompletedProcess(command, -1, stop.stdout or "", f"timed out: {stop}")
    for line, process in background.items():
        try:
            out, err = process.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            process.kill()
            out, err = process.communicate()
        results[line] = subprocess.CompletedProcess(line, process.returncode, out, err)
    return root, results


def tour_params():
    for line in TOUR:
        yield pytest.param(line, id=" ".join(line.split()[3:5]))


@pytest.mark.slow
@pytest.mark.parametrize("line", list(tour_params()))
def test_every_tour_command_runs_as_written(line, tour):
    root, results = tour
    result = results[line]
    assert result.returncode == 0, f"{line}\n{result.stderr[-2000:]}"
    command = line.split(" -m batsim_classifier_scheduler ", 1)[1]
    for start, files in WRITES.items():
        if command.startswith(start):
            for name in files:
                assert (root / name).exists(), f"{line}: no {name}"
    if command.startswith("fetch-trace KTH-SP2"):
        assert result.stdout.strip() == str(root / "cache" / Path(KTH).name)


def test_the_glossary_names_every_variant():
    from batsim_classifier_scheduler.config import VARIANTS

    glossary = section("Glossary")
    for name in VARIANTS:
        assert f"`{name}`" in glossary, name


DOCS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]


@pytest.mark.parametrize("path", DOCS, ids=lambda path: path.name)
def test_the_docs_cite_no_tracker_and_spell_p2sf_one_way(path):
    text = path.read_text()
    assert not re.search(r"\bissues? \d+", text, re.I), re.search(r".{40}\bissues? \d+.{40}", text, re.I | re.S)
    assert "P²SF" not in text or path.name == "README.md"  # the README's glossary says how the paper writes it


def test_the_readme_s_links_resolve():
    missing = [target for target in re.findall(r"\]\(([^)#]+)[^)]*\)|^\[\w+\]: ([^#\s]+)", README, re.M)
               for target in target if target and not target.startswith("http") and not (REPO / target).exists()]
    assert missing == [], missing
