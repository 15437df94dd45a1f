"""The in-memory workload every front end reads: a job table plus the machine size."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import pandas as pd

from scheduler.errors import WorkloadError

if TYPE_CHECKING:
    from scheduler.workloads.cleaning import CleaningReport

#: Columns every workload table has. ``walltime`` is -1 when the job has no limit.
REQUIRED_COLUMNS = ("id", "subtime", "res", "walltime", "runtime", "profile")


@dataclass
class Workload:
    """A Batsim-style workload.

    ``jobs`` has one row per job, in submission order, with the columns of
    :data:`REQUIRED_COLUMNS`:

    - ``id`` (str): the job id inside its workload, without the ``w0!`` prefix;
    - ``subtime`` (float s), ``res`` (int processors), ``walltime`` (float s, -1 = none);
    - ``runtime`` (float s): the actual runtime, i.e. the ``delay`` of the job's profile;
    - ``profile`` (str): the profile name.

    Any other column (``user``, ``group``, ``executable``, ``queue``, ``partition``,
    ``requested_procs``, ``unix_submit_time``...) is an extra field forwarded to the
    scheduler in JOB_SUBMITTED, as Batsim does.

    ``cleaning`` is what the cleaning rules did when the workload comes from an SWF trace.
    """

    jobs: pd.DataFrame
    nb_res: int
    name: str = "w0"
    source: str | None = None
    header: dict = field(default_factory=dict)
    cleaning: CleaningReport | None = None

    def __post_init__(self) -> None:
        missing = [c for c in REQUIRED_COLUMNS if c not in self.jobs.columns]
        if missing:
            raise WorkloadError(f"{self.source or 'workload'}: missing job columns {missing}")
        if self.nb_res <= 0:
            raise WorkloadError(f"{self.source or 'workload'}: nb_res must be positive, got {self.nb_res}")

    @property
    def extra_columns(self) -> list[str]:
        """The extra per-job fields, in table order."""
        return [c for c in self.jobs.columns if c not in REQUIRED_COLUMNS]

    def __len__(self) -> int:
        return len(self.jobs)
