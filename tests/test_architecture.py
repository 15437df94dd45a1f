"""The layering: ``batsim_classifier_scheduler.core`` is pure ground, the front ends read the decision core's outcome only, and the
package's imports run one way: no module imports one that imports it back, and no package or top-level module
of ``batsim_classifier_scheduler`` imports one that imports it back, through any chain."""

import ast
from graphlib import CycleError, TopologicalSorter
from pathlib import Path

import pytest

from tests.helpers import REPO

PACKAGE = REPO / "batsim_classifier_scheduler"
CORE = PACKAGE / "core"
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


@pytest.mark.parametrize("path", sorted(CORE.rglob("*.py")), ids=lambda path: path.relative_to(CORE).as_posix())
def test_the_core_imports_nothing_of_the_project_but_itself_errors_and_the_registry_and_does_no_io(path):
    for name in imports(path):  # the registry of names: the core registers its algorithms and orders there
        if name.split(".")[0] == "batsim_classifier_scheduler":
            assert name.startswith("batsim_classifier_scheduler.core.") or name in ("batsim_classifier_scheduler.errors", "batsim_classifier_scheduler.registry"), name
        assert name.split(".")[0] not in IMPURE, name
    calls = {node.func.id for node in ast.walk(ast.parse(path.read_text()))
             if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)}
    assert "open" not in calls


def test_the_decision_parts_share_no_state_through_inheritance():
    """Issue 47: each part of the decision owns its state; none is a base class of another of ours (a mixin reading
    the fields another file sets)."""
    for path in sorted((CORE / "decision").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ClassDef):
                bases = {base.id if isinstance(base, ast.Name) else ast.unparse(base) for base in node.bases}
                assert bases <= {"Protocol"}, f"{path.name}: {node.name}({', '.join(sorted(bases))})"


def test_every_package_has_an_init():
    for folder in (REPO / "batsim_classifier_scheduler").rglob("*"):
        if folder.is_dir() and any(folder.glob("*.py")):
            assert (folder / "__init__.py").is_file(), folder


@pytest.mark.parametrize("front_end", ["sim/results.py", "sim/simulate.py", "cli/simulate.py", "cli/batsim.py",
                                       "experiments/sweep.py", "experiments/worker.py", "batsim/server.py",
                                       "batsim/pybatsimAdapter.py"])
def test_front_ends_use_the_decision_core_through_decide_outcome_and_close_only(front_end):
    tree = ast.parse((REPO / "batsim_classifier_scheduler" / front_end).read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, (ast.Name, ast.Attribute)):
            owner = node.value.id if isinstance(node.value, ast.Name) else node.value.attr
            if owner == "core":
                assert node.attr in ("decide", "outcome", "close"), f"core.{node.attr}"


def test_the_decision_core_builds_nothing_and_every_front_end_builds_it_through_the_composition_root():
    assert not any("batsim_classifier_scheduler.compose" in imports(path) for path in (CORE / "decision").glob("*.py"))
    for front_end in ("sim/simulate.py", "batsim/server.py", "batsim/pybatsimAdapter.py"):
        text = (REPO / "batsim_classifier_scheduler" / front_end).read_text()
        assert "build_core(" in text and "DecisionCore(" not in text, front_end


# --- the import graph ---------------------------------------------------------------------------------------------

def module_file(name: str) -> str | None:
    """The file of module ``name`` of the package (``batsim_classifier_scheduler/x.py`` or ``batsim_classifier_scheduler/x/__init__.py``), if any."""
    path = REPO.joinpath(*name.split("."))
    for candidate in (path.with_suffix(".py"), path / "__init__.py"):
        if candidate.is_file():
            return candidate.relative_to(REPO).as_posix()
    return None


def imported_files(path: Path) -> set[str]:
    """The package's files that ``path`` imports, anywhere in it: at the top, in a function, or for type checking
    only (an annotation ties two modules as much as a call does). ``from a import b`` is module ``a.b`` when there is
    one, else module ``a``. The package's imports are absolute."""
    files = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            files.update(filter(None, (module_file(alias.name) for alias in node.names)))
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0, f"{path}, line {node.lineno}: a relative import"
            for alias in node.names:
                found = module_file(f"{node.module}.{alias.name}") or module_file(node.module)
                if found:
                    files.add(found)
    return files


def import_graph() -> dict[str, set[str]]:
    """Every file of the package -> the package's files it imports (itself left out)."""
    graph = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        name = path.relative_to(REPO).as_posix()
        graph[name] = imported_files(path) - {name}
    return graph


def circles(graph: dict[str, set[str]]) -> list[set[str]]:
    """The strongly connected components of more than one node (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for other in graph.get(node, ()):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            component = set()
            while not component or member != node:
                member = stack.pop()
                component.add(member)
            if len(component) > 1:
                found.append(component)

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def room(file: str) -> str:
    """The package or top-level module of ``batsim_classifier_scheduler`` a file belongs to (``batsim_classifier_scheduler/sim``, ``batsim_classifier_scheduler/metrics.py``)."""
    parts = file.split("/")
    return "/".join(parts[:2])


def test_the_import_graph_is_read():
    graph = import_graph()
    assert "batsim_classifier_scheduler/core/job.py" in graph["batsim_classifier_scheduler/sim/engine.py"]
    assert "batsim_classifier_scheduler/jobs_columns.py" in graph["batsim_classifier_scheduler/metrics.py"]
    assert "batsim_classifier_scheduler/knowledge/accuracy.py" in graph["batsim_classifier_scheduler/knowledge/predictors.py"]  # imported in a function
    assert "batsim_classifier_scheduler/workloads/cleaning_report.py" in graph["batsim_classifier_scheduler/workloads/model.py"]  # for type checking only


def test_no_module_imports_one_that_imports_it_back():
    found = circles(import_graph())
    assert found == []


def test_no_package_imports_one_that_imports_it_back():
    """The packages and top-level modules of ``batsim_classifier_scheduler`` stand in floors: each imports only those below it."""
    rooms: dict[str, set[str]] = {}
    for file, imported in import_graph().items():
        rooms.setdefault(room(file), set()).update(room(other) for other in imported if room(other) != room(file))
    try:
        tuple(TopologicalSorter(rooms).static_order())
    except CycleError as error:
        pytest.fail(f"packages that import each other: {' -> '.join(error.args[1])}")


def test_circles_are_found():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": {"e"}}
    assert circles(graph) == [{"a", "b", "c"}]


def test_the_import_package_is_named_after_the_distribution():
    """The import name is the distribution's (another PyPI distribution, `scheduler`, owns that import name)."""
    import tomllib

    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    assert PACKAGE.name == project["name"].replace("-", "_") and PACKAGE.is_dir()
    assert not (REPO / "scheduler").exists()


def test_the_console_script_and_python_m_each_say_their_own_name():
    import subprocess
    import sys

    script = Path(sys.executable).parent / "batsim-classifier-scheduler"
    runs = {"python -m batsim_classifier_scheduler": [sys.executable, "-m", "batsim_classifier_scheduler", "--help"]}
    if script.exists():  # installed with pip (the README's set-up)
        runs["batsim-classifier-scheduler"] = [str(script), "--help"]
    for name, argv in runs.items():
        done = subprocess.run(argv, capture_output=True, text=True, cwd=REPO)
        assert done.returncode == 0 and done.stdout.startswith(f"usage: {name} "), done.stdout[:200]
