"""Test-session set-up.

The hand-written SWF fixtures are stored as ``tests/data/*.swf.txt`` (so that no ``.swf`` file is
committed: the project ships no traces) and written out as ``*.swf`` before the tests run (each under a
temporary name, then renamed: pytest-xdist's workers may write them at the same time).

``python -m pytest`` runs the tests on every core with pytest-xdist (``-n auto``), the tests of a
``xdist_group`` on one worker (``--dist loadgroup``: they share an expensive module fixture). ``-n 0`` runs
them in this process, as does ``-p no:xdist`` (or pytest without pytest-xdist installed).
"""

import os

import pytest

from tests.helpers import DATA

for source in DATA.glob("*.swf.txt"):
    target = source.with_suffix("")
    if not target.exists() or target.read_bytes() != source.read_bytes():
        partial = target.with_name(f"{target.name}.{os.getpid()}.tmp")
        partial.write_bytes(source.read_bytes())
        os.replace(partial, target)


@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config: pytest.Config) -> None:
    """Without ``-n``, distribute the tests as ``-n auto --dist loadgroup`` would (before pytest-xdist reads
    its options: its own hook runs after this conftest's)."""
    if (config.pluginmanager.hasplugin("xdist") and not hasattr(config, "workerinput")
            and config.option.numprocesses is None and config.option.dist == "no"):
        config.option.numprocesses = "auto"
        config.option.dist = "loadgroup"
