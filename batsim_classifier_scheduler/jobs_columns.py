"""Batsim's ``_jobs.csv`` table as the simulator, its output files and the metrics share it: its columns, the two
forms a table takes, and how to read a column of either.

A jobs table is a DataFrame (what :func:`batsim_classifier_scheduler.sim.batsim_files.read_jobs_csv` gives) or columns: a mapping of column
name -> list (what the embedded engine gives, see ``SimulationResult.columns``), which the writers and the metrics
read without pandas.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Union

import numpy as np

if TYPE_CHECKING:
    import pandas as pd

#: A DataFrame, or a mapping of column name -> list.
JobsTable = Union["pd.DataFrame", Mapping[str, list]]

#: The columns of Batsim's ``_jobs.csv``, in its order.
JOBS_COLUMNS = [
    "job_id", "workload_name", "profile", "submission_time", "requested_number_of_resources",
    "requested_time", "success", "final_state", "starting_time", "execution_time", "finish_time",
    "waiting_time", "turnaround_time", "stretch", "allocated_resources", "consumed_energy", "metadata",
]


def column(jobs: JobsTable, name: str) -> list:
    """Column ``name`` of a jobs table as a list."""
    values = jobs[name]
    return values if isinstance(values, list) else values.tolist()


def numeric_column(jobs: JobsTable, name: str, dtype: type = np.float64) -> np.ndarray:
    """Column ``name`` of a jobs table as a numpy array (missing values NaN)."""
    return np.asarray(jobs[name], dtype=dtype)


def text_values(values: Sequence | pd.Series) -> list[str]:
    """A column (a list, or a Series) as a list of strings, ``""`` for missing values (a float Series'
    integral values without ``.0``)."""
    if isinstance(values, list):
        if all_text(values):  # the engine's text columns
            return values
        return ["" if v is None or (isinstance(v, float) and v != v) else str(v) for v in values]
    import pandas as pd  # a Series: pandas is there

    if pd.api.types.is_float_dtype(values.dtype):  # e.g. an all-empty metadata column read by pandas
        return ["" if v != v else str(int(v)) if v.is_integer() else repr(v) for v in values.tolist()]
    return ["" if v is None or v is pd.NA or v != v else str(v) for v in values.tolist()]


def all_text(values: list) -> bool:
    """Whether every value of a column is a ``str`` (as the engine's text columns are)."""
    return set(map(type, values)) <= {str}
