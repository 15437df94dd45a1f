"""Slurm accounting (``sacct --parsable2``) input: the options of the reading, the field names sacct prints,
and the fields a scheduler needs from them.

sacct names its fields as ``sacct --helpformat`` lists them; a header line gives them ``|``-separated
(``JobID|Submit|Start|...``), and ``--sacct-fields`` gives them comma-separated, as ``sacct --format`` takes
them, for a file written with ``--noheader``. Names are matched without regard to case.
"""

from __future__ import annotations

import gzip
from pathlib import Path
from typing import Literal

import msgspec


#: The fields of ``sacct --helpformat`` (Slurm 20.11 to 24.11); a header naming another field is not sacct's.
KNOWN_FIELDS = (
    "Account", "AdminComment", "AllocCPUS", "AllocNodes", "AllocTRES", "AssocID", "AveCPU", "AveCPUFreq",
    "AveDiskRead", "AveDiskWrite", "AvePages", "AveRSS", "AveVMSize", "BlockID", "Cluster", "Comment",
    "Constraints", "ConsumedEnergy", "ConsumedEnergyRaw", "Container", "CPUTime", "CPUTimeRAW", "DBIndex",
    "DerivedExitCode", "Elapsed", "ElapsedRaw", "Eligible", "End", "ExitCode", "Extra", "FailedNode", "Flags",
    "GID", "Group", "JobID", "JobIDRaw", "JobName", "Layout", "Licenses", "MaxDiskRead", "MaxDiskReadNode",
    "MaxDiskReadTask", "MaxDiskWrite", "MaxDiskWriteNode", "MaxDiskWriteTask", "MaxPages", "MaxPagesNode",
    "MaxPagesTask", "MaxRSS", "MaxRSSNode", "MaxRSSTask", "MaxVMSize", "MaxVMSizeNode", "MaxVMSizeTask",
    "McsLabel", "MinCPU", "MinCPUNode", "MinCPUTask", "NCPUS", "NNodes", "NodeList", "NTasks", "Partition",
    "Planned", "PlannedCPU", "PlannedCPURAW", "Priority", "QOS", "QOSRAW", "QOSReq", "Reason", "ReqCPUFreq",
    "ReqCPUFreqGov", "ReqCPUFreqMax", "ReqCPUFreqMin", "ReqCPUS", "ReqMem", "ReqNodes", "ReqTRES",
    "Reservation", "ReservationId", "Reserved", "ResvCPU", "ResvCPURAW", "Start", "State", "Submit",
    "SubmitLine", "Suspended", "SystemComment", "SystemCPU", "Timelimit", "TimelimitRaw", "TotalCPU",
    "TRESUsageInAve", "TRESUsageInMax", "TRESUsageInMaxNode", "TRESUsageInMaxTask", "TRESUsageInMin",
    "TRESUsageInMinNode", "TRESUsageInMinTask", "TRESUsageInTot", "TRESUsageOutAve", "TRESUsageOutMax",
    "TRESUsageOutMaxNode", "TRESUsageOutMaxTask", "TRESUsageOutMin", "TRESUsageOutMinNode",
    "TRESUsageOutMinTask", "TRESUsageOutTot", "UID", "User", "UserCPU", "WCKey", "WCKeyID", "WorkDir",
)
_CANONICAL = {name.lower(): name for name in KNOWN_FIELDS}

#: What the reading needs, each from the first of its fields the file has (None: optional).
NEEDED = {
    "jobid": ("JobID", "JobIDRaw"),
    "start": ("Start",),
    "state": ("State",),
}
#: Read when present.
OPTIONAL = {
    "end": ("End",),
    "elapsed": ("ElapsedRaw", "Elapsed"),
    "limit": ("Timelimit", "TimelimitRaw"),
    "cpus": ("AllocCPUS", "NCPUS"),
    "req_cpus": ("ReqCPUS",),
    "nodes": ("AllocNodes", "NNodes"),
    "req_nodes": ("ReqNodes", "NNodes"),
    "user": ("User", "UID"),
    "group": ("Group", "GID"),
    "partition": ("Partition",),
}
#: The fields of the ``sacct --format`` docs/usage.md gives: what every option of the reading needs.
SACCT_FORMAT = ("JobID,Submit,Eligible,Start,End,ElapsedRaw,Timelimit,AllocCPUS,ReqCPUS,NNodes,User,Group,Partition,"
                "State")


