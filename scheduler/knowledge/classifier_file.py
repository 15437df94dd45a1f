"""The saved classifier's file format: a magic line, a JSON header, an ``.npz`` payload read without pickle.

The header names the format and its version and gives the SHA-256 and size of the payload, so that a
truncated, corrupted or foreign file is refused with a clear message before anything is read from it.
The payload holds named numpy arrays and one JSON state object (stored as the bytes of ``state_json``).
"""

from __future__ import annotations

import hashlib
import io
import json
from pathlib import Path
from typing import Any

import numpy as np

from scheduler.errors import ConfigError
from scheduler.outputs import atomic_open

FORMAT_NAME = "scheduler.knowledge.JobClassifier"
FORMAT_VERSION = 3
MAGIC = b"BATSIM-CLASSIFIER-SCHEDULER JobClassifier\n"


class ClassifierError(ConfigError):
    """A classifier is misused (time going backwards) or its saved file is unusable."""


def write_classifier_file(path: str | Path, state: dict[str, Any], arrays: dict[str, np.ndarray]) -> Path:
    """Write ``state`` (JSON-safe) and ``arrays`` to ``path`` (atomically)."""
    path = Path(path)
    buffer = io.BytesIO()
    state_json = np.frombuffer(json.dumps(state).encode(), dtype=np.uint8)
    np.savez_compressed(buffer, **arrays, state_json=state_json)
    payload = buffer.getvalue()
    header = {"format": FORMAT_NAME, "format_version": FORMAT_VERSION,
              "sha256": hashlib.sha256(payload).hexdigest(), "payload_bytes": len(payload)}
    with atomic_open(path, "wb") as out:
        out.write(MAGIC)
        out.write(json.dumps(header).encode() + b"\n")
        out.write(payload)
    return path


def read_classifier_file(path: str | Path) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """The state and arrays :func:`write_classifier_file` wrote; :class:`ClassifierError` naming the file
    if it cannot be read, is not a classifier file, has another format version or a wrong checksum."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ClassifierError(f"{path}: cannot read the classifier file ({exc.strerror})") from None
    if not data.startswith(MAGIC):
        raise ClassifierError(f"{path}: not a saved JobClassifier (bad magic line)")
    end = data.find(b"\n", len(MAGIC))
    try:
        header = json.loads(data[len(MAGIC):end])
        version = header["format_version"]
        digest, size = header["sha256"], header["payload_bytes"]
    except (ValueError, KeyError, TypeError):
        raise ClassifierError(f"{path}: corrupt classifier file (unreadable header)") from None
    if header.get("format") != FORMAT_NAME or version != FORMAT_VERSION:
        raise ClassifierError(f"{path}: classifier format {header.get('format')!r} version {version!r}; "
                              f"this version reads {FORMAT_NAME!r} version {FORMAT_VERSION}")
    payload = data[end + 1:]
    if len(payload) != size or hashlib.sha256(payload).hexdigest() != digest:
        raise ClassifierError(f"{path}: corrupt classifier file (checksum mismatch)")
    try:
        with np.load(io.BytesIO(payload), allow_pickle=False) as npz:
            arrays = {name: npz[name] for name in npz.files}
        state = json.loads(arrays.pop("state_json").tobytes().decode())
    except Exception as exc:  # a payload that passed the checksum but is no npz of ours
        raise ClassifierError(f"{path}: corrupt classifier file ({type(exc).__name__}: {exc})") from None
    return state, arrays
