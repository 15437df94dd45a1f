"""A classifier saved and loaded: its state in a file of a magic line, a JSON header and an ``.npz`` payload.

:func:`save_classifier` writes the configuration (the estimator as its class and parameters), the packed
model, the job table, the completion log and the reports; :func:`load_classifier` reads them back, without
pickle (so only forests can be saved).

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

from batsim_classifier_scheduler.errors import ConfigError
from batsim_classifier_scheduler.knowledge.features import CategoryCodes, CompletionLog
from batsim_classifier_scheduler.knowledge.forest import PackedForest
from batsim_classifier_scheduler.knowledge.classified_jobs import JobTable
from batsim_classifier_scheduler.knowledge.learner import describe, from_description
from batsim_classifier_scheduler.util.output_files import atomic_open

FORMAT_NAME = "batsim_classifier_scheduler.knowledge.JobClassifier"
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


def save_classifier(clf, path: str | Path) -> Path:
    """Write ``clf`` (a :class:`JobClassifier`: config, model, history, reports) to ``path``."""
    config = clf.get_config()
    if clf.estimator is not None:
        config["estimator"] = describe(clf.estimator)  # raises unless it is a forest
    arrays = {f"table_{name}": values for name, values in clf._jobs.to_arrays().items()}
    if clf._log is not None:
        arrays |= {f"log_{name}": values for name, values in clf._log.to_arrays().items()}
        for c, codes in enumerate(clf._codes):
            arrays[f"codes_users_{c}"], arrays[f"codes_traits_{c}"] = codes.to_arrays()
        if clf._snapshot is not None:
            for c, (last, nsmall) in enumerate(zip(*clf._snapshot)):
                arrays[f"snapshot_last_{c}"] = np.array(last, dtype=np.int64)
                arrays[f"snapshot_nsmall_{c}"] = np.array(nsmall, dtype=np.int64)
    if clf._model is not None:
        arrays |= {f"model_{name}": values for name, values in clf._model.to_arrays().items()}
    arrays["importances"] = np.array([v for _, v in clf._importances], dtype=np.float64).reshape(
        -1, len(clf.feature_names))
    state = {
        "config": config, "feature_names": clf.feature_names, "now": clf._now, "current_week": clf._current_week,
        "current_divider": clf._current_divider, "run": clf._run,
        "completions": clf._completions, "fit_key": list(clf._fit_key) if clf._fit_key else None,
        "model_depth": clf._model.depth if clf._model is not None else None,
        "importances_weeks": [w for w, _ in clf._importances],
        "importances_current": clf._importances_current,
        "weeks": clf._weeks, "users": clf._encoder.user_values,
    }
    return write_classifier_file(path, state, arrays)


def load_classifier(cls, path: str | Path):
    """The ``cls`` (:class:`JobClassifier`) :func:`save_classifier` wrote to ``path``; :class:`ClassifierError`
    on a version mismatch, a checksum mismatch or a corrupt file."""
    state, arrays = read_classifier_file(path)
    try:
        return _from_state(cls, state, arrays)
    except ClassifierError:
        raise
    except Exception as exc:  # a payload that passed the checksum but does not fit
        raise ClassifierError(f"{path}: corrupt classifier file ({type(exc).__name__}: {exc})") from None


def _from_state(cls, state: dict, arrays: dict[str, np.ndarray]):
    """A ``cls`` (:class:`JobClassifier`) in the saved ``state``."""
    config = dict(state["config"])
    config["categories"] = tuple(config["categories"])
    if config["estimator"] is not None:
        config["estimator"] = from_description(config["estimator"])
    clf = cls(**config)
    if state["feature_names"] != clf.feature_names:
        raise ClassifierError("saved feature names differ from this version's")
    clf._run = int(state["run"])
    clf._completions = int(state["completions"])
    clf._now = float(state["now"])
    clf._current_week = int(state["current_week"])
    clf._current_divider = float(state["current_divider"])
    table = {name[len("table_"):]: values for name, values in arrays.items() if name.startswith("table_")}
    clf._jobs = JobTable.from_arrays(table, clf._jobs.k, clf._jobs.f, clf._run)
    if clf._log is not None:
        k = len(clf.categories)
        log = {name[len("log_"):]: values for name, values in arrays.items() if name.startswith("log_")}
        clf._log = CompletionLog.from_arrays(log, k, clf._current_divider)
        clf._codes = [CategoryCodes.from_arrays(arrays[f"codes_users_{c}"], arrays[f"codes_traits_{c}"])
                       for c in range(k)]
        if clf.features == "paper":
            clf._snapshot = ([arrays[f"snapshot_last_{c}"].tolist() for c in range(k)],
                              [arrays[f"snapshot_nsmall_{c}"].tolist() for c in range(k)])
    clf._encoder.user_values = list(state["users"])
    clf._encoder.users = {value: i for i, value in enumerate(clf._encoder.user_values)}
    clf._fit_key = tuple(state["fit_key"]) if state["fit_key"] is not None else None
    if "model_roots" in arrays:
        clf._model = PackedForest(*(arrays[f"model_{name}"] for name in PackedForest.ARRAYS),
                                   depth=state["model_depth"])
    clf._importances = list(zip(state["importances_weeks"], arrays["importances"].tolist()))
    clf._importances_current = state["importances_current"]
    clf._weeks = state["weeks"]
    return clf
