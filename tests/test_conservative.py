"""Conservative backfilling (batsched's ``conservative_bf``) and its profile of time slices.

The :class:`ReservationProfile` is checked against a plain model of batsched's ``Schedule``: a list of
slices, each with the jobs it holds, split at a job's end when the job is added and merged with an equal
neighbour when a job leaves; the compression re-places a job by taking it out and adding it again. Both
drive the same decision core on random workloads and must take the same decisions and hold the same
slices after every message.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pytest import MonkeyPatch

from batsim_classifier_scheduler.compose import build_core
from batsim_classifier_scheduler.config import SchedulerConfig
from batsim_classifier_scheduler.core import conservative
from batsim_classifier_scheduler.core.machines import full_mask, lowest
from batsim_classifier_scheduler.core.reservations import Placement, ReservationProfile
from batsim_classifier_scheduler.sim.engine import BatsimEngine
from batsim_classifier_scheduler.sim.simulate import simulate

from tests.helpers import make_workload
from tests.test_easy_properties import check_schedule, workloads

HORIZON = 1e19  # the end of batsched's last slice


class SliceModel:
    """batsched's ``Schedule`` as a plain list of ``[begin, end, {job id: machines}]`` slices, with the
    interface :class:`~batsim_classifier_scheduler.core.conservative.ConservativeBackfilling` uses."""

    def __init__(self, nb_machines: int, now: float = 0.0) -> None:
        self.nb_machines = nb_machines
        self.rebuild(now, {})

    def __contains__(self, job_id: str) -> bool:
        return job_id in self.jobs

    def free(self, index: int) -> int:
        mask = full_mask(self.nb_machines)
        for machines in self.slices[index][2].values():
            mask &= ~machines
        return mask

    def advance(self, now: float) -> bool:
        if now > self.slices[0][1]:
            return False
        self.slices[0][0] = now
        return True

    def running(self) -> dict[str, Placement]:
        return {job_id: placement for job_id, placement in self.jobs.items() if placement.running}

    def first_fit(self, res: int, duration: float) -> tuple[int, int]:
        for anchor in range(len(self.slices)):
            available = self.free(anchor)
            if available.bit_count() < res:
                continue
            last, length = anchor, self.slices[anchor][1] - self.slices[anchor][0]
            while length < duration:  # the next slices, while the machines last
                last += 1
                available &= self.free(last)
                if self.free(last).bit_count() < res or available.bit_count() < res:
                    break
                length += self.slices[last][1] - self.slices[last][0]
            else:
                return anchor, lowest(available, res)
        raise AssertionError("no slice fits")

    def place(self, job_id: str, res: int, duration: float) -> int:
        index, mask = self.first_fit(res, duration)
        self.add(job_id, index, self.slices[index][0] + duration, res, mask)
        return index

    def refit(self, job_id: str, duration: float) -> int:
        return self.place(job_id, self.remove(job_id).res, duration)

    def shorten(self, job_id: str, end: float) -> None:
        placement = self.remove(job_id)
        self.add(job_id, 0, end, placement.res, placement.mask)

    def start_of(self, index: int) -> float:
        return self.slices[index][0]

    def add(self, job_id: str, index: int, end: float, res: int, mask: int) -> None:
        last = index
        while self.slices[last][1] < end:
            last += 1
        if end < self.slices[last][1]:  # split the slice the job ends in
            begin, stop, jobs = self.slices[last]
            self.slices[last][1] = end
            self.slices.insert(last + 1, [end, stop, dict(jobs)])
        for piece in self.slices[index:last + 1]:
            piece[2][job_id] = mask
        self.jobs[job_id] = Placement(self.slices[index][0], end, res, mask, index == 0)

    def remove(self, job_id: str) -> Placement:
        held = [i for i, piece in enumerate(self.slices) if job_id in piece[2]]
        for i in held:
            del self.slices[i][2][job_id]
        for boundary in range(held[-1] + 1, held[0] - 1, -1):  # merge around it, right to left
            if 0 < boundary < len(self.slices) and self.slices[boundary][2] == self.slices[boundary - 1][2]:
                self.slices[boundary - 1][1] = self.slices[boundary][1]
                del self.slices[boundary]
        return self.jobs.pop(job_id)

    def rebuild(self, now: float, running: dict[str, Placement]) -> None:
        self.slices, self.jobs = [[now, HORIZON, {}]], {}
        for job_id, placement in running.items():
            self.add(job_id, 0, max(placement.end, now), placement.res, placement.mask)


def slices(profile) -> list[tuple[float, int]]:
    """Each slice's begin and free machines."""
    if isinstance(profile, SliceModel):
        return [(piece[0], profile.free(i)) for i, piece in enumerate(profile.slices)]
    return list(zip(profile.begins, profile.free))


