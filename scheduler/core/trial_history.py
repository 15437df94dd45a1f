"""Whether trials pay for a user: the outcomes of their last uncertain jobs, observed online.

An uncertain job's trial *failed* if the safeguard killed it (its processors were held for nothing, and the job waits
again); it *paid* otherwise (the job ended within it, or was spared and ran on as a backfilled job would). A job
given no trial is judged once it ends, so that a user whose jobs are given no trial can earn trials back: by whether
it ran within the trial it would have had (user-history, request-history), or as paid (user-pause). Outcomes are
recorded when the scheduler sees them (a kill or a completion), never from a job's runtime before it ends.
"""

from __future__ import annotations

from collections import deque
from typing import Hashable


class TrialHistory:
    """The last ``depth`` outcomes of the uncertain jobs of each key (a user, or a user and a request)."""

    def __init__(self, depth: int) -> None:
        self.depth = depth
        self._outcomes: dict[Hashable, deque[bool]] = {}

    def record(self, key: Hashable, paid: bool) -> None:
        """An uncertain job of ``key`` ended: whether its trial paid (or would have)."""
        self._outcomes.setdefault(key, deque(maxlen=self.depth)).append(paid)

    def failing(self, key: Hashable) -> bool:
        """Whether the last ``depth`` trials of ``key`` all failed (fewer than ``depth`` known: no)."""
        outcomes = self._outcomes.get(key)
        return outcomes is not None and len(outcomes) == self.depth and not any(outcomes)
