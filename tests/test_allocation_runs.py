"""The summary reads allocations as intervals, not masks (``batsim_classifier_scheduler.sim.batsim_files._allocation_runs``)."""

import pytest

from batsim_classifier_scheduler.sim.batsim_files import _allocation_runs, _last_job_end_per_machine


@pytest.mark.parametrize("text, expected", [
    ("0-3 7", [(0, 3), (7, 7)]),
    ("", []),
    ("7 0-3", [(0, 3), (7, 7)]),  # out of order
    ("0-4 2-6 9", [(0, 6), (9, 9)]),  # overlapping
])
def test_an_allocation_is_read_as_the_set_it_names(text, expected) -> None:
    assert _allocation_runs(text) == expected


def test_each_machine_counts_its_last_job_end() -> None:
    allocations = [[(0, 1)], [(1, 2)], [], [(5, 5)]]
    # machines 0..5 (6 of them): 0 -> 10, 1 and 2 -> 20 (the later job), 3 and 4 never used, 5 -> 4
    assert _last_job_end_per_machine([10.0, 20.0, 30.0, 4.0], allocations, 6) == 10 + 20 + 20 + 4
