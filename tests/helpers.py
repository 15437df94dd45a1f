"""Small builders shared by the tests."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from scheduler.workloads.model import Workload

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
DATA = Path(__file__).resolve().parent / "data"


def shared(relative: str) -> Path:
    """A file of the team's shared data beside the checkout; skips the test when it is absent."""
    import pytest

    path = SHARED / relative
    if not path.exists():
        pytest.skip(f"{path} not available")
    return path


def make_workload(jobs: list[tuple], nb_res: int, **extras: list) -> Workload:
    """A workload from ``(subtime, res, walltime, runtime)`` tuples; ids are 0, 1, 2..."""
    table = pd.DataFrame(
        {
            "id": [str(i) for i in range(len(jobs))],
            "subtime": [float(j[0]) for j in jobs],
            "res": [int(j[1]) for j in jobs],
            "walltime": [float(j[2]) for j in jobs],
            "runtime": [float(j[3]) for j in jobs],
            "profile": [f"delay_{j[3]:g}" for j in jobs],
            **extras,
        }
    )
    return Workload(table, nb_res)
