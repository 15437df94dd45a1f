"""No starvation past the worst wait seen: a job whose total wait reaches the longest wait of any first attempt
started so far becomes *overdue* and moves ahead of every queue, oldest first.

The bound is what the scheduler observes online, never a constant: ``longest`` is the longest wait (start minus
submission) of any job started so far on its first attempt, that is the worst wait the policy has imposed on a job
the safeguard had not killed. A watched job (a retry after a kill, whose submission is the original's) becomes
overdue at the first decision at which its total wait is at least ``longest``. Overdue jobs go first, oldest first;
under EASY the first of them holds the reservation, and with no slack for it (the decision core kills any trial in
its way) it starts once the running jobs have ended by their requests at the latest. So a retry started at ``start``
after its promotion at ``promoted`` waited in all at most::

    promoted - submission + sum over the overdue jobs started from ``promoted`` to it, itself included, of the
    longest remaining request among the jobs running when each became the first waiting job

where ``promoted - submission`` is ``longest`` at ``promoted``, or the kill's time minus the submission when the
retry was already that late. ``tests/test_overdue.py`` checks it in-process.
"""

from __future__ import annotations

import heapq
import math
from typing import Callable

#: The queue rank of overdue jobs, by what they go ahead of: every queue (Q_small is 0, the uncertain jobs 1, Q 2),
#: or the uncertain jobs and Q only (behind Q_small).
OVERDUE_RANKS = {"all": -1, "uncertain": 0.5}
#: What overdue jobs may go ahead of.
OVERDUE_AHEAD_OF = tuple(OVERDUE_RANKS)
#: The overdue ranks: their jobs go oldest first, whatever the policy.
OVERDUE_RANK_SET = frozenset(OVERDUE_RANKS.values())
#: Which waiting jobs of Q may become overdue: none, the safeguard's retries, or every job of Q; killed-planned: the
#: safeguard's retries, as soon as their earliest start planned now would make them wait past ``longest``;
#: killed-one: the safeguard's retries, one at a time (the oldest due one, once the previous one has started).
OVERDUE_SCOPES = ("none", "killed", "killed-one", "killed-planned", "queue")
#: What a job's total wait is bounded by (``overdue_bound``): the longest wait of any first attempt started so far
#: (longest-started), or of any first attempt, started or still waiting (longest-any: a watched job is overdue only
#: once it has waited as long as the longest-started AND no first attempt still waiting was submitted before it).
OVERDUE_BOUNDS = ("longest-started", "longest-any")


class Overdue:
    """The longest first-attempt wait so far, and the watched waiting jobs that will be overdue past it."""

    def __init__(self, waiting_first: bool = False, factor: float = 1.0) -> None:
        #: The longest wait of any job started so far on its first attempt (seconds).
        self.longest = 0.0
        #: overdue_after (issue 48): a watched job is overdue once it has waited ``factor`` x ``longest``.
        self.factor = factor
        #: longest-any (issue 48): the first attempts still waiting count too (their submissions, oldest first).
        self.waiting_first = waiting_first
        self._first: list[tuple[float, str]] = []  # (submission, job id) of first attempts, lazily pruned
        self._first_started: set[str] = set()
        self._watched: list[tuple[float, str]] = []  # (submission, job id), oldest first
        self._due: list[tuple[float, str]] = []  # one_at_a_time: due, not promoted yet (submission, job id)
        self._current: str | None = None  # one_at_a_time: the overdue job promoted last

    def started(self, wait: float, job_id: str | None = None) -> None:
        """A job started on its first attempt after waiting ``wait`` seconds."""
        if wait > self.longest:
            self.longest = wait
        if self.waiting_first and job_id is not None:
            self._first_started.add(job_id)

    def submitted(self, job_id: str, submission: float) -> None:
        """longest-any: a first attempt submitted at ``submission`` waits (until :meth:`started`)."""
        if self.waiting_first:
            heapq.heappush(self._first, (submission, job_id))

    def _oldest_waiting_first(self) -> float:
        """longest-any: the submission of the oldest first attempt still waiting (inf: none, or not counted)."""
        first = self._first
        while first and first[0][1] in self._first_started:
            self._first_started.discard(heapq.heappop(first)[1])
        return first[0][0] if first else math.inf

    def _is_due(self, now: float, submission: float) -> bool:
        """Whether a watched job submitted at ``submission`` has waited the bound at ``now``: ``longest``, and with
        longest-any, as long as every first attempt still waiting (none was submitted before it)."""
        if now - submission < self.factor * self.longest:
            return False
        return not self.waiting_first or submission <= self._oldest_waiting_first()

    def watch(self, job_id: str, submission: float) -> None:
        """A waiting job becomes overdue once ``longest`` seconds have passed since ``submission``."""
        heapq.heappush(self._watched, (submission, job_id))

    def due(self, now: float, waiting: Callable[[str], bool],
            planned_start: Callable[[str], float] | None = None) -> list[str]:
        """The watched jobs overdue at ``now``, oldest first (they are no longer watched): those that have waited
        ``longest``, and with ``planned_start`` those whose planned start would make them wait longer. Jobs no
        longer ``waiting`` are forgotten."""
        overdue = []
        watched = self._watched
        while watched and self._is_due(now, watched[0][0]):
            _, job_id = heapq.heappop(watched)
            if waiting(job_id):
                overdue.append(job_id)
        if planned_start is not None and watched:
            keep = []
            for submission, job_id in watched:
                if not waiting(job_id):
                    continue
                if planned_start(job_id) - submission >= self.longest:
                    overdue.append(job_id)
                else:
                    keep.append((submission, job_id))
            heapq.heapify(keep)
            self._watched = keep
        return overdue

    def one_at_a_time(self, due: list[str], submission: Callable[[str], float],
                      waiting: Callable[[str], bool]) -> list[str]:
        """Of the ``due`` jobs and those due before, the one to promote now, if any: the oldest still ``waiting``,
        once the job promoted last is no longer waiting (it started)."""
        for job_id in due:
            heapq.heappush(self._due, (submission(job_id), job_id))
        if self._current is not None and waiting(self._current):
            return []
        self._current = None
        while self._due:
            _, job_id = heapq.heappop(self._due)
            if waiting(job_id):
                self._current = job_id
                return [job_id]
        return []

    def next_due(self) -> float | None:
        """When the oldest watched job will be overdue if ``longest`` does not grow (None: none watched; longest-any:
        none, while a first attempt submitted before it waits: it will be due, if ever, at a start, a decision)."""
        if not self._watched:
            return None
        if self.waiting_first and self._watched[0][0] > self._oldest_waiting_first():
            return None
        return self._watched[0][0] + self.factor * self.longest
