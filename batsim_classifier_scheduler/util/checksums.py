"""SHA-256 digests: of files (inputs of a run, downloads) and of JSON-able data (configuration hashes).

``hashlib`` is imported at the first digest: it loads OpenSSL's library, about 4 MiB of a process's memory,
which a simulation then adds only once its summary is made (after its peak), not from its start.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, BinaryIO, Callable


def stream_sha256(stream: BinaryIO, sink: Callable[[bytes], Any] | None = None) -> tuple[int, str]:
    """``(size in bytes, hex digest)`` of what is left to read in ``stream``; each block also goes to
    ``sink`` (e.g. a file's ``write``) when one is given."""
    import hashlib

    digest = hashlib.sha256()
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
    import hashlib

    text = json.dumps(data, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:length]
