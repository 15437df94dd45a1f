"""Issue 31 (12): the README's ``python -m pytest`` runs on every core (pytest-xdist, from the test extra), whole
modules per worker, the costliest first; ``.ci/run`` runs the README's command."""

import pytest

from tests.conftest import FIRST
from tests.helpers import REPO


def test_the_default_run_uses_every_core_with_the_test_extra_s_xdist():
    tomllib = pytest.importorskip("tomllib")  # Python 3.11
    project = tomllib.loads((REPO / "pyproject.toml").read_text())
    test_extra = project["project"]["optional-dependencies"]["test"]
    assert any(requirement.startswith("pytest-xdist") for requirement in test_extra)
    addopts = project["tool"]["pytest"]["ini_options"]["addopts"].split()
    assert addopts[addopts.index("--numprocesses") + 1] == "auto"
    assert addopts[addopts.index("--dist") + 1] == "loadscope" and "--no-loadscope-reorder" in addopts


def test_the_costliest_modules_named_first_exist():
    assert len(set(FIRST)) == len(FIRST)
    for name in FIRST:
        assert (REPO / "tests" / name).is_file(), name


def test_ci_runs_the_readme_s_test_command():
    readme = (REPO / "README.md").read_text()
    command = next(line for line in readme.splitlines() if line.startswith("python3 -m venv .venv") and "pytest" in line)
    assert command in (REPO / ".ci" / "run").read_text()
