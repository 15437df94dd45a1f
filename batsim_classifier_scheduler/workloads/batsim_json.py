"""Batsim 4 JSON workloads: read and write.

A workload file holds ``nb_res``, a ``jobs`` list (``id``, ``subtime``, ``res``,
``walltime``, ``profile`` and any extra fields) and a ``profiles`` map. We write one
shared ``delay`` profile per distinct runtime, named ``delay_<runtime>``, one job per
line, as the reference workloads of ``../shared/reference-schedules`` are. Only ``delay``
profiles can be read: the embedded simulator needs a runtime per job.

Reading checks the jobs in plain Python and gives the workload as columns: a simulation
then never imports pandas (the DataFrame is built if ``Workload.jobs`` is read).
"""

from __future__ import annotations

import gzip
import json
import math
import re
import zlib
from itertools import chain
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

import msgspec
import numpy as np

from batsim_classifier_scheduler.errors import WorkloadError
from batsim_classifier_scheduler.util.values import MAX_MACHINES, MAX_SECONDS, is_missing, is_number, plain
from batsim_classifier_scheduler.workloads.model import REQUIRED_COLUMNS, Workload

if TYPE_CHECKING:
    import pandas as pd

_JOB_FIELDS = ("id", "subtime", "res", "walltime", "profile")
#: SWF header fields kept at the top of a converted workload (Batsim ignores them): the
#: classifier rebuilds local submission times from them.
HEADER_KEYS = ("UnixStartTime", "TimeZoneString", "TimeZone")
#: The limit on times, as errors say it.
SECONDS = f"{MAX_SECONDS:.0f} (272 years)"
#: A job id or a profile name: written as they are into ``_jobs.csv`` and Batsim's ``workload!id``.
NAME = re.compile(r'[^,"!\x00-\x1f\x7f]+')


def read_batsim_json(path: str | Path, *, nb_res: int | None = None) -> Workload:
    """Read a Batsim JSON workload (plain or gzip); job runtimes come from delay profiles.

    ``nb_res`` overrides the file's machine size (every job must still fit). A missing or null walltime
    becomes -1 (no limit), as in Batsim. Times are JSON numbers within :data:`MAX_SECONDS` (subtimes and
    delays from 0, walltimes -1 or positive); ids are strings or integers and profile names strings, neither
    empty nor holding a comma, a double quote, a ``!`` or a control character (they are written into
    ``_jobs.csv``).
    """
    path = Path(path)
    data = _load_json(path)
    if not isinstance(data, dict) or not isinstance(data.get("jobs"), list):
        raise WorkloadError(f"{path}: not a Batsim workload (no 'jobs' list)")
    nb_res = nb_res if nb_res is not None else data.get("nb_res")
    if not isinstance(nb_res, int) or isinstance(nb_res, bool) or not 0 < nb_res <= MAX_MACHINES:
        raise WorkloadError(f"{path}: 'nb_res' must be a positive integer (at most {MAX_MACHINES:,}), "
                            f"got {_show(nb_res)}")
    jobs = data["jobs"]
    if not jobs:
        raise WorkloadError(f"{path}: no jobs")
    if not all(isinstance(job, dict) for job in jobs):
        raise WorkloadError(f"{path}: every job must be a JSON object")
    fields = _fields(jobs)
    values = {name: [job.get(name) for job in jobs] for name in _JOB_FIELDS}
    for name in ("id", "subtime", "res", "profile"):
        _require(path, jobs, name, values[name], name in fields)
    walltimes = [-1 if value is None else value for value in values["walltime"]]
    columns: dict[str, list] = {
        "walltime": _numbers(path, jobs, "walltime", walltimes, lambda t: t == -1 or 0 < t <= MAX_SECONDS,
                             f"-1 (none) or positive seconds up to {SECONDS}"),
        "subtime": _numbers(path, jobs, "subtime", values["subtime"], lambda t: 0 <= t <= MAX_SECONDS,
                            f"seconds from 0 to {SECONDS}"),
        "res": _integers(path, jobs, "res", values["res"], nb_res),
        "id": _names(path, jobs, "id", values["id"], (str, int)),
        "profile": _names(path, jobs, "profile", values["profile"], (str,)),
    }
    columns["runtime"] = _delays(path, jobs, columns["profile"], data.get("profiles"))
    _check_unique_ids(path, columns["id"])
    columns.update({name: _typed([job.get(name, math.nan) for job in jobs])  # NaN where a job has none
                    for name in fields if name not in REQUIRED_COLUMNS})
    names = [*REQUIRED_COLUMNS, *(name for name in columns if name not in REQUIRED_COLUMNS)]
    order = sorted(range(len(jobs)), key=columns["subtime"].__getitem__)  # stable: ties keep file order
    if order != list(range(len(jobs))):  # workloads are usually written in submission order already
        columns = {name: [values[i] for i in order] for name, values in columns.items()}
    return Workload(jobs={name: columns[name] for name in names}, nb_res=nb_res, source=str(path),
                    header=header_fields(path, data))


