"""Small builders shared by the tests."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pandas as pd

from batsim_classifier_scheduler.workloads.model import Workload

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
DATA = Path(__file__).resolve().parent / "data"
#: The presets that led to our variant (``--variant FILE.json:NAME``).
PRESETS = REPO / "experiments" / "presets" / "variants.json"


def preset(name: str) -> str:
    """The ``--variant`` of a preset of ``experiments/presets/variants.json`` (classification-probing, -bounded, ...)."""
    return f"{PRESETS}:{name}"


def named(name: str) -> str:
    """The ``--variant`` of a variant or of a preset, by name."""
    return preset(name) if name in json.loads(PRESETS.read_text()) else name


def shared(relative: str) -> Path:
    """A file of the team's shared data beside the checkout; skips the test when it is absent."""
    import pytest

    path = SHARED / relative
    if not path.exists():
        pytest.skip(f"{path} not available")
    return path


def make_workload(jobs: list[tuple], nb_res: int, **extras: list) -> Workload:
    """A workload from ``(subtime, res, walltime, runtime)`` tuples; ids are 0, 1, 2..."""
    table = pd.DataFrame(
        {
            "id": [str(i) for i in range(len(jobs))],
            "subtime": [float(j[0]) for j in jobs],
            "res": [int(j[1]) for j in jobs],
            "walltime": [float(j[2]) for j in jobs],
            "runtime": [float(j[3]) for j in jobs],
            "profile": [f"delay_{j[3]:g}" for j in jobs],
            **extras,
        }
    )
    return Workload(table, nb_res)


_ENDPOINTS = itertools.count()


def serve_in_process(messages: list[bytes], options: dict) -> tuple[list, Exception | None]:
    """``serve``'s own message loop fed ``messages`` (queued up front) over an in-process socket: the
    replies, and the :class:`~batsim_classifier_scheduler.errors.SchedulerError` it stopped on, if any (none: the run ended
    with SIMULATION_ENDS). The short timeout ends a stream whose messages ran out."""
    import zmq

    from batsim_classifier_scheduler.batsim.server import DecisionServer
    from batsim_classifier_scheduler.errors import SchedulerError

    context = zmq.Context.instance()
    server, batsim = context.socket(zmq.REP), context.socket(zmq.DEALER)
    for sock in (server, batsim):
        sock.setsockopt(zmq.LINGER, 0)
        sock.setsockopt(zmq.SNDHWM, 0)
        sock.setsockopt(zmq.RCVHWM, 0)
    endpoint = f"inproc://serve-in-process-{next(_ENDPOINTS)}"
    server.bind(endpoint)
    batsim.connect(endpoint)
    try:
        for message in messages:
            batsim.send_multipart([b"", message])
        error = None
        try:
            DecisionServer(options=options, timeout=0.01).serve(server)
        except SchedulerError as exc:
            error = exc
        replies = []
        while batsim.poll(0):
            replies.append(batsim.recv_multipart()[1])
        return replies, error
    finally:
        server.close()
        batsim.close()


def comparison_table(out: str) -> tuple[list[str], dict[str, list[str]]]:
    """The variants and the rows (by label, stripped; one value per variant) of ``simulate``'s comparison in
    ``out``, its blocks of columns joined. A column's name and values end at the same position (right-aligned);
    a block's name lines start with blanks under the labels, and a blank line ends the block."""
    import re

    lines, names, rows, i = out.splitlines(), [], {}, 0
    while i < len(lines):
        if not lines[i].startswith(" " * 6) or not lines[i].strip():
            i += 1
            continue
        header = []
        while lines[i].startswith(" " * 6):
            header.append(lines[i])
            i += 1
        ends = [match.end() for match in re.finditer(r"\S+", header[-1])]
        names += ["".join(line[:end].rsplit(None, 1)[-1] if len(line) >= end and line[end - 1] != " " else ""
                          for line in header) for end in ends]
        while i < len(lines) and lines[i].strip():
            line = lines[i].ljust(ends[-1])
            first = re.split(r" {2,}", line[:ends[0]].strip())[-1]
            label = line[:ends[0]].strip().removesuffix(first)
            values = [first] + [line[start:end].strip() for start, end in zip(ends, ends[1:])]
            rows.setdefault(label.strip(), []).extend(values)
            i += 1
    return names, rows


def lowest_by_bits(mask: int, count: int) -> int:
    """The ``count`` lowest set bits of ``mask``, one at a time: the definition the machine sets are tested against."""
    chosen = 0
    for _ in range(count):
        low_bit = mask & -mask
        chosen |= low_bit
        mask ^= low_bit
    return chosen
