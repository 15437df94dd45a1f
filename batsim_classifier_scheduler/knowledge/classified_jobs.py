"""What the online classifier records of each job it has seen, one row per job in order of first sight.

A row is added when a job is classified, or when a job completes without having been classified
(its completion still feeds the history and the divider). Columns are ``array.array``s: the per-job
calls append and update them in plain Python, and :meth:`JobTable.column` gives numpy copies for the
weekly retrain and the reports.
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Sequence

import numpy as np

#: The per-job columns and their types: ``run`` (the simulation run, see ``JobClassifier.restart``),
#: ``week`` (of the classification, -1: never classified), ``predicted`` (1: small or uncertain),
#: ``uncertain``, ``p_small`` (the model's probability, NaN without one), ``divider`` (in force at the
#: classification), ``runtime`` and ``complete_time`` (NaN until the job completes).
COLUMNS = {"run": "q", "week": "q", "predicted": "b", "uncertain": "b", "p_small": "d", "divider": "d",
           "runtime": "d", "complete_time": "d"}


class JobTable:
    """One row per job; with ``n_features``, also its category codes, anchors and feature vector.

    Parameters
    ----------
    n_categories : category codes and anchors per row (0 when no model reads features).
    n_features : the length of a feature vector (0 when no model reads features).
    """

    def __init__(self, n_categories: int = 0, n_features: int = 0) -> None:
        self.k, self.f = n_categories, n_features
        self.ids: list[str] = []
        self.rows: dict[str, int] = {}  # job id -> row, for the current run
        for name, typecode in COLUMNS.items():
            setattr(self, name, array(typecode))
        self.codes = array("q")        # k per row: the job's category codes
        self.anchors = array("q")      # k per row: the newest completion of each category it saw
        self.features = array("f")     # f per row: its feature vector at classification (float32)
        self._no_anchors = [-1] * n_categories
        self._no_features = [math.nan] * n_features

    def __len__(self) -> int:
        return len(self.ids)

    def add(self, job_id: str, run: int, week: int = -1, predicted: int = 0, uncertain: int = 0,
            p_small: float = math.nan, divider: float = math.nan, codes: Sequence[int] = (),
            anchors: Sequence[int] | None = None, features: Sequence[float] | None = None) -> int:
        """Append a job's row (``week`` -1: seen only at its completion); returns the row."""
        row = len(self.ids)
        self.ids.append(job_id)
        self.rows[job_id] = row
        self.run.append(run)
        self.week.append(week)
        self.predicted.append(predicted)
        self.uncertain.append(uncertain)
        self.p_small.append(p_small)
        self.divider.append(divider)
        self.runtime.append(math.nan)
        self.complete_time.append(math.nan)
        if self.k:
            self.codes.extend(codes)
            self.anchors.extend(self._no_anchors if anchors is None else anchors)
            self.features.extend(self._no_features if features is None else features)
        return row

    def complete(self, row: int, runtime: float, now: float) -> bool:
        """Record the row's completion; False if it was already recorded."""
        if not math.isnan(self.runtime[row]):
            return False
        self.runtime[row] = runtime
        self.complete_time[row] = now
        return True

    def codes_of(self, row: int) -> list[int]:
        return self.codes[row * self.k:(row + 1) * self.k].tolist()

    def column(self, name: str) -> np.ndarray:
        """A numpy copy of a column of :data:`COLUMNS`."""
        return np.array(getattr(self, name))

    def matrix(self, name: str, rows: np.ndarray) -> np.ndarray:
        """The ``codes``, ``anchors`` or ``features`` of ``rows``, one row each (numpy)."""
        values = getattr(self, name)
        width = self.f if name == "features" else self.k
        if len(rows) == 0:
            return np.empty((0, width), dtype=np.dtype(values.typecode))
        first, last = int(rows.min()), int(rows.max())
        block = np.array(values[first * width:(last + 1) * width]).reshape(-1, width)
        return block[rows - first]

    def to_arrays(self) -> dict[str, np.ndarray]:
        """The table as named arrays (for a saved classifier); :meth:`from_arrays` reads them back."""
        arrays = {name: self.column(name) for name in COLUMNS}
        arrays |= {"ids": np.array(self.ids, dtype=str), "codes": np.array(self.codes),
                   "anchors": np.array(self.anchors), "features": np.array(self.features)}
        return arrays

    @classmethod
    def from_arrays(cls, arrays: dict[str, np.ndarray], n_categories: int, n_features: int,
                    run: int) -> "JobTable":
        """The table :meth:`to_arrays` wrote; ``rows`` indexes the rows of run ``run``."""
        table = cls(n_categories, n_features)
        for name, typecode in [*COLUMNS.items(), ("codes", "q"), ("anchors", "q"), ("features", "f")]:
            setattr(table, name, array(typecode, arrays[name].astype(np.dtype(typecode)).tobytes()))
        table.ids = [str(job_id) for job_id in arrays["ids"].tolist()]
        table.rows = {job_id: row for row, (job_id, r) in enumerate(zip(table.ids, table.run)) if r == run}
        return table
