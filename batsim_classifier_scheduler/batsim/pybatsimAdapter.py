"""Our scheduler as a pybatsim 3.2.1 scheduler class, for users of pybatsim's launcher::

    pybatsim "$(python -c 'import batsim_classifier_scheduler.batsim.pybatsimAdapter as m; print(m.__file__)')" \\
        -s tcp://*:28000 -o '{"policy": "saf"}'

pybatsim names the class after the file (``pybatsimAdapter.py`` -> ``PybatsimAdapter``),
hence the module's name. pybatsim is optional: install it with
``pip install --no-deps pybatsim==3.2.1`` (it pins pyzmq<23, which does not build on
Python 3.11; it runs fine with a current pyzmq).

The adapter rebuilds each Batsim message from pybatsim's callbacks, decodes it with our
:class:`SchedulerCodec` and decides with the same :class:`DecisionCore` as ``serve`` (built by the
composition root, :func:`batsim_classifier_scheduler.compose.build_core`), then hands the encoded decisions back to
pybatsim: one decision path for every front end.
"""

from __future__ import annotations

import json
from typing import Any

from batsim.batsim import BatsimScheduler  # pybatsim

from batsim_classifier_scheduler.batsim.scheduler_codec import SchedulerCodec
from batsim_classifier_scheduler.batsim.server import config_at_begin
from batsim_classifier_scheduler.compose import build_core
from batsim_classifier_scheduler.core.messages import Execute, Kill, Reject, SimulationBegins
from batsim_classifier_scheduler.core.decision import DecisionCore


class PybatsimAdapter(BatsimScheduler):
    """pybatsim callbacks in, our decisions out. ``options`` are our scheduling options."""

    def __init__(self, options: dict[str, Any] | None = None) -> None:
        super().__init__(options or {})
        self.codec = SchedulerCodec()
        self.core: DecisionCore | None = None
        self._events: list[dict[str, Any]] = []

    # --- pybatsim callbacks, each one an event of the current message ---------------

    def onBeforeEvents(self) -> None:
        self._events = []

    def onSimulationBegins(self) -> None:
        bs = self.bs
        self._add("SIMULATION_BEGINS", {
            "nb_resources": bs.nb_resources, "nb_compute_resources": bs.nb_compute_resources,
            "nb_storage_resources": bs.nb_storage_resources, "allow_compute_sharing": bs.allow_compute_sharing,
            "allow_storage_sharing": bs.allow_storage_sharing, "config": bs.batconf,
            "compute_resources": list(bs.compute_resources.values()),
            "storage_resources": list(bs.storage_resources.values()),
            "workloads": bs.workloads, "profiles": bs.profiles,
        })

    def onJobSubmission(self, job) -> None:
        self._add("JOB_SUBMITTED", {"job_id": job.id, "job": job.json_dict})

    def onJobCompletion(self, job) -> None:
        self._add("JOB_COMPLETED", {"job_id": job.id, "job_state": job.job_state.name,
                                    "return_code": job.return_code})

    def onJobsKilled(self, jobs) -> None:
        self._add("JOB_KILLED", {"job_ids": [job.id for job in jobs]})

    def onRequestedCall(self) -> None:
        self._add("REQUESTED_CALL", {})

    def onNoMoreJobsInWorkloads(self) -> None:
        self._add("NOTIFY", {"type": "no_more_static_job_to_submit"})

    def onSimulationEnds(self) -> None:
        self._add("SIMULATION_ENDS", {})

    # --- one decision per message ----------------------------------------------------

    def onNoMoreEvents(self) -> None:
        now, events = self.codec.decode(json.dumps({"now": self.bs.time(), "events": self._events}))
        if self.core is None:
            begins = next(e for e in events if isinstance(e, SimulationBegins))
            self.core = build_core(config_at_begin(begins, self.options, {}))
        decisions = self.core.decide(now, events)
        # Job decisions go through pybatsim's API so that its own bookkeeping stays right;
        # the others are encoded by our codec and sent as they are.
        others = []
        for decision in decisions:
            if isinstance(decision, Execute):
                job = self.bs.jobs[decision.job_id]
                job.allocation = decision.alloc
                self.bs.execute_job(job)
            elif isinstance(decision, Reject):
                self.bs.reject_jobs_by_id([decision.job_id])
            elif isinstance(decision, Kill):
                self.bs.kill_jobs([self.bs.jobs[job_id] for job_id in decision.job_ids])
            else:
                others.append(decision)
        if others:
            self.bs._events_to_send.extend(json.loads(self.codec.encode(now, others))["events"])

    def _add(self, kind: str, data: dict[str, Any]) -> None:
        self._events.append({"timestamp": self.bs.time(), "type": kind, "data": data})
