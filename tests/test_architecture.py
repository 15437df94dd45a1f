"""The layering: ``scheduler.core`` is pure ground, and the front ends read the decision core's outcome only."""

import ast
from pathlib import Path

import pytest

from tests.helpers import REPO

CORE = REPO / "scheduler" / "core"
#: Standard modules that read files, sockets or clocks: not for the pure core.
IMPURE = {"io", "os", "pathlib", "shutil", "socket", "time", "datetime", "json", "pickle", "gzip", "urllib", "zmq"}


def imports(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            names.add(node.module)
    return names


@pytest.mark.parametrize("path", sorted(CORE.glob("*.py")), ids=lambda path: path.name)
def test_the_core_imports_nothing_of_the_project_but_itself_errors_and_the_registry_and_does_no_io(path):
    for name in imports(path):  # the registry of names: the core registers its algorithms and orders there
        if name.split(".")[0] == "scheduler":
            assert name.startswith("scheduler.core.") or name in ("scheduler.errors", "scheduler.registry"), name
        assert name.split(".")[0] not in IMPURE, name
    calls = {node.func.id for node in ast.walk(ast.parse(path.read_text()))
             if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)}
    assert "open" not in calls


def test_every_package_has_an_init():
    for folder in (REPO / "scheduler").rglob("*"):
        if folder.is_dir() and any(folder.glob("*.py")):
            assert (folder / "__init__.py").is_file(), folder


@pytest.mark.parametrize("front_end", ["sim/results.py", "sim/simulate.py", "cli/simulate.py", "cli/batsim.py",
                                       "experiments/sweep.py", "experiments/worker.py", "batsim/server.py",
                                       "batsim/pybatsimAdapter.py"])
def test_front_ends_use_the_decision_core_through_decide_and_outcome_only(front_end):
    tree = ast.parse((REPO / "scheduler" / front_end).read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, (ast.Name, ast.Attribute)):
            owner = node.value.id if isinstance(node.value, ast.Name) else node.value.attr
            if owner == "core":
                assert node.attr in ("decide", "outcome"), f"core.{node.attr}"


def test_the_decision_core_builds_nothing_and_every_front_end_builds_it_through_the_composition_root():
    assert "scheduler.compose" not in imports(REPO / "scheduler" / "decision.py")
    for front_end in ("sim/simulate.py", "batsim/server.py", "batsim/pybatsimAdapter.py"):
        text = (REPO / "scheduler" / front_end).read_text()
        assert "build_core(" in text and "DecisionCore(" not in text, front_end