def _load_json(path: Path) -> Any:
    try:
        data = path.read_bytes()
        if data[:2] == b"\x1f\x8b":
            data = gzip.decompress(data)
        elif path.name.lower().endswith(".gz"):
            raise WorkloadError(f"{path}: not gzip data, although the name ends in .gz")
    except FileNotFoundError:
        raise WorkloadError(f"{path}: no such file") from None
    except (EOFError, zlib.error, gzip.BadGzipFile) as exc:
        raise WorkloadError(f"{path}: truncated or corrupt gzip data ({exc})") from None
    except OSError as exc:
        raise WorkloadError(f"{path}: cannot open ({exc.strerror or exc})") from None
    text = data.decode("latin-1")  # as the SWF reader reads text
    try:
        return msgspec.json.decode(text)  # twice as fast as the standard parser, the same values
    except msgspec.DecodeError:
        pass  # invalid, or valid only for the standard parser (NaN, huge integers): it decides
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise WorkloadError(f"{path}:{exc.lineno}:{exc.colno}: invalid JSON ({exc.msg})") from None


def _fields(jobs: list[dict]) -> list[str]:
    """Every field name of the jobs, in order of first appearance (as pandas reads the records)."""
    first = jobs[0].keys()
    if all(job.keys() == first for job in jobs):  # the usual case: every job has the same fields
        return list(first)
    return list(dict.fromkeys(chain.from_iterable(jobs)))


def _require(path: Path, jobs: list[dict], name: str, values: list, present: bool) -> None:
    if not present:
        raise WorkloadError(f"{path}: jobs have no '{name}' field")
    if None in values:
        raise WorkloadError(f"{path}: {_job(jobs, values.index(None))} has no '{name}'")


def _numbers(path: Path, jobs: list[dict], name: str, values: list, valid: Callable[[float], bool],
             expected: str) -> list[float]:
    """The values as floats, each a JSON number (not a string, not a boolean) for which ``valid`` holds."""
    try:
        if set(map(type, values)) <= {int, float}:
            numbers = list(map(float, values))
            if all(map(valid, numbers)):  # NaN too fails
                return numbers
    except OverflowError:  # an integer too large for a float
        pass
    index = next(i for i, value in enumerate(values)
                 if type(value) not in (int, float) or not valid(_float(value)))
    raise WorkloadError(f"{path}: {_job(jobs, index)} has an invalid '{name}': {_show(values[index])} "
                        f"(expected {expected})")


def _float(value: int | float) -> float:
    """``float(value)``, infinite for an integer too large for a float."""
    try:
        return float(value)
    except OverflowError:
        return math.inf


def _integers(path: Path, jobs: list[dict], name: str, values: list, nb_res: int) -> list[int]:
    numbers = _numbers(path, jobs, name, values, lambda n: 0 < n <= nb_res and n == round(n),
                       f"a whole number in 1..{nb_res}")
    return list(map(int, numbers))


