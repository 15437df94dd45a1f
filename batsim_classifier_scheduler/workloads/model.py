"""The in-memory workload every front end reads: a job table plus the machine size."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

from batsim_classifier_scheduler.core.job import JobFields
from batsim_classifier_scheduler.errors import WorkloadError
from batsim_classifier_scheduler.util.values import is_missing

if TYPE_CHECKING:
    import pandas as pd

    from batsim_classifier_scheduler.workloads.cleaning_report import CleaningReport

#: Columns every workload table has. ``walltime`` is -1 when the job has no limit.
REQUIRED_COLUMNS = ("id", "subtime", "res", "walltime", "runtime", "profile")


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

    The table is given as a pandas DataFrame, or as columns (column name -> a list of values, the
    types pandas would infer: one float column holds only floats; or a numpy array). A workload
    given columns builds its DataFrame when ``jobs`` is first read, and :meth:`column` reads them
    without it: simulating a Batsim JSON workload or an SWF trace needs no pandas (whose import
    costs more than reading the file).

    ``cleaning`` is what the cleaning rules did when the workload comes from an SWF trace.
    """

    def __init__(self, jobs: pd.DataFrame | Mapping[str, list], nb_res: int, name: str = "w0",
                 source: str | None = None, header: dict | None = None,
                 cleaning: CleaningReport | None = None) -> None:
        self._columns: dict[str, list] | None = dict(jobs) if isinstance(jobs, Mapping) else None
        self._frame: pd.DataFrame | None = None if isinstance(jobs, Mapping) else jobs
        self.nb_res = nb_res
        self.name = name
        self.source = source
        self.header = header if header is not None else {}
        self.cleaning = cleaning
        missing = [c for c in REQUIRED_COLUMNS if c not in self.column_names]
        if missing:
            raise WorkloadError(f"{self.source or 'workload'}: missing job columns {missing}")
        if self.nb_res <= 0:
            raise WorkloadError(f"{self.source or 'workload'}: nb_res must be positive, got {self.nb_res}")

    @property
    def jobs(self) -> pd.DataFrame:
        """The job table as a DataFrame (from then on the workload's table: changes to it count)."""
        if self._frame is None:
            import pandas as pd

            self._frame, self._columns = pd.DataFrame(self._columns), None
        return self._frame

    @jobs.setter
    def jobs(self, table: pd.DataFrame) -> None:
        self._frame, self._columns = table, None

    @property
    def column_names(self) -> list[str]:
        return list(self._columns if self._columns is not None else self._frame.columns)

    def column(self, name: str) -> list[Any]:
        """One column as a list of Python values (not to be modified)."""
        values = self._columns[name] if self._columns is not None else self._frame[name]
        return values if isinstance(values, list) else values.tolist()

    @property
    def extra_columns(self) -> list[str]:
        """The extra per-job fields, in table order."""
        return [c for c in self.column_names if c not in REQUIRED_COLUMNS]

    def job_fields(self) -> list[Mapping[str, Any]]:
        """Each job's extra fields, in table order, without the missing ones (None, NaN).

        When no extra column misses a value, the jobs' fields are :class:`~batsim_classifier_scheduler.core.job.JobFields` that
        share their names (a fifth of the memory of a dict per job), or, when the columns are numpy arrays,
        :class:`RowFields` that read them (no value held per job); otherwise each job has a dict.
        """
        names = self.extra_columns
        if not names:
            return [JobFields({}, ())] * len(self)  # read-only: one for all
        index = {name: position for position, name in enumerate(names)}
        arrays = tuple(self._columns[name] for name in names) if self._columns is not None else ()
        if arrays and all(map(_complete_array, arrays)):
            return list(map(RowFields, [(index, arrays)] * len(self), range(len(self))))
        columns = [self.column(name) for name in names]
        if not any(map(_may_miss, columns)):
            return [JobFields(index, values) for values in zip(*columns)]
        fields: list[dict[str, Any]] = [{} for _ in range(len(self))]
        for name, values in zip(names, columns):
            for job_fields, value in zip(fields, values):
                if not is_missing(value):
                    job_fields[name] = value
        return fields

    def __len__(self) -> int:
        return len(self._columns["id"]) if self._columns is not None else len(self._frame)


class RowFields(Mapping[str, Any]):
    """A job's extra fields read, when asked, from its workload's columns (numpy arrays, none missing a value): a job
    holds its row number, not its values (an SWF trace's seven fields: 72 bytes a job, against 250 as values).
    ``table`` is ``(index, columns)``, shared by the workload's jobs (field name -> position in ``columns``)."""

    __slots__ = ("_table", "_row")

    def __init__(self, table: tuple[dict[str, int], tuple], row: int) -> None:
        self._table = table
        self._row = row

    def __getitem__(self, name: str) -> Any:
        index, columns = self._table
        return columns[index[name]].item(self._row)

    def get(self, name: str, default: Any = None) -> Any:
        index, columns = self._table
        position = index.get(name)
        return default if position is None else columns[position].item(self._row)

    def __contains__(self, name: object) -> bool:
        return name in self._table[0]

    def __iter__(self) -> Iterator[str]:
        return iter(self._table[0])

    def __len__(self) -> int:
        return len(self._table[0])

    def __repr__(self) -> str:
        return repr(dict(self))

    def __reduce__(self) -> tuple:
        """Pickled as the values alone (not the columns)."""
        index, columns = self._table
        return JobFields, (index, tuple(column.item(self._row) for column in columns))


def _complete_array(values: Any) -> bool:
    """Whether a column is a numpy array of numbers, booleans or strings without a NaN."""
    kind = getattr(getattr(values, "dtype", None), "kind", None)
    if kind is None or values.ndim != 1 or kind not in "iubfU":
        return False
    return kind != "f" or not (values != values).any()


def _may_miss(values: list) -> bool:
    """Whether a column may hold a missing value: anything but ints and strings, or a NaN."""
    kinds = set(map(type, values))
    if not kinds <= {int, str, bool, float}:
        return True
    return float in kinds and any(value != value for value in values)
