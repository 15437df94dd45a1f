"""The seven Parallel Workloads Archive traces of the paper, and their downloader.

Traces are downloaded once into a cache directory: ``$BATSIM_CLASSIFIER_SCHEDULER_CACHE``,
else ``$XDG_CACHE_HOME/batsim-classifier-scheduler``, else
``~/.cache/batsim-classifier-scheduler``. A download is written to a ``.part`` file,
checked against the known size and SHA-256 when the catalogue has them, then renamed.

MetaCentrum2 (zegox) is not an archive file: it is the part of METACENTRUM-2013-3 that ran
on the zegox cluster (hdc.cerit-sc.cz, 48 nodes x 12 cores = 576 cores, in service from
22 April 2013). In this multi-cluster log the SWF ``partition`` field (16) holds the
cluster number; the archive's cluster table numbers zegox 9. The derivation looks for a
header line naming zegox to read the number from, falls back to 9, and keeps the jobs of
that partition in ``METACENTRUM-2013-3-zegox.swf.gz`` next to the download.
"""

from __future__ import annotations

import os
import re
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Iterable

from batsim_classifier_scheduler.util.checksums import stream_sha256
from batsim_classifier_scheduler.errors import WorkloadError
from batsim_classifier_scheduler.workloads.swf import read_header, read_swf, write_swf

ARCHIVE_URL = "https://www.cs.huji.ac.il/labs/parallel/workload"
CACHE_ENV = "BATSIM_CLASSIFIER_SCHEDULER_CACHE"
#: The zegox cluster's number in METACENTRUM-2013-3 (the archive's cluster table).
ZEGOX_PARTITION = 9


@dataclass(frozen=True)
class Trace:
    """One trace of the paper: its archive file and the machine it is simulated on."""

    name: str
    file: str
    url: str
    nb_res: int
    size: int | None = None
    sha256: str | None = None
    jobs: int | None = None
    subset: str | None = None
    note: str = ""
    #: The download's size when only roughly known (listed, not checked), in bytes.
    approx_size: int | None = None

    @property
    def local_file(self) -> str:
        """The SWF file this trace is read from (the derived subset, if any)."""
        return self.file if self.subset is None else self.file.replace(".swf", f"-{self.subset}.swf")


def _trace(name: str, folder: str, file: str, nb_res: int, **extra) -> Trace:
    return Trace(name=name, file=file, url=f"{ARCHIVE_URL}/{folder}/{file}", nb_res=nb_res, **extra)


#: The catalogue, by name. Sizes and checksums are given where we could verify them.
TRACES = {t.name: t for t in (
    _trace("CTC-SP2", "l_ctc_sp2", "CTC-SP2-1996-3.1-cln.swf.gz", 338,
           note="512-node SP2; the log's batch partition uses 338 nodes"),
    _trace("HPC2N", "l_hpc2n", "HPC2N-2002-2.2-cln.swf.gz", 240,
           note="120 dual-processor nodes"),
    _trace("KTH-SP2", "l_kth_sp2", "KTH-SP2-1996-2.1-cln.swf.gz", 100, size=387704,
           sha256="ca38b89067b6150d8ee172694e27a9e67194eef0d338b609a764d10608d50a14", jobs=28476),
    _trace("SDSC-BLUE", "l_sdsc_blue", "SDSC-BLUE-2000-4.2-cln.swf.gz", 1152,
           note="144 nodes x 8 processors"),
    _trace("SDSC-SP2", "l_sdsc_sp2", "SDSC-SP2-1998-4.2-cln.swf.gz", 128, size=1205570,
           sha256="e03fe48be50c4ab04d6bb2285296d9c3399e9c1f27ee79b754ad32a14abd9bac", jobs=59715),
    _trace("KIT-FH2", "l_kit_fh2", "KIT-FH2-2016-1.swf.gz", 24048,
           note="ForHLR II: 1152 x 20 + 21 x 48 cores"),
    _trace("MetaCentrum2-zegox", "l_metacentrum2", "METACENTRUM-2013-3.swf.gz", 576, subset="zegox",
           approx_size=58_000_000, note="the zegox cluster (48 x 12 cores) is extracted by partition"),
)}


def find_trace(name: str) -> Trace:
    """The catalogue entry for a trace name or archive file name (case-insensitive)."""
    wanted = name.lower()
    for trace in TRACES.values():
        if wanted in (trace.name.lower(), trace.file.lower(), trace.local_file.lower()):
            return trace
    raise WorkloadError(f"unknown trace {name!r}; known traces: {', '.join(TRACES)}")


def lookup_trace(name: str) -> Trace | None:
    """:func:`find_trace`, or None for a name the catalogue does not know."""
    try:
        return find_trace(name)
    except WorkloadError:
        return None


def cached_file(file_name: str, folders: Iterable[str | Path] = ()) -> Path | None:
    """The file ``file_name`` in ``folders`` or else the trace cache (:func:`default_cache_dir`), if there."""
    for folder in [*folders, default_cache_dir()]:
        candidate = Path(folder).expanduser() / file_name
        if candidate.is_file():
            return candidate
    return None


