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

Every job of Q, one lane per user (``queue-user``, classification-guaranteed): every job waiting in Q, first
attempts and retries alike, becomes overdue once its wait reaches ``longest``, here counted over the first attempts
started *unpromoted* (so that promotions never raise the bound they are held to); each user's overdue jobs move one
at a time, the next once the one moved before it has *ended*, so that a burst of one user's jobs takes one lane of
the machine, not all of it. A user's k-th overdue job waits at most ``longest`` (or its wait when it entered Q), plus
the k - 1 moved before it, each from its promotion to its end, plus EASY's bound for itself and each overdue job
started before it from its promotion. ``tests/test_admission.py`` checks it in-process.
"""

from __future__ import annotations

import heapq
from typing import Callable, Hashable

#: The queue rank of overdue jobs: ahead of every queue (Q_small is 0, the uncertain jobs 1, Q 2); they go oldest
#: first, whatever the policy.
OVERDUE_RANK = -1
#: Which waiting jobs of Q may become overdue: none, the safeguard's retries, or every job of Q; killed-planned: the
#: safeguard's retries, as soon as their earliest start planned now would make them wait past ``longest``;
#: killed-one: the safeguard's retries, one at a time (the oldest due one, once the previous one has started);
#: queue-user: every job of Q, one at a time per user (a user's oldest due one, once that user's previous one has
#: ended), ``longest`` counting only the first attempts started unpromoted; queue-user-ahead: the same, and the waiting
#: jobs older than a job due and ahead of it in the queues' order are due with it (a move overtakes no older job).
OVERDUE_SCOPES = ("none", "killed", "killed-one", "killed-planned", "queue", "queue-user", "queue-user-ahead")


class Overdue:
    """The longest first-attempt wait so far, and the watched waiting jobs that will be overdue past it."""

    def __init__(self) -> None:
        #: The longest wait of any job started so far on its first attempt (seconds).
        self.longest = 0.0
        self._watched: list[tuple[float, str]] = []  # (submission, job id), oldest first
        self._watching: set[str] = set()  # the ids in _watched
        #: one_at_a_time: per lane, the jobs due and not promoted yet (submission, job id), and the job promoted last
        self._due: dict[Hashable, list[tuple[float, str]]] = {}
        self._current: dict[Hashable, str] = {}

    def started(self, wait: float) -> None:
        """A job started on its first attempt after waiting ``wait`` seconds."""
        if wait > self.longest:
            self.longest = wait

    def watch(self, job_id: str, submission: float) -> None:
        """A waiting job becomes overdue once ``longest`` seconds have passed since ``submission`` (a job already
        watched stays watched once)."""
        if job_id not in self._watching:
            self._watching.add(job_id)
            heapq.heappush(self._watched, (submission, job_id))

    def due(self, now: float, waiting: Callable[[str], bool],
            planned_start: Callable[[str], float] | None = None) -> list[str]:
        """The watched jobs overdue at ``now``, oldest first (they are no longer watched): those that have waited
        ``longest``, and with ``planned_start`` those whose planned start would make them wait longer. Jobs no
        longer ``waiting`` are forgotten."""
        overdue = []
        watched = self._watched
        while watched and now - watched[0][0] >= self.longest:
            _, job_id = heapq.heappop(watched)
            self._watching.discard(job_id)
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
            self._watching = {job_id for _, job_id in keep}
        return overdue

    def one_at_a_time(self, due: list[str], submission: Callable[[str], float], waiting: Callable[[str], bool],
                      holds: Callable[[str], bool] | None = None,
                      lane: Callable[[str], Hashable] = lambda job_id: None) -> list[str]:
        """Of the ``due`` jobs and those due before, the ones to promote now, oldest first: per ``lane`` (one for
        all by default), the oldest still ``waiting``, once the job promoted last in that lane no longer ``holds``
        it (by default: once it no longer waits, it started)."""
        holds = holds or waiting
        for job_id in due:
            heapq.heappush(self._due.setdefault(lane(job_id), []), (submission(job_id), job_id))
        promoted = []
        for key, queue in list(self._due.items()):
            current = self._current.get(key)
            if current is not None and holds(current):
                continue
            self._current.pop(key, None)
            while queue:
                when, job_id = heapq.heappop(queue)
                if waiting(job_id):
                    self._current[key] = job_id
                    promoted.append((when, job_id))
                    break
            if not queue:
                del self._due[key]
        return [job_id for _, job_id in sorted(promoted)]

    def next_due(self) -> float | None:
        """When the oldest watched job will be overdue if ``longest`` does not grow (None: none watched)."""
        return self._watched[0][0] + self.longest if self._watched else None
