"""Strict queue order, no backfilling (batsched's ``fcfs``): the head of the queue starts as soon
as it fits, and nothing overtakes it. With the FCFS policy this is plain FCFS; with another policy
the queue's order is kept just as strictly."""

from __future__ import annotations

from batsim_classifier_scheduler.core.algorithm import Algorithm
from batsim_classifier_scheduler.core.messages import Execute
from batsim_classifier_scheduler.core.job import Job


class StrictOrder(Algorithm):
    """Starts queue heads while they fit now; the first that does not fit blocks the others."""

    name = "fcfs"

    def schedule(self, now: float, arrived: list[Job], released: bool, replan: bool = False) -> list[Execute]:
        started: list[Execute] = []
        head = self.queue.head(now)
        while head is not None:
            duration = self.estimate(head)
            mask = self.profile.fits_now(head.res, duration, now)
            if mask is None:
                break
            self._start(head, mask, duration, now, started)
            head = self.queue.head(now)
        return started