def not_downloaded(trace: Trace, given: str) -> str:
    """What to say when ``given`` names ``trace`` and its file is not in the cache."""
    return (f"{given}: trace {trace.name} is not downloaded yet (no {trace.local_file} in {default_cache_dir()}); "
            f"fetch it with: python -m batsim_classifier_scheduler fetch-trace {trace.name}")


def known_machine_size(filename: str) -> tuple[str, int] | None:
    """``(trace name, processors)`` if ``filename`` is one of the paper's trace files."""
    for trace in TRACES.values():
        if filename == trace.local_file:
            return trace.name, trace.nb_res
    return None


def manifest() -> list[dict]:
    """The catalogue as plain data (``workloads/manifest.json``)."""
    return [{**asdict(trace), "local_file": trace.local_file} for trace in TRACES.values()]


def default_cache_dir() -> Path:
    """Where downloaded traces are kept (see the module docstring)."""
    if os.environ.get(CACHE_ENV):
        return Path(os.environ[CACHE_ENV]).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base).expanduser() / "batsim-classifier-scheduler"


def fetch_trace(name: str, *, cache_dir: str | Path | None = None, force: bool = False,
                verify: bool = True, partition: int | None = None) -> Path:
    """Download a trace of the catalogue (once) and return the path of its SWF file.

    Parameters
    ----------
    name : a trace name of :data:`TRACES` (or its archive file name).
    cache_dir : where to keep it; :func:`default_cache_dir` by default.
    force : download (and derive) again even if the file is cached.
    verify : check the known size and SHA-256.
    partition : for MetaCentrum2-zegox, the SWF partition to keep (default: found in
        the header, else :data:`ZEGOX_PARTITION`).
    """
    trace = find_trace(name)
    directory = Path(cache_dir).expanduser() if cache_dir else default_cache_dir()
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise WorkloadError(f"{directory}: cannot create the cache directory ({exc.strerror})") from None
    archive_file = directory / trace.file
    if force or not archive_file.exists():
        _download(trace, archive_file, verify)
    elif verify:
        _check(trace, archive_file, *_digest(archive_file))
    if trace.subset is None:
        return archive_file
    derived = directory / trace.local_file
    if force or partition is not None or not derived.exists():
        derive_zegox(archive_file, derived, partition=partition)
    return derived


def derive_zegox(source: Path, target: Path, *, partition: int | None = None) -> tuple[int, int]:
    """Keep the zegox jobs of METACENTRUM-2013-3 in ``target``; return (partition, jobs)."""
    header = read_header(source)
    if partition is None:
        partition = zegox_partition(header)
    trace = read_swf(source, where=lambda chunk: chunk["partition"] == partition)
    if trace.jobs.empty:
        raise WorkloadError(f"{source}: no job in partition {partition} (zegox); "
                            "pass the right partition number")
    header = {**trace.header, "MaxNodes": 48, "MaxProcs": 576,
              "Note": [*trace.header.get("Note", []),
                       f"Subset: the zegox cluster, i.e. the jobs of partition {partition} "
                       f"of {source.name}; derived by batsim-classifier-scheduler"]}
    part = target.with_name("partial-" + target.name)  # keeps the .gz suffix: compressed
    write_swf(part, trace.jobs, header)
    os.replace(part, target)
    return partition, len(trace.jobs)


def zegox_partition(header: dict) -> int:
    """The partition number of a header entry naming zegox, else :data:`ZEGOX_PARTITION`."""
    for values in header.values():
        for value in values if isinstance(values, list) else [values]:
            text = str(value)
            if "zegox" in text.lower():
                number = re.search(r"\b\d+\b", text)
                if number:
                    return int(number.group())
    return ZEGOX_PARTITION


def _download(trace: Trace, target: Path, verify: bool) -> None:
    import urllib.error  # (here: with http.client and email, about 30 ms of every command's start-up)
    import urllib.request

    part = target.with_name(target.name + ".part")
    try:
        with urllib.request.urlopen(trace.url, timeout=60) as response, open(part, "wb") as out:
            size, sha256 = stream_sha256(response, out.write)  # hashed as it is written
    except (urllib.error.URLError, OSError) as exc:
        part.unlink(missing_ok=True)
        reason = getattr(exc, "reason", None) or exc
        raise WorkloadError(f"{trace.url}: download failed ({reason})") from None
    if verify:
        try:
            _check(trace, part, size, sha256)
        except WorkloadError:
            part.unlink(missing_ok=True)
            raise
    os.replace(part, target)


def _digest(path: Path) -> tuple[int, str]:
    with open(path, "rb") as data:
        return stream_sha256(data)


def _check(trace: Trace, path: Path, size: int, sha256: str) -> None:
    if trace.size is not None and size != trace.size:
        raise WorkloadError(f"{path}: {size} bytes, expected {trace.size} for {trace.name} "
                            "(incomplete or changed download; retry with --force, or --no-verify)")
    if trace.sha256 is not None and sha256 != trace.sha256:
        raise WorkloadError(f"{path}: SHA-256 {sha256} differs from the expected {trace.sha256} "
                            f"for {trace.name} (retry with --force, or --no-verify)")