def _names(path: Path, jobs: list[dict], name: str, values: list, kinds: tuple[type, ...]) -> list[str]:
    """The values as text: each of ``kinds`` (not a boolean), and a string one a valid :data:`NAME`."""
    if set(map(type, values)) <= set(kinds):
        texts = list(map(str, values))
        if all(map(NAME.fullmatch, texts)):
            return texts
    index = next(i for i, value in enumerate(values) if type(value) not in kinds or not NAME.fullmatch(str(value)))
    expected = " or ".join({str: "a string", int: "an integer"}[kind] for kind in kinds)
    raise WorkloadError(f"{path}: {_job(jobs, index)} has an invalid '{name}': {_show(values[index])} (expected "
                        f"{expected}, not empty and without a comma, a double quote, '!' or a control character)")


def read_header(path: str | Path) -> dict:
    """The SWF header fields kept in the Batsim JSON workload at ``path`` (:func:`header_fields`)."""
    data = _load_json(Path(path))
    if not isinstance(data, dict):
        raise WorkloadError(f"{path}: expected a JSON object")
    return header_fields(path, data)


def header_fields(where: str | Path, data: dict) -> dict:
    """The SWF header fields a workload keeps (:data:`HEADER_KEYS`: the classifier reads them), checked:
    ``UnixStartTime`` a number of seconds within :data:`MAX_SECONDS`, ``TimeZone`` an offset within a day,
    ``TimeZoneString`` text. Errors name ``where``."""
    header = {key: data[key] for key in HEADER_KEYS if data.get(key) is not None}
    kinds = {"UnixStartTime": lambda v: is_number(v) and abs(v) <= MAX_SECONDS,
             "TimeZoneString": lambda v: isinstance(v, str),
             "TimeZone": lambda v: is_number(v) and abs(v) < 86400}
    for key, valid in kinds.items():
        if key in header and not valid(header[key]):
            raise WorkloadError(f"{where}: invalid '{key}': {_show(header[key])} (expected "
                                + {"UnixStartTime": f"seconds within {SECONDS}", "TimeZoneString": "a time zone name",
                                   "TimeZone": "an offset in seconds within a day"}[key] + ")")
    return header


def _show(value: Any) -> str:
    """A value as an error shows it (shortened)."""
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _delays(path: Path, jobs: list[dict], names: list[str], profiles: Any) -> list[float]:
    if not isinstance(profiles, dict):
        raise WorkloadError(f"{path}: no 'profiles' map")
    delays = {}
    for name in dict.fromkeys(names):
        profile = profiles.get(name)
        if not isinstance(profile, dict):
            raise WorkloadError(f"{path}: {_job(jobs, names.index(name))} uses the unknown profile '{name}'")
        delay = profile.get("delay")
        if profile.get("type") != "delay" or type(delay) not in (int, float):
            raise WorkloadError(f"{path}: {_job(jobs, names.index(name))} uses profile '{name}' of type "
                                f"'{profile.get('type')}': only 'delay' profiles with a numeric "
                                "'delay' are supported")
        if not 0 <= _float(delay) <= MAX_SECONDS:
            raise WorkloadError(f"{path}: profile '{name}' has an invalid 'delay': {_show(delay)} "
                                f"(expected seconds from 0 to {SECONDS})")
        delays[name] = float(delay)
    return list(map(delays.__getitem__, names))


def _check_unique_ids(path: Path, ids: list[str]) -> None:
    if len(set(ids)) == len(ids):
        return
    seen: set[str] = set()
    duplicated: dict[str, None] = {}
    for job_id in ids:
        if job_id in seen:
            duplicated[job_id] = None
        seen.add(job_id)
    raise WorkloadError(f"{path}: duplicate job ids {list(duplicated)[:5]}")


