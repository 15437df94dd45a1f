"""Workloads: SWF traces, Batsim JSON files, Slurm accounting (``sacct --parsable2``), the archive downloader
and a synthetic generator.

Downstream code calls :func:`load_workload` and gets a :class:`Workload`, whatever the file.
The SWF reader and its cleaning (numpy) and the sacct reader (pandas) are imported only for such a file.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Iterable

from batsim_classifier_scheduler.errors import UsageError, WorkloadError
from batsim_classifier_scheduler.workloads.batsim_json import read_batsim_json, write_batsim_json
from batsim_classifier_scheduler.workloads.cleaning_report import CleaningReport
from batsim_classifier_scheduler.workloads.model import Workload

if TYPE_CHECKING:
    from batsim_classifier_scheduler.workloads.cleaning import CleaningRules
    from batsim_classifier_scheduler.workloads.sacct_fields import SacctOptions

__all__ = [
    "CleaningReport", "CleaningRules", "Workload", "WorkloadError", "convert_swf",
    "load_workload", "workload_format", "read_batsim_json", "read_swf", "workload_path", "write_batsim_json",
]

SWF_SUFFIXES = (".swf", ".swf.gz")
JSON_SUFFIXES = (".json", ".json.gz")
#: Names that say a file is sacct's output; any other file with sacct's header is read as sacct's too.
SACCT_SUFFIXES = (".sacct", ".sacct.gz")
#: The workload formats (``--format``).
FORMATS = ("swf", "json", "sacct")


def workload_path(given: str | Path, folders: Iterable[str | Path] = ()) -> Path:
    """The file a workload argument names, as every command reads it.

    An existing path wins. Else a trace of the catalogue, by its name (``KTH-SP2``) or its file name
    (``KTH-SP2-1996-2.1-cln.swf.gz``), or any other file name, is looked for in ``folders`` and then in the
    trace cache that ``fetch-trace`` fills. A catalogue trace not downloaded yet is a :class:`UsageError`
    saying how to fetch it; a bare name that is neither a file nor a trace, a :class:`WorkloadError`
    listing the traces; any other path comes back as given (its reader says it is missing).
    """
    path = Path(given)
    if path.exists() or path.name != str(given):  # a path with folders is that path only
        return path
    from batsim_classifier_scheduler.workloads.archive import TRACES, cached_file, lookup_trace, not_downloaded

    trace = lookup_trace(path.name)
    found = cached_file(trace.local_file if trace else path.name, folders)
    if found:
        return found
    if trace:
        raise UsageError(not_downloaded(trace, str(given)))
    if not path.name.lower().endswith(SWF_SUFFIXES + JSON_SUFFIXES + SACCT_SUFFIXES):
        raise WorkloadError(f"{given}: no such file, nor a trace name; known traces: {', '.join(TRACES)} "
                            "(python -m batsim_classifier_scheduler fetch-trace --list)")
    return path


def load_workload(path: str | Path, *, nb_res: int | None = None,
                  cleaning: CleaningRules | None = None, skip_bad_lines: bool = False,
                  sacct: SacctOptions | None = None, format: str | None = None) -> Workload:
    """Load a workload from an SWF trace or Slurm accounting (read, cleaned, converted) or a Batsim JSON file.

    Parameters
    ----------
    path : ``.swf``, ``.swf.gz``, ``.json``, ``.json.gz``, or ``sacct --parsable2`` output (plain or gzip).
    nb_res : machine size; by default the paper's size for a known trace, else the
        file's (``MaxProcs`` header or ``nb_res``; for sacct, the peak in use at once).
    cleaning : the SWF cleaning rules (:class:`CleaningRules`; the defaults reproduce
        the reference conversion).
    skip_bad_lines : drop malformed SWF lines instead of failing.
    sacct : how sacct output is read (:class:`~batsim_classifier_scheduler.workloads.sacct_fields.SacctOptions`).
    format : ``swf``, ``json`` or ``sacct``; by default :func:`workload_format`.
    """
    path = Path(path)
    kind = format or workload_format(path, sacct)
    if kind == "swf":
        return convert_swf(path, nb_res=nb_res, cleaning=cleaning, skip_bad_lines=skip_bad_lines)[0]
    if kind == "json":
        return read_batsim_json(path, nb_res=nb_res)
    from batsim_classifier_scheduler.workloads.sacct import convert_sacct

    return convert_sacct(path, options=sacct, nb_res=nb_res, cleaning=cleaning)[0]


def workload_format(path: str | Path, sacct: SacctOptions | None = None) -> str:
    """``swf`` or ``json`` by the file's name, else ``sacct`` for a name in :data:`SACCT_SUFFIXES`, a file
    whose first line is sacct's header, or when ``sacct`` gives the fields of a file without one."""
    path = Path(path)
    name = path.name.lower()
    if name.endswith(SWF_SUFFIXES):
        return "swf"
    if name.endswith(JSON_SUFFIXES):
        return "json"
    from batsim_classifier_scheduler.workloads.sacct_fields import first_line, looks_like_header

    if name.endswith(SACCT_SUFFIXES) or (sacct is not None and sacct.fields) or looks_like_header(first_line(path)):
        return "sacct"
    raise WorkloadError(f"{path}: unknown workload format (expected .swf[.gz], .json[.gz], or sacct --parsable2 "
                        "output with its header line; --format sacct and --sacct-fields read one without)")


def convert_swf(path: str | Path, *, nb_res: int | None = None, cleaning: CleaningRules | None = None,
                skip_bad_lines: bool = False) -> tuple[Workload, CleaningReport]:
    """Read and clean an SWF trace; return the workload and the cleaning report."""
    from batsim_classifier_scheduler.workloads.cleaning import clean
    from batsim_classifier_scheduler.workloads.swf import read_swf

    return clean(read_swf(path, skip_bad_lines=skip_bad_lines), nb_res=nb_res, rules=cleaning)


def __getattr__(name: str):
    # the SWF side: imported only when asked for
    if name == "CleaningRules":
        from batsim_classifier_scheduler.workloads.cleaning import CleaningRules

        return CleaningRules
    if name == "read_swf":
        from batsim_classifier_scheduler.workloads.swf import read_swf

        return read_swf
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
