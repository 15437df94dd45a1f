"""A scheduling algorithm in one file: queue order with a look-ahead window.

At every decision the queue is walked in its order (the policy's, Q_small first), and each job that fits
in the machines free now starts, on the lowest-numbered of them; a job that does not fit waits, and once
``depth`` jobs wait, the walk stops. So no job overtakes ``depth`` or more waiting jobs, and nothing is
reserved: ``depth`` 1 is strict queue order (``--algorithm fcfs``), a depth beyond the queue's length is
batsched's ``filler``. Run it with::

    python -m batsim_classifier_scheduler simulate workloads/sample.json --algorithm examples/lookahead.py:LookAhead \\
        --algorithm-options '{"depth": 5}'
"""

from __future__ import annotations

from typing import Annotated

import msgspec

from batsim_classifier_scheduler.core.algorithm import Algorithm
from batsim_classifier_scheduler.core.messages import Execute
from batsim_classifier_scheduler.core.job import Job


class LookAhead(Algorithm):
    """Starts, in queue order, the jobs that fit now, until ``depth`` jobs wait."""

    class Options(msgspec.Struct):
        depth: Annotated[int, msgspec.Meta(ge=1, description="how many waiting jobs stop the walk: a job never "
                                                             "overtakes that many")] = 5

    def schedule(self, now: float, arrived: list[Job], released: bool, replan: bool = False) -> list[Execute]:
        started: list[Execute] = []
        waiting = 0
        for job in self.queue.ordered(now):
            if self.profile.nb_free == 0:
                break
            duration = self.estimate(job)
            mask = self.profile.fits_now(job.res, duration, now)
            if mask is not None:
                self._start(job, mask, duration, now, started)
            else:
                waiting += 1
                if waiting == self.options.depth:
                    break
        return started
