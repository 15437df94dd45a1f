"""Test-session set-up.

The hand-written SWF fixtures are stored as ``tests/data/*.swf.txt`` (so that no ``.swf`` file is
committed: the project ships no traces) and written out as ``*.swf`` before the tests run (each under a
temporary name, then renamed: pytest-xdist's workers may write them at the same time).

``python -m pytest`` runs the tests on every core with pytest-xdist (pyproject.toml's ``addopts``). Each
worker takes whole modules (``--dist loadscope``), so that a module's fixtures (a sweep, a replay, the
reference runs) are made once; the costliest modules start first (:data:`FIRST`), so that none is left to
run alone at the end. ``-n 0`` runs every test in this process, as does ``-p no:xdist`` (or pytest without
pytest-xdist installed).
"""

import os

import pytest

from tests.helpers import DATA

# The suite starts many ``python -m batsim_classifier_scheduler`` processes: let them cache the package's bytecode (a machine that sets
# PYTHONDONTWRITEBYTECODE makes each of them compile it again, about 0.2 s of CPU a process).
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)

for source in DATA.glob("*.swf.txt"):
    target = source.with_suffix("")
    if not target.exists() or target.read_bytes() != source.read_bytes():
        partial = target.with_name(f"{target.name}.{os.getpid()}.tmp")
        partial.write_bytes(source.read_bytes())
        os.replace(partial, target)

#: The modules that take the most CPU, costliest first (3 to 40 s each; measured per test with
#: ``resource.getrusage``, children included, on the 2-core machine); the others follow in file order.
FIRST = ("test_readme_commands.py", "test_reference_kth.py", "test_sweep.py", "test_report.py",
         "test_batsim_grouping.py", "test_plugins.py", "test_classifier_golden.py", "test_docker.py",
         "test_fuzz_doors.py", "test_end_to_end.py", "test_pybatsim.py", "test_classifier.py", "test_simulate_cli.py", "test_algorithms.py", "test_probing.py")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The costliest modules first (a stable sort: each module's tests keep their order)."""
    rank = {name: i for i, name in enumerate(FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(FIRST)))


def pytest_addoption(parser: pytest.Parser, pluginmanager: pytest.PytestPluginManager) -> None:
    """Without pytest-xdist (``-p no:xdist``, or not installed), accept pyproject.toml's xdist options and run
    every test in this process."""
    if not pluginmanager.hasplugin("xdist"):
        parser.addoption("--numprocesses", dest="numprocesses", help="ignored: pytest-xdist is off")
        parser.addoption("--dist", dest="dist", help="ignored: pytest-xdist is off")
        parser.addoption("--no-loadscope-reorder", action="store_true", help="ignored: pytest-xdist is off")
