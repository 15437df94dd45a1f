"""How a run's scheduler is named: a sweep's queue-order label (the algorithm, when it is not EASY, then the
order) and its display in tables and figures (``EASY-FCFS``, ``CONSERVATIVE-SPF``)."""

from __future__ import annotations

from pathlib import Path

#: The algorithm every label means when it names none.
DEFAULT_ALGORITHM = "easy"
#: Display names of the built-in algorithms.
ALGORITHM_NAMES = {"easy": "EASY", "easy_bf_fast": "EASY-FAST", "conservative_bf": "CONSERVATIVE", "fcfs": "STRICT",
                   "filler": "FILLER"}


def policy_label(algorithm: str, policy: str) -> str:
    """A run's queue-order label: ``policy`` under EASY, else ``"<algorithm> <policy>"``."""
    return policy if algorithm == DEFAULT_ALGORITHM else f"{algorithm} {policy}"


def split_label(label: str) -> tuple[str, str]:
    """``(algorithm, policy)`` of a label made by :func:`policy_label`."""
    algorithm, _, policy = label.rpartition(" ")
    return algorithm or DEFAULT_ALGORITHM, policy


def scheduler_name(label: str) -> str:
    """What tables and figures call the scheduler of a label: ``EASY-FCFS``, ``CONSERVATIVE-SPF``..."""
    algorithm, policy = split_label(label)
    name = ALGORITHM_NAMES.get(algorithm) or Path(algorithm.rpartition(":")[2] or algorithm).stem.upper()
    return f"{name}-{policy.upper()}"
