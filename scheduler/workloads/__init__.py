"""Workloads: SWF traces, Batsim JSON files, the archive downloader and a synthetic generator.

Downstream code calls :func:`load_workload` and gets a :class:`Workload`, whatever the file.
The SWF reader and its cleaning (which need pandas) are imported only for an SWF trace.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from scheduler.errors import WorkloadError
from scheduler.workloads.batsim_json import read_batsim_json, write_batsim_json
from scheduler.workloads.cleaning_report import CleaningReport
from scheduler.workloads.model import Workload

if TYPE_CHECKING:
    from scheduler.workloads.cleaning import CleaningRules

__all__ = [
    "CleaningReport", "CleaningRules", "Workload", "WorkloadError", "convert_swf",
    "load_workload", "read_batsim_json", "read_swf", "write_batsim_json",
]

SWF_SUFFIXES = (".swf", ".swf.gz")
JSON_SUFFIXES = (".json", ".json.gz")


def load_workload(path: str | Path, *, nb_res: int | None = None,
                  cleaning: CleaningRules | None = None, skip_bad_lines: bool = False) -> Workload:
    """Load a workload from an SWF trace (read, cleaned, converted) or a Batsim JSON file.

    Parameters
    ----------
    path : ``.swf``, ``.swf.gz``, ``.json`` or ``.json.gz``.
    nb_res : machine size; by default the paper's size for a known trace, else the
        file's (``MaxProcs`` header or ``nb_res``).
    cleaning : the SWF cleaning rules (:class:`CleaningRules`; the defaults reproduce
        the reference conversion).
    skip_bad_lines : drop malformed SWF lines instead of failing.
    """
    path = Path(path)
    name = path.name.lower()
    if name.endswith(SWF_SUFFIXES):
        return convert_swf(path, nb_res=nb_res, cleaning=cleaning, skip_bad_lines=skip_bad_lines)[0]
    if name.endswith(JSON_SUFFIXES):
        return read_batsim_json(path, nb_res=nb_res)
    raise WorkloadError(f"{path}: unknown workload format (expected .swf[.gz] or .json[.gz])")


def convert_swf(path: str | Path, *, nb_res: int | None = None, cleaning: CleaningRules | None = None,
                skip_bad_lines: bool = False) -> tuple[Workload, CleaningReport]:
    """Read and clean an SWF trace; return the workload and the cleaning report."""
    from scheduler.workloads.cleaning import clean
    from scheduler.workloads.swf import read_swf

    return clean(read_swf(path, skip_bad_lines=skip_bad_lines), nb_res=nb_res, rules=cleaning)


def __getattr__(name: str):
    # the SWF side pulls in pandas: import it only when asked for
    if name == "CleaningRules":
        from scheduler.workloads.cleaning import CleaningRules

        return CleaningRules
    if name == "read_swf":
        from scheduler.workloads.swf import read_swf

        return read_swf
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
