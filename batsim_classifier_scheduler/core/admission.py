"""Limits a site states, kept by construction: trials are admitted, kills are never refused (issue 48).

A *trial* is the run of a job the safeguard watches (classified small, or uncertain): the safeguard may kill it. A
trial is granted at the job's submission only if the run stays within the site's limits even were every open trial
(granted, not resolved) killed:

- jobs: ``killed + open <= kills x submitted``, where ``submitted`` counts first attempts (it only grows), ``killed``
  the jobs the safeguard killed (each at most once: a retry is never watched), ``open`` the trials granted and not
  resolved (an open trial resolves to killed, or to passed);
- work: ``wasted + sum over the open trials of the work each may still waste <= waste x useful``, where ``wasted``
  is the work the killed attempts did (processors x time run), ``useful`` the work of the jobs completed so far (it
  only grows). A trial may waste its processors x its length, fixed at the grant (the divider moves, the trial's
  length does not).

A job given no trial is large (it waits in Q and is never killed). A job past its trial that may still be killed
later (``kill_on`` demand, patient; or blocking at its trial's end) may waste more than its trial: before each
decision its possible waste is raised to its processors x the time it has run (:meth:`Admission.cover`); when the
limits cannot cover that, it is *released*: it runs on as an ordinary large job and is never killed. So no kill is
ever refused, and both inequalities hold at every moment: a grant checks them, a cover checks them, a kill moves a
trial's covered waste (at least what the kill loses) to ``wasted`` and its count to ``killed``, a pass or a release
frees both, and ``submitted`` and ``useful`` only grow. At the end no trial is open: the run killed at most
``kills`` of its jobs and wasted at most ``waste`` of its useful work, on any workload.
"""

from __future__ import annotations

import heapq
import math
from typing import Callable