class Lockstep:
    """Two decision cores fed the same messages: ours, and one planning on the slice model. Checks that
    they decide the same and hold the same slices; answers with ours."""

    def __init__(self, config: SchedulerConfig) -> None:
        self.ours, self.model = build_core(config), build_core(config)

    def __call__(self, now, events):
        events = list(events)
        with MonkeyPatch.context() as patch:  # the model's algorithm is built at SIMULATION_BEGINS
            patch.setattr(conservative, "ReservationProfile", SliceModel)
            expected = self.model.decide(now, events)
        decisions = self.ours.decide(now, events)
        assert decisions == expected, now
        if self.ours.algorithm is not None:
            assert slices(self.ours.algorithm.profile) == slices(self.model.algorithm.profile), now
        return decisions


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(workloads(), st.sampled_from(["fcfs", "spf", "lqf"]),
       st.sampled_from([{"estimates": "requested"}, {"estimates": "clairvoyant"},
                        {"predictor": "ave2", "correction": "incremental"}]))
def test_the_profile_takes_batscheds_decisions_and_holds_its_slices(workload, policy, knowledge):
    # with predictions, estimates change and running jobs outlive them: the profile is rebuilt
    config = SchedulerConfig(algorithm="conservative_bf", policy=policy, **knowledge)
    result = BatsimEngine(workload).run(Lockstep(config))
    check_schedule(workload, result)


def test_first_fit_takes_the_lowest_machines_free_over_the_whole_window():
    profile = ReservationProfile(4)
    profile.add("a", 0, 10.0, 2, 0b0011)  # machines 0-1 until 10
    index, mask = profile.first_fit(2, 5.0)
    profile.add("b", index, 5.0, 2, mask)  # starts now on 2-3, until 5
    index, mask = profile.first_fit(2, 10.0)  # 0-1 free from 10, 2-3 from 5: anchored at 5, only 2-3 last
    assert (profile.start_of(index), mask) == (5.0, 0b1100)
    index, mask = profile.first_fit(4, 1.0)
    assert (profile.start_of(index), mask) == (10.0, 0b1111)


def test_a_job_past_its_expected_end_holds_its_machines_until_its_completion_arrives():
    profile = ReservationProfile(2)
    profile.add("a", 0, 10.0, 1, 0b01)
    assert profile.advance(10.0)  # a's completion is not in this message: slice 0 is [10, 10)
    index, _ = profile.first_fit(2, 5.0)
    assert (index, profile.start_of(index)) == (1, 10.0)  # reserved at 10, not started
    assert profile.first_fit(1, 5.0) == (0, 0b10)  # the other machine starts now
    profile.remove("a")
    assert profile.begins == [10.0] and profile.first_fit(2, 5.0) == (0, 0b11)
    profile.add("b", 0, 20.0, 1, 0b01)
    assert not profile.advance(21.0)  # b outlived its expected end: the profile must be rebuilt


def test_every_waiting_job_keeps_its_reservation():
    # job 1 is reserved at 100 on machines 0-1, job 2 at 100 on 2-3. EASY protects job 1 only: job 3 (one
    # machine, 300 s) backfills on machine 3 and delays job 2 to 200; conservative backfilling reserves
    # job 3 after both
    workload = make_workload([(0, 3, 100, 100), (1, 2, 100, 100), (2, 2, 100, 100), (3, 1, 300, 300)], nb_res=4)
    easy, _ = simulate(workload, SchedulerConfig(algorithm="easy"))
    conservative_bf, _ = simulate(workload, SchedulerConfig(algorithm="conservative_bf"))
    assert dict(zip(easy.jobs.job_id, easy.jobs.starting_time)) == {"0": 0, "1": 100, "2": 200, "3": 3}
    assert dict(zip(conservative_bf.jobs.job_id, conservative_bf.jobs.starting_time)) == \
        {"0": 0, "1": 100, "2": 100, "3": 200}
