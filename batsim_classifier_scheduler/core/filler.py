"""batsched's ``filler``: greedy list scheduling, no reservation.

At every decision the whole queue is walked in queue order, and every job that fits in the machines
free now starts, on the lowest-numbered of them; a job that does not fit holds nothing back, so a wide
job can wait as long as narrower ones keep arriving.
"""

from __future__ import annotations

from batsim_classifier_scheduler.core.algorithm import Algorithm
from batsim_classifier_scheduler.core.messages import Execute
from batsim_classifier_scheduler.core.job import Job


class Filler(Algorithm):
    """Starts every queued job that fits now, in queue order."""

    name = "filler"

    def schedule(self, now: float, arrived: list[Job], released: bool, replan: bool = False) -> list[Execute]:
        started: list[Execute] = []
        profile, estimate = self.profile, self.queue.estimate
        if profile.nb_free == 0 or not self.queue:
            return started
        for job in self.queue.ordered_within(now, profile.nb_free):
            if job.res <= profile.nb_free:
                self._start(job, profile.fits_now(job.res, 0.0, now), estimate(job), now, started)
                if profile.nb_free == 0:
                    break
        return started
