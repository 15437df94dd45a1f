"""The waiting queue: jobs by rank and policy, starving jobs first (oldest first) within their rank or
ahead of every rank."""

from __future__ import annotations

from bisect import bisect_left, bisect_right, insort
from collections.abc import Callable, Iterator
from heapq import merge
from itertools import compress, islice
from operator import itemgetter

from batsim_classifier_scheduler.core.job import Job
from batsim_classifier_scheduler.core.overdue import OVERDUE_RANK
from batsim_classifier_scheduler.core.policies import Policy

#: Where a starving job moves: to the head of its own queue (its rank), or ahead of every rank.
STARVATION_SCOPES = ("queue", "all")


class JobQueue:
    """Waiting jobs in scheduling order.

    A job's position is ``(rank, policy key)``: lower ranks come first. The ranks are those of
    :class:`batsim_classifier_scheduler.knowledge.choices.JobClass`: 0 (Q_small), 1 (uncertain jobs, and the default of
    :meth:`push`), 2 (Q); and -1 or 0.5 for the overdue jobs (:mod:`batsim_classifier_scheduler.core.overdue`), ahead of every
    rank or behind Q_small only, which go oldest first whatever the policy. A job that has waited longer than
    ``starvation_threshold`` seconds is *starving*: with ``starvation_scope="queue"`` it moves to the head of its
    own rank (Q_small stays ahead of the uncertain jobs, and they ahead of Q), with ``"all"`` ahead of every rank;
    starving jobs go oldest first.

    The policy orders a job by the estimate it was pushed with (the one it is planned with), or by
    ``order_estimate(job)`` when given: the decision core plans a watched job with its trial's bound,
    yet may order it by its own estimate.

    Static policies keep a sorted list, and beside it the jobs and their widths (their processor
    counts) in the same order, so that the head, the whole order and the jobs narrow enough for the
    free machines are read without a Python loop over the queue; dynamic ones (WFP) are re-sorted at
    each read. While the queue is long (from :attr:`INDEX_FROM` jobs, until it is down to
    :attr:`INDEX_UNTIL`), they also keep the jobs of each width in that order and by estimate (the
    *width index*), so that a backfilling pass reads only the jobs narrow or short enough
    (:meth:`backfill_candidates`); a short queue does without it: kept up to date at every push and
    removal, it would cost a small machine's common case more than a walk over a few jobs.
    """

    #: The width index is built once the queue holds this many jobs, ...
    INDEX_FROM = 256
    #: ... and dropped once it holds fewer than this many (far fewer: a queue that hovers around
    #: :attr:`INDEX_FROM` does not build it again and again).
    INDEX_UNTIL = 64

    def __init__(self, policy: Policy, starvation_threshold: float | None = None,
                 starvation_scope: str = "queue", order_estimate: Callable[[Job], float] | None = None) -> None:
        if starvation_scope not in STARVATION_SCOPES:
            raise ValueError(f"starvation_scope must be one of {', '.join(STARVATION_SCOPES)}, got {starvation_scope!r}")
        self.policy = policy
        self.starvation_threshold = starvation_threshold
        self.starvation_scope = starvation_scope
        self.order_estimate = order_estimate
        self._entries: list[tuple] = []  # (rank, key, job id) for static policies, sorted
        self._widths: list[int] = []  # the processor count of each job of _entries, in the same order
        self._in_order: list[Job] = []  # the job of each entry of _entries, in the same order
        self._entry: dict[str, tuple] = {}  # job id -> its entry in _entries
        # the width index (static policies, a long queue): processor count -> its jobs as (entry, job) pairs and as
        # (estimate, entry, job), sorted; None while the queue is short (see INDEX_FROM)
        self._by_width: dict[int, tuple[list[tuple[tuple, Job]], list[tuple[float, tuple, Job]]]] | None = None
        self._queued_widths: list[int] = []  # the keys of _by_width, sorted
        #: The estimate each queued job is planned with, by id (given to :meth:`push`, or to :meth:`update` since);
        #: read-only outside: :meth:`estimate` without its call, for the algorithms' loops.
        self.estimates: dict[str, float] = {}
        self._rank_order: dict[str, tuple[int, float]] = {}  # job id -> its rank, the estimate it is ordered by
        self._jobs: dict[str, Job] = {}  # insertion order = arrival order
        self._by_submission: list[tuple[float, str]] = []

    @property
    def indexed(self) -> bool:
        """Whether the width index is kept (a static policy's long queue): :meth:`backfill_candidates` may pick."""
        return self._by_width is not None

    def __len__(self) -> int:
        return len(self._jobs)

    def __contains__(self, job: Job) -> bool:
        return job.id in self._jobs

    def __iter__(self):
        return iter(self._jobs.values())

    def push(self, job: Job, estimate: float, rank: int = 1, now: float = 0.0) -> None:
        self._jobs[job.id] = job
        order = estimate if self.order_estimate is None else self.order_estimate(job)
        self.estimates[job.id] = estimate
        self._rank_order[job.id] = (rank, order)
        if self.starvation_threshold is not None:
            insort(self._by_submission, (job.subtime, job.id))
        if not self.policy.dynamic:
            # overdue jobs go oldest first
            key = (job.subtime, job.id) if rank == OVERDUE_RANK else self.policy.key(job, order, now)
            entry = self._entry[job.id] = (rank, key, job.id)
            at = bisect_left(self._entries, entry)
            self._entries.insert(at, entry)
            self._widths.insert(at, job.res)
            self._in_order.insert(at, job)
            by_width = self._by_width
            if by_width is None:
                if len(self._jobs) >= self.INDEX_FROM:
                    self._build_index()
                return
            same_width = by_width.get(job.res)
            if same_width is None:
                by_width[job.res] = ([(entry, job)], [(estimate, entry, job)])
                insort(self._queued_widths, job.res)
            else:  # (entries differ: jobs are never compared)
                insort(same_width[0], (entry, job))
                insort(same_width[1], (estimate, entry, job))

    def remove(self, job: Job) -> None:
        del self._jobs[job.id]
        estimate = self.estimates.pop(job.id)  # (read by the width index)
        del self._rank_order[job.id]
        if self.starvation_threshold is not None:
            del self._by_submission[bisect_left(self._by_submission, (job.subtime, job.id))]
        if not self.policy.dynamic:
            entry = self._entry.pop(job.id)
            at = 0 if self._in_order[0] is job else bisect_left(self._entries, entry)  # the head: EASY's usual start
            del self._entries[at]
            del self._widths[at]
            del self._in_order[at]
            by_width = self._by_width
            if by_width is None:
                return
            if len(self._jobs) < self.INDEX_UNTIL:
                self._by_width, self._queued_widths = None, []  # the queue is short again
                return
            by_entry, by_estimate = by_width[job.res]
            if len(by_entry) == 1:
                del by_width[job.res]  # (only the widths queued are read)
                del self._queued_widths[bisect_left(self._queued_widths, job.res)]
            else:
                del by_entry[bisect_left(by_entry, (entry,))]
                del by_estimate[bisect_left(by_estimate, (estimate, entry))]  # (no other entry is equal)

    def _build_index(self) -> None:
        """The width index of the jobs queued (a static policy's): each width's jobs in scheduling order, as
        :attr:`_in_order` holds them, and by estimate."""
        by_width: dict[int, tuple[list[tuple[tuple, Job]], list[tuple[float, tuple, Job]]]] = {}
        estimates = self.estimates
        for entry, job in zip(self._entries, self._in_order):
            same_width = by_width.get(job.res)
            if same_width is None:
                by_width[job.res] = ([(entry, job)], [(estimates[job.id], entry, job)])
            else:
                same_width[0].append((entry, job))
                same_width[1].append((estimates[job.id], entry, job))
        for _, by_estimate in by_width.values():
            by_estimate.sort(key=_without_job)  # (entries differ: jobs are never compared)
        self._by_width, self._queued_widths = by_width, sorted(by_width)

    def update(self, job: Job, estimate: float, now: float = 0.0) -> None:
        """Re-key a queued job whose estimate changed (same rank)."""
        old, (rank, old_order) = self.estimates[job.id], self._rank_order[job.id]
        if old == estimate and (self.order_estimate is None or old_order == self.order_estimate(job)):
            return
        self.remove(job)
        self.push(job, estimate, rank=rank, now=now)

    def estimate(self, job: Job) -> float:
        """The estimate a queued job is planned with (given to :meth:`push`, or to :meth:`update` since)."""
        return self.estimates[job.id]

    def rank(self, job: Job) -> int:
        """The rank a queued job was pushed with."""
        return self._rank_order[job.id][0]

    def outranks(self, job: Job, other: Job, rank: int, estimate: float, now: float,
                 job_estimate: float | None = None) -> bool:
        """Whether the queued ``job`` comes before ``other`` were ``other`` queued in ``rank`` with ``estimate``
        (by rank, then the policy; starvation aside); ``job`` ordered by ``job_estimate`` when given."""
        job_rank, order = self._rank_order[job.id]
        job_estimate = order if job_estimate is None else job_estimate
        key = self._key
        return (job_rank, key(job, job_rank, job_estimate, now)) < (rank, key(other, rank, estimate, now))

    def ordered(self, now: float) -> list[Job]:
        """The jobs in scheduling order at time ``now``."""
        jobs = self._jobs
        if self.policy.dynamic:
            key = self._key
            rank_order = self._rank_order
            ordered = sorted(jobs.values(), key=lambda j: (rank_order[j.id][0], key(j, *rank_order[j.id], now)))
        else:
            ordered = self._in_order.copy()
        if self.starvation_threshold is None:  # the common case skips the call
            return ordered
        starving = self._starving(now)
        if not starving:
            return ordered
        if self.starvation_scope == "all":
            starving_ids = {job.id for job in starving}
            return starving + [job for job in ordered if job.id not in starving_ids]
        age = {job.id: i for i, job in enumerate(starving)}  # oldest first
        rank_order, last = self._rank_order, len(age)
        # a stable sort: within each rank the starving jobs first, by age; the others keep their order
        return sorted(ordered, key=lambda job: (rank_order[job.id][0], age.get(job.id, last)))

    def ordered_within(self, now: float, width: int) -> list[Job]:
        """:meth:`ordered`, less the jobs that need more than ``width`` processors."""
        if self.policy.dynamic or (self.starvation_threshold is not None and self._starving(now, limit=1)):
            return [job for job in self.ordered(now) if job.res <= width]
        return list(compress(self._in_order, map(width.__ge__, self._widths)))  # width >= each job's res, in C

    def backfill_candidates(self, now: float, longest: float) -> Callable[[int, int, tuple | None], Iterator] | None:
        """What a backfilling pass may start, as ``pick(width, narrow, after)``: in scheduling order, as
        ``(entry, job)`` pairs, the jobs of at most ``width`` processors whose estimate is at most ``longest``, and
        those of at most ``narrow`` (whatever their estimate); only those after the entry ``after`` when given. None
        when the order is not the policy's sorted one (a dynamic policy, starving jobs), and while the queue is
        short (no width index: a walk over it costs less). Each width's jobs are read
        from ``after`` on, from all its jobs or from those short enough (sorted once per pass, when first needed; when
        most of its jobs are, from all of them, the longer ones skipped): none of the others is read. For one pass:
        ``after`` only grows, and the jobs it started are the only ones the queue lost since."""
        if self._by_width is None or (self.starvation_threshold is not None and self._starving(now, limit=1)):
            return None  # (a short queue, or a dynamic policy's)
        by_width, widths, estimates = self._by_width, self._queued_widths, self.estimates
        # width -> its jobs short enough, in scheduling order (none: an empty tuple); or None when most of its jobs
        # are: they are read in order, the others skipped (a pass mostly stops at the first)
        short_of: dict[int, list[tuple[tuple, Job]] | tuple | None] = {}

        def pick(width: int, narrow: int, after: tuple | None) -> Iterator[tuple[tuple, Job]]:
            tails = []
            for res in widths[:bisect_right(widths, width)]:
                by_entry, by_estimate = by_width[res]
                if res <= narrow:
                    jobs = by_entry
                else:
                    jobs = short_of.get(res, by_width)
                    if jobs is by_width:  # (not looked at yet)
                        shorter = bisect_right(by_estimate, longest, key=_estimate_of)
                        jobs = short_of[res] = () if not shorter else None if 2 * shorter > len(by_estimate) else \
                            sorted([(entry, job) for _, entry, job in by_estimate[:shorter]])
                    if jobs is None:
                        first = 0 if after is None else bisect_right(by_entry, after, key=_entry_of)
                        tails.append(pair for pair in islice(by_entry, first, None)
                                     if estimates[pair[1].id] <= longest)
                        continue
                    if not jobs:
                        continue
                first = 0 if after is None else bisect_right(jobs, after, key=_entry_of)
                if first < len(jobs):
                    tails.append(islice(jobs, first, None))
            if len(tails) == 1:
                return tails[0]
            return merge(*tails)  # (the tails share no job: entries differ, jobs are never compared)

        return pick

    def head(self, now: float) -> Job | None:
        """The first job in scheduling order, or None when the queue is empty."""
        if not self._jobs:
            return None
        if self.starvation_threshold is not None:  # the common case skips the call
            starving = self._starving(now, limit=1)
            if starving and self.starvation_scope == "all":
                return starving[0]
            if starving and not self.policy.dynamic:  # the oldest starving job of the first rank, if any
                first_rank, rank_order = self._entries[0][0], self._rank_order
                for job in self._starving(now):
                    if rank_order[job.id][0] == first_rank:
                        return job
        if self.policy.dynamic:
            return self.ordered(now)[0]
        return self._in_order[0]

    def _key(self, job: Job, rank: int, estimate: float, now: float) -> tuple:
        """The policy's key of a job in ``rank``; overdue jobs (an overdue rank) go oldest first."""
        return (job.subtime, job.id) if rank == OVERDUE_RANK else self.policy.key(job, estimate, now)

    def _starving(self, now: float, limit: int | None = None) -> list[Job]:
        if self.starvation_threshold is None or not self._by_submission:
            return []
        cutoff = bisect_left(self._by_submission, (now - self.starvation_threshold,))
        if limit is not None:
            cutoff = min(cutoff, limit)
        return [self._jobs[job_id] for _, job_id in self._by_submission[:cutoff]]


_estimate_of = _entry_of = itemgetter(0)
_without_job = itemgetter(0, 1)
