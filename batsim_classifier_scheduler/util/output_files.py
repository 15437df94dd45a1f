"""Where results go: output locations checked before any work starts, and files written atomically.

Every command that writes checks each location first (:func:`check_output`), so that a run never ends, after
all its work, on a folder that cannot be written. Files are written under a temporary name beside their target
and then renamed (:func:`atomic_open`): a failure or an interruption leaves the previous file or none, never
half of one that a resumed sweep would take as done.
"""

from __future__ import annotations

import contextlib
import gzip
import os
import uuid
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO

from batsim_classifier_scheduler.errors import OutputError, UsageError


def check_output(path: str | Path, option: str) -> Path:
    """``path`` if a file can be written there (its folder exists and is writable, or can be made);
    otherwise an :class:`OutputError` naming ``option`` and the reason."""
    path = Path(path)
    where = f"{option} {path}"
    if path.is_dir():
        raise OutputError(f"{where}: is a folder, not a file")
    if path.exists() and not os.access(path, os.W_OK):
        raise OutputError(f"{where}: the file is not writable")
    folder = path.parent
    while not folder.exists() and folder != folder.parent:  # the nearest folder that exists
        if folder.is_symlink():
            raise OutputError(f"{where}: {folder} is a broken link")
        folder = folder.parent
    if not folder.is_dir():
        raise OutputError(f"{where}: {folder} is not a folder")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise OutputError(f"{where}: cannot write in {folder}")
    return path


def check_outputs(paths: Iterable[str | Path], option: str) -> None:
    """:func:`check_output` of each path."""
    for path in paths:
        check_output(path, option)


def check_distinct(outputs: Iterable[tuple[str, str | Path]], inputs: Iterable[tuple[str, str | Path]]) -> None:
    """Refuse (:class:`UsageError`) an output that is one of the command's inputs, or another of its outputs:
    ``outputs`` and ``inputs`` are ``(option, path)`` pairs (``option``: how the command line named it). Paths
    are compared resolved (links and ``..`` followed), and by file identity when both exist (a hard link)."""
    seen: list[tuple[str, Path]] = [(option, Path(path)) for option, path in inputs if path]
    for option, path in outputs:
        if not path:
            continue
        path = Path(path)
        for other_option, other in seen:
            if _same_file(path, other):
                raise UsageError(f"{option} {path}: it is {other_option} {other} too; writing it would overwrite "
                                 "it: choose another file")
        seen.append((option, path))


def _same_file(a: Path, b: Path) -> bool:
    try:
        if a.exists() and b.exists():
            return os.path.samefile(a, b)
    except OSError:
        pass
    return a.resolve() == b.resolve()


def prefixed(prefix: str | Path, suffix: str) -> Path:
    """The file ``PREFIX + suffix``, as Batsim names its outputs: ``-e out/`` puts ``_jobs.csv`` inside
    ``out/`` (a string prefix: a trailing separator is kept)."""
    return Path(f"{os.fspath(prefix)}{suffix}")


@contextlib.contextmanager
def atomic_open(path: str | Path, mode: str = "w", **options) -> Iterator[IO]:
    """Open a temporary file beside ``path`` and rename it to ``path`` once written; on any failure the temporary
    file is removed. ``mode`` is ``"w"`` (text, gzip-compressed when ``path`` ends in ``.gz``) or ``"wb"``;
    ``options`` go to :func:`open` (``encoding``, ``newline``). An :class:`OSError` becomes an
    :class:`OutputError` naming the file."""
    path = Path(path)
    partial = path.with_name(f".{path.name}.{uuid.uuid4().hex[:12]}.part")
    if "b" not in mode:
        options.setdefault("encoding", "utf-8")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        compress = "b" not in mode and path.name.endswith(".gz")
        with (gzip.open(partial, "wt", **options) if compress else open(partial, mode, **options)) as stream:
            yield stream
        os.replace(partial, path)
    except OSError as exc:
        partial.unlink(missing_ok=True)
        raise OutputError(f"{path}: cannot write ({exc.strerror or exc})") from None
    except BaseException:
        partial.unlink(missing_ok=True)
        raise


def write_text(path: str | Path, text: str, newline: str | None = None) -> Path:
    """Write ``text`` to ``path`` atomically (gzip-compressed when the name ends in ``.gz``)."""
    with atomic_open(path, "w", newline=newline) as stream:
        stream.write(text)
    return Path(path)


def write_bytes(path: str | Path, data: bytes) -> Path:
    """Write ``data`` to ``path`` atomically."""
    with atomic_open(path, "wb") as stream:
        stream.write(data)
    return Path(path)
