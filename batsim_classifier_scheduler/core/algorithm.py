"""The interface every scheduling algorithm implements (batsched's ``ISchedulingAlgorithm``).

The decision core queues jobs (with a rank: Q_small before Q, and an estimate), tells the
algorithm when a job ends and when a running job's expected end or a queued job's estimate
changes, and asks at every decision which queued jobs start now. Every algorithm takes its
jobs from the same waiting queue (:class:`~batsim_classifier_scheduler.core.queue.JobQueue`: ranks first, then
the policy) and plans running jobs until their start plus the smaller of their estimate and
their ``bound``, on an availability profile (:class:`~batsim_classifier_scheduler.core.profile.AvailabilityProfile`,
or conservative backfilling's :class:`~batsim_classifier_scheduler.core.reservations.ReservationProfile`), so
classes, the safeguard and runtime predictions work with any of them. Machines are chosen
lowest-numbered first (batsched's ``basic`` resource selector).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, Callable, ClassVar

from batsim_classifier_scheduler.core.messages import Execute
from batsim_classifier_scheduler.core.job import Job
from batsim_classifier_scheduler.core.policies import Policy
from batsim_classifier_scheduler.core.profile import AvailabilityProfile
from batsim_classifier_scheduler.core.queue import JobQueue


class Algorithm(ABC):
    """Decides which queued jobs start now, on which machines.

    ``estimate(job)`` is the runtime the scheduler believes; ``backfill_order`` is the order in
    which a backfilling algorithm tries its candidates (None: the queue order); ``bound(job)``, when
    given, is an upper bound on a job's runtime once it runs (None: none): a started job is planned to
    end at its start plus the smaller of its estimate and its bound. ``options`` is an instance of the
    class's :attr:`Options` (None when it declares none).
    """

    #: The name ``--algorithm`` selects it by.
    name: ClassVar[str]
    #: Whether it tries backfill candidates in an order of their own (only then does ``backfill_order`` mean
    #: anything).
    backfills: ClassVar[bool] = False
    #: A plug-in's options, declared as a ``msgspec.Struct`` class (``batsim_classifier_scheduler.registry``); None: it takes none.
    Options: ClassVar[type | None] = None

    def __init__(self, nb_machines: int, queue: JobQueue, estimate: Callable[[Job], float],
                 backfill_order: Policy | None = None,
                 bound: Callable[[Job], float | None] | None = None, options: Any = None) -> None:
        self.profile = AvailabilityProfile(nb_machines)
        self.queue = queue
        self.estimate = estimate
        self.backfill_order = backfill_order
        self.bound = bound
        self.options = options

    @abstractmethod
    def schedule(self, now: float, arrived: list[Job], released: bool, replan: bool = False) -> list[Execute]:
        """The jobs that start now. ``arrived``: jobs queued in this message; ``released``: whether
        machines were freed since the last decision; ``replan``: whether estimates changed."""

    # --- what the decision core tells ------------------------------------------------

    def enqueue(self, job: Job, estimate: float, rank: int, now: float) -> None:
        """``job`` waits from now on, in queue ``rank`` (0 before 1)."""
        self.queue.push(job, estimate, rank=rank, now=now)

    def requeue(self, job: Job, estimate: float, rank: int, now: float) -> None:
        """A queued job moves to queue ``rank``."""
        self.queue.remove(job)
        self.queue.push(job, estimate, rank=rank, now=now)

    def reestimate(self, job: Job, estimate: float, now: float) -> None:
        """A queued job's estimate changed."""
        self.queue.update(job, estimate, now)

    def expect_end(self, job_id: str, end: float) -> None:
        """A running job's expected end changed."""
        self.profile.set_expected_end(job_id, end)

    def release(self, job_id: str) -> None:
        """A running job ended: its machines are free."""
        self.profile.finish(job_id)

    # --- what the decision core asks -------------------------------------------------

    def earliest_start(self, res: int, duration: float, now: float) -> float:
        """The earliest time a job of ``res`` machines and ``duration`` could start, given the
        running jobs (and any reservation), if it were submitted now."""
        return self.profile.first_fit(res, duration, now).start

    def delays_head(self, job_id: str, end: float, now: float, waiting_slack: float = 0.0) -> bool:
        """Whether the running job ``job_id``, planned to end at ``end`` rather than now, would delay the earliest
        start of the first waiting job (by its estimate, around no reservation), or delay it by more than
        ``waiting_slack`` seconds when that job could not start now even were it to end now: whether it holds
        machines that job needs. False when no job waits."""
        head = self.queue.head(now)
        if head is None:
            return False
        profile = self.profile
        planned, reservation = profile.running[job_id].end, profile.reservation
        profile.reservation = None
        try:
            profile.set_expected_end(job_id, now)
            sooner = profile.first_fit(head.res, self.queue.estimate(head), now).start
            profile.set_expected_end(job_id, end)
            later = profile.first_fit(head.res, self.queue.estimate(head), now).start
        finally:
            profile.set_expected_end(job_id, planned)
            profile.reservation = reservation
        return later > sooner + (waiting_slack if sooner > now else 0.0)

    # --- shared by the implementations -----------------------------------------------

    def _start(self, job: Job, mask: int, duration: float, now: float, started: list[Execute]) -> None:
        bound = self.bound(job) if self.bound is not None else None
        if bound is not None and bound < duration:
            duration = bound
        self.profile.start(job.id, now, now + duration, job.res, mask)
        self.queue.remove(job)
        started.append(Execute(job.id, mask))