def _typed(values: list) -> list:
    """The values of a field typed as in a pandas column: numbers with a float or a null among them
    are all floats (NaN for the nulls)."""
    kinds = set(map(type, values))
    if kinds <= {int, float, type(None)} and kinds & {int, float} and kinds != {int}:
        return [math.nan if value is None else float(value) for value in values]
    return values


def _job(jobs: list[dict], index: int) -> str:
    job_id = jobs[index].get("id")
    return f"job #{index}" + (f" (id {_show(job_id) if not isinstance(job_id, int) else job_id})"
                              if not is_missing(job_id) else "")


def write_batsim_json(workload: Workload, path: str | Path, *, description: str | None = None) -> Path:
    """Write ``workload`` as a Batsim JSON file (gzip-compressed if the name ends in ``.gz``), atomically."""
    from batsim_classifier_scheduler.util.output_files import write_text

    return write_text(path, workload_json(workload, description=description))


def workload_json(workload: Workload, *, description: str | None = None) -> str:
    """The Batsim JSON text of ``workload``: one job per line, shared delay profiles."""
    jobs = workload.jobs
    profiles = _profiles(jobs)
    names = list(_JOB_FIELDS) + workload.extra_columns
    columns = [_ids(jobs["id"])] + [_compact(jobs[name]) for name in names[1:]]
    records = [dict(zip(names, row)) for row in zip(*columns)]
    if jobs[names].isna().to_numpy().any():
        import pandas as pd  # imported already: the jobs are a DataFrame

        records = [{k: v for k, v in r.items() if not (is_missing(v) or v is pd.NA)} for r in records]
    dumps = json.JSONEncoder(separators=(",", ":"), default=plain).encode
    head = {"nb_res": int(workload.nb_res)}
    if description:
        head["description"] = description
    head.update({key: workload.header[key] for key in HEADER_KEYS if workload.header.get(key) is not None})
    return ("{\n" + "".join(f"{json.dumps(k)}: {json.dumps(v)},\n" for k, v in head.items())
            + '"jobs": [\n' + ",\n".join(map(dumps, records)) + "\n],\n"
            + '"profiles": {\n'
            + ",\n".join(f"{json.dumps(name)}:{dumps({'type': 'delay', 'delay': delay})}"
                         for name, delay in profiles.items())
            + "\n}\n}\n")


def delay_profile_names(runtimes: np.ndarray | pd.Series) -> np.ndarray:
    """``delay_<runtime>`` for each runtime (``delay_3477``, ``delay_12.5``): an object array, where the jobs of one
    runtime share its name (a fixed-width text array would hold each job's copy, 4 bytes a character)."""
    unique, inverse = np.unique(np.asarray(runtimes, dtype=float), return_inverse=True)
    names = np.array([f"delay_{int(v)}" if v == int(v) else f"delay_{v!r}" for v in unique.tolist()], dtype=object)
    return names[inverse] if len(unique) else np.array([], dtype=object)


def _profiles(jobs: pd.DataFrame) -> dict[str, float]:
    pairs = jobs[["profile", "runtime"]].drop_duplicates()
    clash = pairs["profile"][pairs["profile"].duplicated()]
    if len(clash):
        raise WorkloadError(f"profile '{clash.iloc[0]}' is used with several runtimes")
    return dict(zip(pairs["profile"], _compact(pairs["runtime"])))


def _ids(ids: pd.Series) -> list:
    """Numeric ids are written as JSON integers (as Batsim's own workloads do)."""
    text = ids.astype(str)
    numeric = text.str.fullmatch(r"0|[1-9][0-9]{0,17}").all()
    return text.astype(np.int64).tolist() if numeric else text.tolist()


def _compact(column: pd.Series) -> list:
    """Python values, with floats that are all whole numbers written as integers."""
    if column.dtype.kind == "f":
        values = column.to_numpy()
        finite = np.isfinite(values)
        if (values[finite] == np.round(values[finite])).all():
            return [int(v) if f else None for v, f in zip(values, finite)] if not finite.all() \
                else values.astype(np.int64).tolist()
    return column.tolist()