class SacctOptions(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """How a ``sacct --parsable2`` file is read.

    ``fields``: the file's fields, when it has no header line (sacct's names, in order); ``submit``: which
    time is the job's submission (``Eligible``: when it could start, past holds and dependencies);
    ``unit``: a job's size in processors (``AllocCPUS``) or nodes (``AllocNodes``/``NNodes``);
    ``partitions``: keep only the jobs of these partitions; ``keep_names``: write user and group names
    as they are instead of numbering them.
    """

    fields: tuple[str, ...] | None = None
    submit: Literal["submit", "eligible"] = "submit"
    unit: Literal["cpus", "nodes"] = "cpus"
    partitions: tuple[str, ...] | None = None
    keep_names: bool = False


def canonical(name: str) -> str | None:
    """sacct's spelling of a field name given in any case, or None if sacct has no such field."""
    return _CANONICAL.get(name.strip().lower())


def parse_field_list(text: str) -> tuple[str, ...]:
    """The fields of ``--sacct-fields`` (comma-separated, as ``sacct --format`` takes them; a ``%WIDTH`` is
    allowed and ignored), in sacct's spelling: an unknown name is a ValueError."""
    names = []
    for given in text.split(","):
        name = canonical(given.split("%", 1)[0])
        if name is None:
            raise ValueError(f"{given.strip()!r} is not a sacct field (sacct --helpformat lists them)")
        names.append(name)
    return tuple(names)


def first_line(path: Path) -> str:
    """The first line of a plain or gzip file ('' when it cannot be read: its reader will say why)."""
    try:
        with open(path, "rb") as probe:
            compressed = probe.read(2) == b"\x1f\x8b"
        with (gzip.open if compressed else open)(path, "rt", encoding="latin-1") as text:
            return text.readline()
    except (OSError, EOFError):
        return ""


def looks_like_header(line: str) -> bool:
    """Whether a first line is a sacct ``--parsable2`` header: ``|``-separated field names with ``JobID``."""
    names = [canonical(name) for name in line.rstrip("\r\n").rstrip("|").split("|")]
    return "|" in line and ("JobID" in names or "JobIDRaw" in names) and None not in names


def columns_for(fields: tuple[str, ...], options: SacctOptions) -> dict[str, str]:
    """Each needed or read quantity -> the file's field holding it. A needed one missing is a ValueError
    naming it."""
    present = set(fields)
    needed = {**NEEDED, "submit": ("Eligible",) if options.submit == "eligible" else ("Submit",)}
    if options.unit == "cpus":
        needed["size"] = ("AllocCPUS", "NCPUS", "ReqCPUS")
    else:
        needed["size"] = ("AllocNodes", "NNodes", "ReqNodes")
    if options.partitions:
        needed["partition"] = ("Partition",)
    chosen = {}
    for what, names in {**needed, "runtime": ("ElapsedRaw", "Elapsed", "End")}.items():
        found = next((name for name in names if name in present), None)
        if found is None:
            raise ValueError(f"no {' or '.join(names)} field: it needs one"
                             + (" (--unit nodes)" if what == "size" and options.unit == "nodes" else ""))
        chosen[what] = found
    for what, names in OPTIONAL.items():
        found = next((name for name in names if name in present), None)
        if found is not None:
            chosen.setdefault(what, found)
    del chosen["runtime"], chosen["size"]
    return chosen
