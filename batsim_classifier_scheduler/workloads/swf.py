"""Standard Workload Format (SWF) reader and writer.

An SWF file (Parallel Workloads Archive) has one job per line: 18 whitespace-separated
numbers, -1 meaning "unknown". Header comments start with ``;``, e.g. ``; MaxProcs: 100``.
Files may be gzip-compressed; compression is detected from the content, not the name.

The happy path reads the numbers with numpy's ``loadtxt``, a chunk of lines at a time, into one float table
(pandas, whose import costs more than reading a whole trace, is imported only when the table is asked for as a
DataFrame). Only when that finds a bad line does a line-by-line pass run, to name the line and field (or to drop
the bad lines with ``skip_bad_lines=True``).
"""

from __future__ import annotations

import contextlib
import gzip
import math
import re
import warnings
import zlib
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING

import numpy as np

from batsim_classifier_scheduler.errors import WorkloadError
from batsim_classifier_scheduler.util.values import MAX_INTEGER, MAX_SECONDS

if TYPE_CHECKING:
    import pandas as pd

#: The 18 SWF fields, in file order.
COLUMNS = (
    "job", "submit", "wait", "runtime", "procs_alloc", "cpu_avg", "mem_avg", "procs_req",
    "time_req", "mem_req", "status", "user", "group", "executable", "queue", "partition",
    "preceding_job", "think_time",
)
#: Fields where a negative value other than -1 (unknown) is an error.
NON_NEGATIVE = ("submit", "runtime", "procs_alloc", "procs_req", "time_req")
#: Fields holding seconds: at most :data:`MAX_SECONDS` in absolute value; every other field at most
#: :data:`MAX_INTEGER` (job numbers, counts and ids are kept as exact integers).
TIMES = ("submit", "wait", "runtime", "time_req", "think_time")
LIMITS = np.array([MAX_SECONDS if name in TIMES else float(MAX_INTEGER) for name in COLUMNS])
#: Header keys that may repeat; their values are always lists.
MULTI_KEYS = frozenset({"Note", "Queue", "Partition"})
#: Header keys whose values are integers; every other value is kept as text.
INTEGER_KEYS = frozenset({"MaxJobs", "MaxRecords", "MaxNodes", "MaxProcs", "MaxRuntime", "MaxMemory",
                          "MaxQueues", "MaxPartitions", "UnixStartTime", "TimeZone"})

