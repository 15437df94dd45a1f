"""A queue order in one file: smallest area first, with aging.

A job's key is its area (estimate x processors) less a credit for waiting: ``aging`` processor-seconds
per second waited. Wide, long jobs are no longer postponed forever: a job catches up with one of smaller
area after waiting their difference in area over ``aging`` seconds. ``aging`` 0 is SAF. Run it with::

    python -m batsim_classifier_scheduler simulate workloads/sample.json --policy examples/aged_area.py:AgedArea \\
        --policy-options '{"aging": 16}'
"""

from __future__ import annotations

from typing import Annotated

import msgspec

from batsim_classifier_scheduler.core.job import Job


class AgedArea:
    """Smallest area first, less aging x the wait."""

    class Options(msgspec.Struct):
        aging: Annotated[float, msgspec.Meta(ge=0, description="processor-seconds of area forgiven per second "
                                                               "waited")] = 16.0

    def __init__(self, options: Options) -> None:
        self.aging = options.aging

    def __call__(self, job: Job, estimate: float, now: float) -> tuple:
        # area - aging x (now - subtime): the term aging x now is the same for every job, so the order does
        # not change with time (the queue sorts once, not at every decision)
        return (estimate * job.res + self.aging * job.subtime, job.id)