class Admission:
    """The open trials and what they may cost, against the limits ``kills`` and ``waste`` (see the module)."""

    def __init__(self, kills: float | None = None, waste: float | None = None) -> None:
        self.kills = kills
        self.waste = waste
        self.submitted = 0  # first attempts
        self.killed = 0  # jobs the safeguard killed
        self.wasted = 0.0  # the work of the killed attempts (processors x seconds)
        self.useful = 0.0  # the work of the completed attempts
        self._open: dict[str, float] = {}  # open trial -> the work it may waste (covered by the limits)
        self.covered = 0.0  # the sum of ``_open``'s values
        self.refused = 0  # trials not granted
        self.released = 0  # jobs past their trial released (no longer killable) for want of cover
        self.withdrawn = 0  # trials withdrawn before their start for a likelier one (displace)
        self._likely: list[tuple[float, str]] = []  # (P(small), job id) of tracked open trials, lazily pruned
        self.readmitted = 0  # jobs refused a trial at their submission, granted one later (defer)
        self._deferred: list[tuple[float, int, str, object]] = []  # (-key, order, job id, class) refused, waiting

    # --- what the run observes --------------------------------------------------

    def submit(self) -> None:
        """A job was submitted (a first attempt: a retry after a kill is the same job)."""
        self.submitted += 1

    def grant(self, job_id: str, res: int, length: float, count: bool = True) -> bool:
        """Whether the job ``job_id`` of ``res`` processors gets a trial of ``length`` seconds: only if both limits hold
        even were it killed at its end along with every open trial. If granted, it is open."""
        possible = res * length
        if not self._within(1, possible):
            self.refused += count
            return False
        self._open[job_id] = possible
        self.covered += possible
        return True

    def track(self, job_id: str, p_small: float) -> None:
        """The open trial ``job_id`` has the forest's probability ``p_small`` of being small (``displace`` reads it)."""
        heapq.heappush(self._likely, (p_small if p_small == p_small else 0.0, job_id))

    def displace(self, job_id: str, res: int, length: float, p_small: float,
                 waiting: Callable[[str], bool]) -> str | None:
        """limit_order p-small, once ``grant`` refused ``job_id``: the tracked open trial that has not started yet
        (``waiting``) with the lowest P(small) gives way to it if that is below ``p_small`` and the work limit
        holds with the swap (the jobs' count is unchanged). Returns the trial withdrawn (it passed: it never ran),
        ``job_id`` being granted and open in its place; None if none gives way."""
        likely = self._likely
        while likely and (likely[0][1] not in self._open or not waiting(likely[0][1])):
            heapq.heappop(likely)
        if not likely or not likely[0][0] < p_small:
            return None
        victim = likely[0][1]
        possible = res * length
        if self.waste is not None and (self.wasted + self.covered - self._open[victim] + possible
                                       > self.waste * self.useful):
            return None
        heapq.heappop(likely)
        self.passed(victim)
        self.withdrawn += 1
        self.refused -= 1  # granted after all
        self._open[job_id] = possible
        self.covered += possible
        return victim

    def defer(self, job_id: str, key: float, job_class: object) -> None:
        """readmit: the job ``job_id``, refused a trial, waits as large; it may be granted one later, highest ``key``
        first (then the oldest refusal), while it still waits."""
        heapq.heappush(self._deferred, (-key, len(self._deferred) + self.readmitted, job_id, job_class))

    def next_deferred(self, waiting: Callable[[str], bool]) -> tuple[str, object] | None:
        """The deferred job to offer a trial first (those no longer ``waiting`` are forgotten), or None."""
        deferred = self._deferred
        while deferred and not waiting(deferred[0][2]):
            heapq.heappop(deferred)
        return (deferred[0][2], deferred[0][3]) if deferred else None

    def readmit(self, job_id: str, res: int, length: float) -> bool:
        """Grant the first deferred job ``job_id`` a trial, if the limits allow it now (it is then no longer
        deferred)."""
        if not self.grant(job_id, res, length, count=False):
            return False
        heapq.heappop(self._deferred)
        self.readmitted += 1
        return True

    def cover(self, job_id: str, lost: float) -> bool:
        """The open trial ``job_id`` would lose ``lost`` if killed now: whether it may still be killed (its possible
        waste is raised to ``lost`` if the limits cover it). If not, it is released (passed): it may not be killed."""
        possible = self._open.get(job_id)
        if possible is None:
            return False
        if lost <= possible:
            return True
        if self._within(0, lost - possible):
            self._open[job_id] = lost
            self.covered += lost - possible
            return True
        self.released += 1
        self.passed(job_id)
        return False

    def passed(self, job_id: str) -> None:
        """The trial ``job_id`` can no longer be killed (it ended, it was spared or released): it frees its cover."""
        possible = self._open.pop(job_id, None)
        if possible is not None:
            self.covered -= possible
            if not self._open:
                self.covered = 0.0  # no rounding left over

    def ended(self, job_id: str, work: float, killed: bool) -> None:
        """The attempt ``job_id`` ended after doing ``work``: killed by the safeguard (its trial resolves to killed, its
        work is wasted), or not (its trial, if open, passed; its work is useful)."""
        if killed:
            self.killed += 1
            self.wasted += work
            self.passed(job_id)
        else:
            self.useful += work
            self.passed(job_id)

    # --- the limits -------------------------------------------------------------

    def is_open(self, job_id: str) -> bool:
        return job_id in self._open

    @property
    def open(self) -> int:
        return len(self._open)

    def _within(self, more_jobs: int, more_work: float) -> bool:
        """Whether the limits hold with ``more_jobs`` more open trials and ``more_work`` more possible waste."""
        if self.kills is not None and self.killed + len(self._open) + more_jobs > self.kills * self.submitted:
            return False
        return self.waste is None or self.wasted + self.covered + more_work <= self.waste * self.useful

    def holds(self) -> bool:
        """Whether both invariants hold now (for tests and assertions)."""
        jobs = self.kills is None or self.killed + len(self._open) <= self.kills * self.submitted
        work = self.waste is None or self.wasted + sum(self._open.values()) <= self.waste * self.useful * (1 + 1e-12)
        return jobs and work and math.isfinite(self.covered)