_KEY_LINE = re.compile(r"^;\s?([A-Za-z][A-Za-z0-9_]*)\s*:\s?(.*)$")
#: A size with its partitions' sizes, as multi-partition traces give ``MaxProcs``: ``1664 (72, 1368, 224)``.
_SIZE_WITH_PARTITIONS = re.compile(r"\s*(\d+)\s*\(\s*(\d+(?:\s*,\s*\d+)*)\s*\)\s*")
_NUMBER = re.compile(r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$")
#: Characters of text parsed at a time (about 10,000 job lines): only their lines and tables are held at once.
_CHUNK_CHARACTERS = 1 << 20
#: Fields an archive trace may give with decimals (averages); the others parse as integers first: numpy reads an
#: integer several times faster than a float, and the same value (a float table read at once only when one fails).
_DECIMAL_FIELDS = ("cpu_avg", "mem_avg")
_MIXED = np.dtype([(name, np.float64 if name in _DECIMAL_FIELDS else np.int64) for name in COLUMNS])

#: A row filter: given a chunk's columns (name -> numpy array), which rows to keep (a boolean array).
RowFilter = Callable[[Mapping[str, np.ndarray]], np.ndarray]


@dataclass
class SwfTrace:
    """An SWF file as read: the job table (columns :data:`COLUMNS`) and the header.

    ``table`` is the reader's float array (a row per job, a column per field of :data:`COLUMNS`), or a
    DataFrame with those columns (as the sacct reader makes it). :meth:`column` reads either without pandas;
    :attr:`jobs` is the table as a DataFrame (a float array's integral columns as integers).
    """

    table: np.ndarray | pd.DataFrame | None
    header: dict
    path: Path
    skipped_lines: list[int] = field(default_factory=list)

    @property
    def jobs(self) -> pd.DataFrame:
        """The job table as a DataFrame (built, and pandas imported, at each call on a float array)."""
        if not isinstance(self.table, np.ndarray):
            return self.table
        import pandas as pd

        return pd.DataFrame({name: _integers_if_integral(self.table[:, index]) for index, name in enumerate(COLUMNS)})

    def column(self, name: str) -> np.ndarray:
        """One field of every job, as a numpy array."""
        if isinstance(self.table, np.ndarray):
            return self.table[:, COLUMNS.index(name)]
        return self.table[name].to_numpy()

    def __len__(self) -> int:
        return len(self.table)

    @property
    def max_procs(self) -> int | None:
        """The machine size the header declares (``MaxProcs``, else ``MaxNodes``)."""
        declared = self.declared_size()
        return declared[1] if declared else None

    def declared_size(self) -> tuple[str, int, tuple[int, ...]] | None:
        """``(key, size, partitions)`` of the header's ``MaxProcs``, else ``MaxNodes``, else None.

        A multi-partition machine gives the total and each partition's size, ``MaxProcs: 1664 (72, 1368,
        224)``: the total is read, and the partitions returned (empty for a plain number)."""
        for key in ("MaxProcs", "MaxNodes"):
            value = self.header.get(key)
            if isinstance(value, int):
                size, partitions = value, ()
            else:
                match = _SIZE_WITH_PARTITIONS.fullmatch(str(value or ""))
                if not match:
                    continue
                size, partitions = int(match.group(1)), tuple(map(int, match.group(2).split(",")))
            if size > 0:
                return key, size, partitions
        return None

    @property
    def unix_start_time(self) -> int | None:
        """``UnixStartTime`` from the header: the epoch of submit time 0."""
        value = self.header.get("UnixStartTime")
        return value if isinstance(value, int) else None


def read_swf(path: str | Path, *, skip_bad_lines: bool = False,
             where: RowFilter | None = None) -> SwfTrace:
    """Read an SWF file (plain or gzip).

    Parameters
    ----------
    path : the ``.swf`` or ``.swf.gz`` file.
    skip_bad_lines : drop malformed job lines (their line numbers are kept in
        ``SwfTrace.skipped_lines``) instead of raising.
    where : optional row filter, ``where(chunk) -> boolean mask``, applied while reading (``chunk``: each
        field's column of some lines, name -> numpy array) so that a subset of a huge trace never holds the
        whole table in memory.

    Raises
    ------
    WorkloadError : missing file, corrupt or truncated gzip, or a malformed line
        (the message names the file, line number and field).
    """
    path = Path(path)
    header = read_header(path)
    try:
        table, skipped = _read_fast(path, where), []
    except _Malformed:
        table, skipped = _read_checked(path, where, skip_bad_lines)
    return SwfTrace(table=table, header=header, path=path, skipped_lines=skipped)


def read_header(path: str | Path) -> dict:
    """Parse only the leading comment block of an SWF file (see :func:`parse_header`)."""
    with _reading(Path(path)) as text:
        return parse_header(_leading_comments(text))


def parse_header(lines: list[str]) -> dict:
    """Parse ``; Key: value`` comment lines into a dict.

    Values of :data:`INTEGER_KEYS` become ``int``, others stay text; keys of
    :data:`MULTI_KEYS` map to lists; a comment line without a key continues the previous
    value (joined with a newline).
    """
    header: dict = {}
    key = None
    for line in lines:
        match = _KEY_LINE.match(line)
        if match:
            key, value = match.group(1), match.group(2).strip()
            if key in MULTI_KEYS:
                header.setdefault(key, []).append(value)
            elif key in header:
                header[key] = f"{header[key]}\n{value}"
            else:
                header[key] = _header_value(key, value)
            continue
        text = line.lstrip(";").strip()
        if not text:
            key = None
        elif key is not None:
            if key in MULTI_KEYS:
                header[key][-1] = f"{header[key][-1]}\n{text}"
            else:
                header[key] = f"{header[key]}\n{text}"
    return header


def write_swf(path: str | Path, jobs: pd.DataFrame, header: dict | None = None) -> Path:
    """Write a job table with the :data:`COLUMNS` (missing columns are -1) as SWF.

    The file is gzip-compressed when its name ends with ``.gz``.
    """
    import pandas as pd

    path = Path(path)
    table = pd.DataFrame({c: jobs.get(c, -1) for c in COLUMNS}, index=jobs.index)
    lines = [_header_line(k, v) for k, values in (header or {}).items()
             for v in (values if isinstance(values, list) else [values])]
    body = table.to_csv(sep=" ", header=False, index=False, lineterminator="\n")
    text = "".join(lines) + ";\n" + body
    opener = gzip.open if path.name.endswith(".gz") else open
    with opener(path, "wt", encoding="latin-1") as out:
        out.write(text)
    return path


def open_text(path: Path) -> IO[str]:
    """Open a plain or gzip-compressed text file (detected by its magic bytes; a name ending in ``.gz``
    must hold gzip data)."""
    try:
        with open(path, "rb") as probe:
            compressed = probe.read(2) == b"\x1f\x8b"
        if not compressed and path.name.lower().endswith(".gz"):
            raise WorkloadError(f"{path}: not gzip data, although the name ends in .gz")
        return (gzip.open if compressed else open)(path, "rt", encoding="latin-1")
    except FileNotFoundError:
        raise WorkloadError(f"{path}: no such file") from None
    except OSError as exc:
        raise WorkloadError(f"{path}: cannot open ({exc.strerror or exc})") from None


class _Malformed(Exception):
    """The fast path met a line it cannot parse; the checked path will name it."""


@contextlib.contextmanager
def _reading(path: Path) -> Iterator[IO[str]]:
    """Open ``path`` and turn decompression failures into WorkloadErrors."""
    text = open_text(path)
    try:
        with text:
            yield text
    except (EOFError, gzip.BadGzipFile, zlib.error) as exc:
        raise WorkloadError(f"{path}: truncated or corrupt gzip data ({exc})") from None


def _leading_comments(text: IO[str]) -> list[str]:
    lines = []
    for line in text:
        stripped = line.strip()
        if stripped.startswith(";"):
            lines.append(stripped)
        elif stripped:
            break
    return lines


def _read_fast(path: Path, where: RowFilter | None) -> np.ndarray:
    with _reading(path) as stream:
        text = stream.read()  # (at once: line by line, a gzip file is read through Python calls)
    chunks, jobs = [], 0
    for table in map(_numbers, _line_chunks(text)):
        jobs += len(table)
        chunks.append(_chunk_kept(table, where))
    del text  # (before the chunks are joined)
    if not jobs:
        raise WorkloadError(f"{path}: no job lines")
    return np.concatenate(chunks) if len(chunks) > 1 else chunks[0]


def _line_chunks(text: str) -> Iterator[list[str]]:
    """The lines of ``text``, :data:`_CHUNK_CHARACTERS` at a time (each chunk's whole lines)."""
    begin = 0
    while begin < len(text):
        end = text.find("\n", begin + _CHUNK_CHARACTERS) + 1 or len(text)
        yield text[begin:end].splitlines()
        begin = end


def _numbers(lines: list[str]) -> np.ndarray:
    """The job lines among ``lines`` as a float table; raises :class:`_Malformed` at a line that is not
    :data:`COLUMNS`' numbers in their range."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "loadtxt: input contained no data", UserWarning)  # comments only
        try:
            fields = np.loadtxt(lines, dtype=_MIXED, comments=";", ndmin=1)
            table = np.column_stack([fields[name] for name in COLUMNS])  # floats: _MIXED has float fields
        except ValueError:  # a decimal where an integer was expected, or a bad line
            try:
                table = np.loadtxt(lines, dtype=float, comments=";", ndmin=2)
            except ValueError as exc:
                raise _Malformed from exc
    if not table.size:
        return np.empty((0, len(COLUMNS)))
    if table.shape[1] != len(COLUMNS) or not _valid(table):
        raise _Malformed
    return table


def _chunk_kept(table: np.ndarray, where: RowFilter | None) -> np.ndarray:
    if where is None:
        return table
    return table[np.asarray(where({name: table[:, index] for index, name in enumerate(COLUMNS)}), dtype=bool)]


def _valid(table: np.ndarray) -> bool:
    """Every field within its range (NaN and infinities refused), and no negative count other than -1."""
    if not (np.abs(table) <= LIMITS).all():
        return False
    return not (table[:, [COLUMNS.index(name) for name in NON_NEGATIVE]] < -1).any()


def _read_checked(path: Path, where: RowFilter | None,
                  skip_bad_lines: bool) -> tuple[np.ndarray, list[int]]:
    """Line-by-line pass: name the first bad line, or drop every bad line."""
    good: list[str] = []
    skipped: list[int] = []
    with _reading(path) as text:
        for lineno, line in enumerate(text, start=1):
            fields = line.split(";", 1)[0].split()
            if not fields:
                continue
            problem = _line_problem(fields)
            if problem is None:
                good.append(" ".join(fields))
            elif skip_bad_lines:
                skipped.append(lineno)
            else:
                raise WorkloadError(f"{path}:{lineno}: {problem}")
    if not good:
        raise WorkloadError(f"{path}: no valid job lines ({len(skipped)} malformed)" if skipped
                            else f"{path}: no job lines")
    return _chunk_kept(np.loadtxt(good, dtype=float, ndmin=2), where), skipped


def _integers_if_integral(values: np.ndarray) -> np.ndarray:
    """A float column as integers when every value is a whole number (as a CSV reader types such a column)."""
    if (values == np.round(values)).all():
        return values.astype(np.int64)
    return values


def _line_problem(fields: list[str]) -> str | None:
    """Why a job line is malformed, or None."""
    if len(fields) != len(COLUMNS):
        detail = (f"field {len(fields) + 1} '{COLUMNS[len(fields)]}' is missing"
                  if len(fields) < len(COLUMNS) else "too many fields")
        return f"{len(fields)} fields, expected {len(COLUMNS)} ({detail})"
    for index, (name, token, limit) in enumerate(zip(COLUMNS, fields, LIMITS.tolist()), start=1):
        if not _NUMBER.match(token) or not math.isfinite(float(token)):
            return f"field {index} '{name}' is not a number: {token!r}"
        if name in NON_NEGATIVE and float(token) < -1:
            return f"field {index} '{name}' is {token}: negative values other than -1 (unknown) are invalid"
        if abs(float(token)) > limit:
            what = f"{MAX_SECONDS:.0f} s (272 years)" if name in TIMES else f"{MAX_INTEGER} in absolute value"
            return f"field {index} '{name}' is {token}: beyond what the simulator holds, at most {what}"
    return None


def _header_value(key: str, value: str) -> int | str:
    if key in INTEGER_KEYS and re.fullmatch(r"[+-]?\d+", value):
        return int(value)
    return value


def _header_line(key: str, value) -> str:
    first, *rest = str(value).split("\n")
    pad = " " * (len(key) + 3)
    return f"; {key}: {first}\n" + "".join(f";{pad}{line}\n" for line in rest)
