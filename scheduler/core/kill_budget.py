"""The safeguard's budgets: a guarantee on what its kills cost, stated in what the scheduler observes online.

A kill is allowed only if, with it, the jobs killed are at most ``jobs`` x the jobs submitted, and the work lost to
kills (each killed attempt's processors x the time it ran) at most ``work`` x the work of the jobs completed. Both
sides are counted over the last ``window`` seconds, or over the whole run (``window`` None). A kill the budget refuses
does not happen: the job runs on (the decision core spares it), and while the jobs' budget is spent no new trial is
given. Without a window, a run then kills at most ``jobs`` of its jobs and loses at most ``work`` of its useful work,
whatever the trace: the bound holds at every moment, so at the end. With a window, the bound holds within every
window instead (a burst of kills cannot spend what quiet weeks saved).
"""

from __future__ import annotations

from collections import deque


class _Sum:
    """A sum of amounts over the last ``window`` seconds (None: since the start)."""

    def __init__(self, window: float | None) -> None:
        self.window = window
        self.total = 0.0
        self._items: deque[tuple[float, float]] = deque()

    def add(self, now: float, amount: float) -> None:
        self.total += amount
        if self.window is not None:
            self._items.append((now, amount))

    def at(self, now: float) -> float:
        """The sum of the amounts added within the window ending at ``now``."""
        if self.window is None:
            return self.total
        items = self._items
        while items and items[0][0] <= now - self.window:
            self.total -= items.popleft()[1]
        if not items:
            self.total = 0.0  # no rounding left over once the window is empty
        return self.total


class KillBudget:
    """How many kills, and how much lost work, the safeguard may still afford (see the module)."""

    def __init__(self, jobs: float | None = None, work: float | None = None, window: float | None = None) -> None:
        self.jobs, self.work = jobs, work
        self._submitted, self._killed = _Sum(window), _Sum(window)
        self._useful, self._lost = _Sum(window), _Sum(window)
        self.refused = 0

    def submitted(self, now: float) -> None:
        """A job was submitted (a first attempt: a retry after a kill is the same job)."""
        self._submitted.add(now, 1.0)

    def completed(self, now: float, work: float) -> None:
        """A job completed (not killed), having done ``work`` (processors x seconds)."""
        self._useful.add(now, work)

    def allows(self, now: float, lost: float = 0.0) -> bool:
        """Whether one more kill, losing ``lost`` work, keeps both budgets."""
        if self.jobs is not None and self._killed.at(now) + 1.0 > self.jobs * self._submitted.at(now):
            return False
        return self.work is None or self._lost.at(now) + lost <= self.work * self._useful.at(now)

    def kill(self, now: float, lost: float) -> bool:
        """Spend a kill losing ``lost`` work, if the budgets allow it; whether they did (else it is refused)."""
        if not self.allows(now, lost):
            self.refused += 1
            return False
        self._killed.add(now, 1.0)
        self._lost.add(now, lost)
        return True
