"""The engine's shortcuts (``BatsimEngine.shortcuts``) against SimGrid's rounds taken one by one, and its submitter
against Batsim's, job by job.

The shortcuts skip the round bookkeeping where only one thing can happen; on workloads where many events meet
at one instant (few distinct submission times and runtimes, on both sides of 16384 s, where SimGrid's rounding
splits some of them), with kills, resubmissions and CALL_ME_LATER, both ways must send the decision process the
same messages, at the same times, and write the same jobs table.
"""

from __future__ import annotations

import random

import pytest

from batsim_classifier_scheduler.compose import build_core
from batsim_classifier_scheduler.config import SchedulerConfig
from batsim_classifier_scheduler.sim.engine import BatsimEngine, SimulationOptions
from tests.helpers import make_workload


def meeting_jobs(rng: random.Random, nb_jobs: int, nb_res: int) -> list[tuple]:
    """Jobs submitted at a few instants, with a few runtimes and walltimes: their ends meet all the time."""
    instants = sorted(rng.sample(range(0, 60000, 100), 40))
    runtimes = [0, 1, 100, 1000, 5000, 16384, 20000]
    jobs = []
    for _ in range(nb_jobs):
        runtime = rng.choice(runtimes)
        walltime = rng.choice([runtime + 100, runtime, max(runtime - 50, 1), 30000])
        jobs.append((rng.choice(instants), rng.randint(1, nb_res), walltime, runtime))
    return jobs


def meeting_workload(seed: int, nb_jobs: int = 250, nb_res: int = 8):
    """:func:`meeting_jobs` alone."""
    return make_workload(meeting_jobs(random.Random(seed), nb_jobs, nb_res), nb_res)


def mixed_workload(seed: int, nb_res: int = 8):
    """:func:`meeting_jobs`, and as many at instants and with runtimes of their own (whose cycles run alone: the
    engine's whole-cycle paths), and a last job submitted alone after all of them (the submitter's goodbye then
    follows its last report at once)."""
    rng = random.Random(seed)
    jobs = meeting_jobs(rng, 150, nb_res)
    for _ in range(150):
        runtime = rng.choice([rng.randint(1, 30000), rng.uniform(0, 100), 0.5])
        walltime = rng.choice([runtime + 100, runtime, 30000, -1])
        jobs.append((rng.randint(0, 60000) + rng.choice([0, 0.25, 1e-7]), rng.randint(1, nb_res), walltime, runtime))
    jobs.append((90000, 1, 100, 10))
    return make_workload(jobs, nb_res)


def transcript(workload, config: SchedulerConfig, options: SimulationOptions | None, shortcuts: bool,
               clock: bool = False):
    """Every message the decision process received (time, events; with ``clock``, SimGrid's clock as well, to the
    bit) and the jobs table."""
    core = build_core(config)
    messages = []

    def decide(now, events):
        messages.append((now, [repr(event) for event in events]) + ((engine._timeline.now,) if clock else ()))
        return core.decide(now, events)

    default, BatsimEngine.shortcuts = BatsimEngine.shortcuts, shortcuts
    try:
        engine = BatsimEngine(workload, options=options)
        result = engine.run(decide)
    finally:
        BatsimEngine.shortcuts = default
    return messages, result.columns


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("config, options", [
    (SchedulerConfig(policy="fcfs"), None),
    (SchedulerConfig(policy="spf", algorithm="conservative_bf"), None),
    (SchedulerConfig(classifier="oracle", safeguard="kill", policy="spf"),
     SimulationOptions(enable_dynamic_jobs=True, acknowledge_dynamic_jobs=True, enable_profile_reuse=True)),
], ids=["easy", "conservative", "safeguard"])
@pytest.mark.parametrize("make", [meeting_workload, mixed_workload], ids=["meeting", "mixed"])
def test_shortcuts_change_no_message_and_no_row(seed, config, options, make):
    workload = make(seed)
    with_shortcuts = transcript(workload, config, options, shortcuts=True, clock=True)
    without = transcript(workload, config, options, shortcuts=False, clock=True)
    assert with_shortcuts[0] == without[0]  # (SimGrid's clock at each message too: a step skipped would show)
    assert repr(with_shortcuts[1]) == repr(without[1])  # (as text: NaN, where a job has no time, is not NaN)
    grouped = sum(len(message[1]) > 1 for message in without[0])
    assert grouped > 20  # the workload does make events meet


def per_job_submitter(self):
    """Batsim's submitter as Batsim writes it, job by job (the engine's walks the groups of one time instead)."""
    import numpy as np

    from batsim_classifier_scheduler.sim.engine_types import MSG_BYE, MSG_HELLO, MSG_SUBMITTED, SEND, SLEEP

    yield (SEND, (MSG_HELLO,))
    current, group = self._timeline.now, []
    for sim in self._static:
        if sim.job.subtime > current:
            if group:
                yield (SEND, (MSG_SUBMITTED, group))
                group = []
            yield (SLEEP, float(np.longdouble(sim.job.subtime) - np.longdouble(current)))
            current = self._timeline.now
        group.append(sim)
    if group:
        yield (SEND, (MSG_SUBMITTED, group))
    yield (SEND, (MSG_BYE,))


@pytest.mark.parametrize("seed", range(2))
def test_the_submitter_walks_its_groups_as_batsim_walks_its_jobs(seed, monkeypatch):
    """Submission gaps of 8192 to 16384 s lose more than 1e-12 s per message step: the submitter wakes a little
    before the next group's time, and Batsim's loop sleeps again for each of its jobs."""
    rng = random.Random(seed)
    jobs, instant = [], 0
    for _ in range(30):
        instant += rng.choice([10, 9000, 12000])
        jobs += [(instant, rng.randint(1, 4), 30000, rng.choice([5, 50, 9000]))] * rng.randint(1, 4)
    workload = make_workload(jobs, 4)
    config = SchedulerConfig(policy="fcfs")
    grouped = transcript(workload, config, None, shortcuts=True)
    monkeypatch.setattr(BatsimEngine, "_submitter", per_job_submitter)
    per_job = transcript(workload, config, None, shortcuts=True)
    assert per_job[0] == grouped[0] and repr(per_job[1]) == repr(grouped[1])
    submissions = [(now, events) for now, events in grouped[0] if events and "JobSubmitted" in events[0]]
    assert any(a[0] == b[0] for a, b in zip(submissions, submissions[1:]))  # one time's jobs in two messages
