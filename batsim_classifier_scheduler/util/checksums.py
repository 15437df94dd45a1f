"""SHA-256 digests: of files (inputs of a run, downloads) and of JSON-able data (configuration hashes).

The digests are CPython's own SHA-256 (the module ``hashlib`` falls back on, as :mod:`random` uses its SHA-512),
imported at the first digest: ``hashlib`` loads OpenSSL's library, 3.5 MiB of a process's memory for a few
megabytes hashed (a simulation's summary: its input files).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, BinaryIO, Callable


def _sha256() -> Any:
    """A new SHA-256 digest, from CPython's own module (``_sha2`` from Python 3.12, ``_sha256`` before) when it is
    there, else hashlib's."""
    try:
        from _sha2 import sha256  # type: ignore[import-not-found]
    except ImportError:
        try:
            from _sha256 import sha256  # type: ignore[import-not-found,no-redef]
        except ImportError:
            from hashlib import sha256  # type: ignore[assignment]
    return sha256()


def stream_sha256(stream: BinaryIO, sink: Callable[[bytes], Any] | None = None) -> tuple[int, str]:
    """``(size in bytes, hex digest)`` of what is left to read in ``stream``; each block also goes to
    ``sink`` (e.g. a file's ``write``) when one is given."""
    digest = _sha256()
    size = 0
    while block := stream.read(1 << 20):
        digest.update(block)
        size += len(block)
        if sink is not None:
            sink(block)
    return size, digest.hexdigest()


def file_sha256(path: str | Path) -> str:
    """The hex SHA-256 of a file's content."""
    with open(path, "rb") as stream:
        return stream_sha256(stream)[1]


def data_hash(data: Any, length: int = 16) -> str:
    """A short hex SHA-256 of JSON-able ``data`` (keys sorted; other values by ``str``)."""
    digest = _sha256()
    digest.update(json.dumps(data, sort_keys=True, default=str).encode())
    return digest.hexdigest()[:length]
