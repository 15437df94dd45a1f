"""The paper's safeguard (Algorithm 2): a job classified small that is still running
``divider`` seconds after it started is killed and resubmitted as a large job.

With ``on_demand``, a watched job past its deadline is not killed then: it goes on running,
*overtime*, and its fate is the caller's. Either it is killed when its processors are needed, by a
waiting job that could start now with them (:meth:`Safeguard.needed`; Slurm's PreemptMode=REQUEUE):
the youngest overtime jobs go first (the least work lost per processor freed), and no more of them
than the waiting job needs. Or the caller decides at once: :meth:`Safeguard.kill` or
:meth:`Safeguard.spare` (it runs on to its end).

With Batsim this takes CALL_ME_LATER at start + divider, KILL_JOB when the call comes and
the job still runs, then REGISTER_PROFILE of a copy of the job's ``delay`` profile and
REGISTER_JOB of ``<id>#<attempt>`` (same ``res`` and walltime) with SET_JOB_METADATA recording
the lineage. The embedded engine goes through the very same decisions.

The copy is registered whether or not Batsim runs with ``--enable-profile-reuse``: every
decision is a message that takes a step of Batsim's clock, and the steps decide which events
due at the same instant reach the scheduler together (:mod:`batsim_classifier_scheduler.sim.simgrid`). Decisions
that depended on that flag would make a run under Batsim part ways with ``simulate``, which
cannot know the flag. Only a profile whose delay we do not know is reused, which needs the flag.
"""

from __future__ import annotations

import heapq
from dataclasses import replace
from typing import Callable, Iterable

from batsim_classifier_scheduler.core.alarms import Alarms
from batsim_classifier_scheduler.core.messages import Decision, Kill, RegisterJob, RegisterProfile, SetMetadata
from batsim_classifier_scheduler.core.job import Job
from batsim_classifier_scheduler.errors import ConfigError


class Safeguard:
    """Deadlines of small jobs, the kills they cause, and the resubmissions that follow."""

    def __init__(self, alarms: Alarms, profile_reuse: bool = False, on_demand: bool = False) -> None:
        self.alarms = alarms
        self.profile_reuse = profile_reuse
        self.on_demand = on_demand
        self._deadlines: list[tuple[float, str]] = []  # (start + divider, job id)
        self._started: dict[str, tuple[float, int]] = {}  # watched job id -> (start, processors), on_demand only
        self.overtime: dict[str, tuple[float, int]] = {}  # past the deadline, running, not killed (on_demand)
        self.killing: set[str] = set()  # kill requested, JOB_COMPLETED(KILLED) not seen yet
        self._killing_res: dict[str, int] = {}  # the processors of the overtime jobs being killed
        self.kills = 0

    def watch(self, job_id: str, deadline: float, now: float, res: int = 1) -> list[Decision]:
        """A small job of ``res`` processors started: ask to be called at its deadline."""
        heapq.heappush(self._deadlines, (deadline, job_id))
        if self.on_demand:
            self._started[job_id] = (now, res)
        return self.alarms.at(deadline, now)

    def due(self, now: float, running: Callable[[str], bool]) -> list[Decision]:
        """Kill the watched jobs whose deadline has come and that are still running (``on_demand``: they
        go on running, overtime)."""
        victims = []
        while self._deadlines and self._deadlines[0][0] <= now:
            _, job_id = heapq.heappop(self._deadlines)
            if running(job_id) and job_id not in self.killing:
                victims.append(job_id)
        if self.on_demand:
            for job_id in victims:
                self.overtime[job_id] = self._started.pop(job_id)
            return []
        return self.kill(victims)

    def needed(self, res: int, free: int, among: Iterable[str] | None = None) -> list[Decision]:
        """A waiting job of ``res`` processors could start now with the ``free`` processors and those of
        overtime jobs (``among`` them, default all): kill the fewest and youngest of them that make room for it
        (counting the jobs being killed already). Nothing when they cannot make room for it."""
        free += sum(self._killing_res.values())
        if free >= res or not self.overtime:
            return []
        youngest = sorted(self.overtime if among is None else among, key=lambda job_id: -self.overtime[job_id][0])
        victims = []
        for job_id in youngest:
            victims.append(job_id)
            free += self.overtime[job_id][1]
            if free >= res:
                break
        else:
            return []  # even all of them would not make room
        for job_id in reversed(victims[:-1]):  # the oldest first: spare those the others make room without
            if free - self.overtime[job_id][1] >= res:
                free -= self.overtime[job_id][1]
                victims.remove(job_id)
        return self.kill(victims)

    def spare(self, job_id: str) -> None:
        """An overtime job runs on to its end: it is no longer watched."""
        del self.overtime[job_id]

    def kill(self, victims: list[str]) -> list[Decision]:
        """Kill these running jobs (overtime or due)."""
        if not victims:
            return []
        for job_id in victims:
            if job_id in self.overtime:
                self._killing_res[job_id] = self.overtime.pop(job_id)[1]
        self.killing.update(victims)
        self.kills += len(victims)
        return [Kill(tuple(victims))]

    @property
    def pending(self) -> bool:
        """Whether a kill may still happen (a watched deadline is to come, a job runs overtime, or a kill is
        in progress)."""
        return bool(self._deadlines or self.overtime or self.killing)

    def ended(self, job_id: str) -> bool:
        """A job finished: whether it was one we were killing (it is then forgotten). A job we were
        killing may also end normally, when its completion raced our kill."""
        self._started.pop(job_id, None)
        self.overtime.pop(job_id, None)
        self._killing_res.pop(job_id, None)
        if job_id in self.killing:
            self.killing.discard(job_id)
            return True
        return False

    def resubmit(self, killed: Job, original: Job, attempt: int, now: float) -> tuple[Job, list[Decision]]:
        """The large job that replaces a killed one, and the decisions that register it.

        As in the paper's Algorithm 2, it is the same job moving from Q_small to Q: the returned job
        keeps the original's place in the queue order (its ``subtime``), while Batsim registers it now (the
        ``RegisterJob`` decision carries the kill time).
        """
        original_id = original.id
        workload, _, name = original_id.partition("!")
        job_id = f"{workload}!{name}#{attempt}"
        profile = killed.profile
        decisions: list[Decision] = []
        if killed.runtime is not None:
            # a copy: Batsim garbage-collects a profile once its jobs ended (unless profiles are reused)
            profile = f"{profile}_resubmit_{name}_{attempt}"
            decisions.append(RegisterProfile(workload, profile, killed.runtime))
        elif not self.profile_reuse:
            raise ConfigError(f"cannot resubmit {killed.id!r}: its profile {profile!r} is not a known delay "
                              "profile; run Batsim with --enable-profile-reuse")
        registered = Job(job_id, now, killed.res, killed.walltime, profile, killed.runtime, dict(killed.extras))
        decisions.append(RegisterJob(registered))
        decisions.append(SetMetadata(job_id, f"parent={original_id};class=large"))
        return replace(registered, subtime=original.subtime), decisions
