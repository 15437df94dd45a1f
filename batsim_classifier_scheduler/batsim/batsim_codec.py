"""Batsim's side of its protocol, for our Batsim peer: events into messages, replies into decisions."""

from __future__ import annotations

import math
from typing import Any, Callable, Mapping, Sequence

from procset import ProcSet

from batsim_classifier_scheduler.batsim import wire
from batsim_classifier_scheduler.batsim.rules import JOB_FIELDS, WORKLOAD_SUBTIME, delay_of, read_events, read_job
from batsim_classifier_scheduler.batsim.wire import Invalid
from batsim_classifier_scheduler.core import messages as events
from batsim_classifier_scheduler.core.job import Job
from batsim_classifier_scheduler.core.machines import from_interval_string, to_interval_string
from batsim_classifier_scheduler.errors import ProtocolError

#: JOB_COMPLETED's ``return_code`` per state. Batsim uses the profile's ``ret`` (default 0)
#: for success and failure; walltime and kills leave it at -1.
RETURN_CODES = {events.SUCCESS: 0, events.FAILED: 1, events.WALLTIME: -1, events.KILLED: -1, events.REJECTED: -1}

#: The ``config`` of SIMULATION_BEGINS as Batsim 4.2.1 sends it without special flags.
DEFAULT_CONFIG: dict[str, Any] = {
    "redis-enabled": False, "redis-hostname": "127.0.0.1", "redis-port": 6379, "redis-prefix": "default",
    "profiles-forwarded-on-submission": False, "dynamic-jobs-enabled": False,
    "dynamic-jobs-acknowledged": False, "profile-reuse-enabled": False, "sched-config": "",
    "forward-unknown-events": False,
}

# Event types real Batsim may send, and decision types it accepts but our peer does not play.
_BATSIM_TYPES = frozenset({"SIMULATION_BEGINS", "SIMULATION_ENDS", "JOB_SUBMITTED", "JOB_COMPLETED",
                           "JOB_KILLED", "REQUESTED_CALL", "NOTIFY", "QUERY", "ANSWER",
                           "RESOURCE_STATE_CHANGED", "FROM_JOB_MSG"})
_UNSUPPORTED_DECISIONS = frozenset({"QUERY", "CHANGE_JOB_STATE", "SET_RESOURCE_STATE", "TO_JOB_MSG"})

_REPLIES = wire.decoder(wire.AnyEvent)


def _job_dict(job: Job) -> dict[str, Any]:
    """A job object as Batsim forwards it: the fixed fields, then the extra ones."""
    subtime = job.extras.get(WORKLOAD_SUBTIME, job.subtime)
    fields = {"id": job.id, "subtime": subtime, "walltime": job.walltime if job.walltime > 0 else -1,
              "res": int(job.res), "profile": job.profile}
    fields.update((k, v) for k, v in job.extras.items() if k not in JOB_FIELDS and k != WORKLOAD_SUBTIME)
    return fields


class BatsimCodec:
    """Events -> Batsim messages, scheduler replies -> decisions, for our Batsim peer.

    Parameters
    ----------
    host_names : the compute hosts in resource-id order; default ``a0, a1, a10, ...``
        (sorted names, as :func:`batsim_classifier_scheduler.platforms.platform_xml` makes them).
    workloads : ``{"w0": path}`` for SIMULATION_BEGINS.
    profiles : ``{"w0": {name: profile}}``, the workloads' profiles. REGISTER_PROFILE adds
        to it; REGISTER_JOB must name one of them.
    alloc_of : a job's allocation (bit mask, ``ProcSet`` or interval string), for JOB_COMPLETED.
    progress_of : a killed job's progress in [0, 1], or None when it was not running any
        more (then JOB_KILLED lists no progress for it, as Batsim does).

    The codec checks what Batsim's reader checks (shapes, member counts, ids, intervals,
    profiles). Job states, ``--enable-dynamic-jobs``, CALL_ME_LATER in the past and the
    clock (Batsim sleeps until each decision's timestamp and the reply's ``now``, see
    :meth:`decode_timed`) are the engine's business.
    """

    def __init__(self, host_names: Sequence[str] | None = None, workloads: Mapping[str, str] | None = None,
                 profiles: Mapping[str, Mapping[str, Any]] | None = None,
                 alloc_of: Callable[[str], int | ProcSet | str] | None = None,
                 progress_of: Callable[[str], float | None] | None = None) -> None:
        self.host_names = list(host_names) if host_names is not None else None
        self.workloads = dict(workloads or {})
        self.profiles: dict[str, dict[str, Any]] = {wl: dict(table) for wl, table in (profiles or {}).items()}
        self.alloc_of = alloc_of
        self.progress_of = progress_of
        self.forward_profiles = False  # from SIMULATION_BEGINS' config
        self.now: float | None = None  # the ``now`` of the last message sent
        self.messages = 0
        self._job_profiles: dict[str, str] = {}
        self._readers: dict[str, Callable[[dict[str, Any]], events.Decision]] = {
            "EXECUTE_JOB": self._execute,
            "REJECT_JOB": self._reject,
            "KILL_JOB": self._kill,
            "CALL_ME_LATER": self._call_me_later,
            "REGISTER_PROFILE": self._register_profile,
            "REGISTER_JOB": self._register_job,
            "SET_JOB_METADATA": self._set_metadata,
            "NOTIFY": self._notify,
            "ANSWER": self._answer,
        }

    # --- encoding --------------------------------------------------------------------

    def encode(self, now: float, sent: Sequence[events.Event]) -> bytes:
        """One Batsim message carrying the events ``sent`` (each stamped with its own ``time``)."""
        where = f"Batsim message {self.messages + 1}"
        if self.now is not None and now < self.now:
            raise ProtocolError(f"{where}: now={now} is before the previous message's now={self.now}")
        out = []
        last = -math.inf
        for index, event in enumerate(sent):
            at = f"{where}, event {index} ({type(event).__name__})"
            if not last <= event.time <= now:
                raise ProtocolError(f"{at}: time {event.time} is not in [{last}, now={now}]")
            last = event.time
            kind, data = self._event(event, at)
            out.append({"timestamp": float(event.time), "type": kind, "data": data})
        text = wire.encode({"now": float(now), "events": out}, where)
        self.messages += 1
        self.now = now
        return text

    def _event(self, event: events.Event, where: str) -> tuple[str, dict[str, Any]]:
        if isinstance(event, events.JobSubmitted):
            job = event.job
            self._job_profiles[job.id] = job.profile
            data: dict[str, Any] = {"job_id": job.id, "job": _job_dict(job)}
            if self.forward_profiles:
                data["profile"] = self._profile_object(job, where)
            return "JOB_SUBMITTED", data
        if isinstance(event, events.JobCompleted):
            if self.alloc_of is None:
                raise ProtocolError(f"{where}: JOB_COMPLETED needs alloc_of")
            alloc = self.alloc_of(event.job_id)
            if isinstance(alloc, int):
                alloc = to_interval_string(alloc)
            return "JOB_COMPLETED", {"job_id": event.job_id, "job_state": event.state,
                                     "return_code": RETURN_CODES.get(event.state, -1), "alloc": str(alloc)}
        if isinstance(event, events.JobKilled):
            return "JOB_KILLED", {"job_ids": list(event.job_ids), "job_progress": self._progress(event, where)}
        if isinstance(event, events.RequestedCall):
            return "REQUESTED_CALL", {}
        if isinstance(event, events.NoMoreStaticJobs):
            return "NOTIFY", {"type": "no_more_static_job_to_submit"}
        if isinstance(event, events.SimulationEnds):
            return "SIMULATION_ENDS", {}
        if isinstance(event, events.SimulationBegins):
            return "SIMULATION_BEGINS", self._simulation_begins(event, where)
        if isinstance(event, events.WaitingTimeQuery):
            return "QUERY", {"requests": {"estimate_waiting_time": {
                "job_id": event.job.id,
                "job": {"res": int(event.job.res), "walltime": event.job.walltime if event.job.walltime > 0 else -1}}}}
        if isinstance(event, events.Unhandled) and event.type in _BATSIM_TYPES:
            return event.type, dict(event.data)
        raise ProtocolError(f"{where}: Batsim sends no such event")

    def _profile_object(self, job: Job, where: str) -> dict[str, Any]:
        """The profile of ``job``, for --forward-profiles-on-submission."""
        profile = self.profiles.get(job.workload, {}).get(job.profile)
        if profile is None and job.runtime is None:
            raise ProtocolError(f"{where}: job {job.id!r} has an unknown profile {job.profile!r} and no runtime")
        return profile if profile is not None else {"type": "delay", "delay": job.runtime}

    def _progress(self, event: events.JobKilled, where: str) -> dict[str, Any]:
        if self.progress_of is None:
            raise ProtocolError(f"{where}: JOB_KILLED needs progress_of")
        progress = {}
        for job_id in event.job_ids:
            value = self.progress_of(job_id)
            if value is not None:
                # Batsim prints every number with 6 decimals (``%f``)
                progress[job_id] = {"profile_name": self._job_profiles.get(job_id, ""), "progress": round(value, 6)}
        return progress

    def _simulation_begins(self, event: events.SimulationBegins, where: str) -> dict[str, Any]:
        nb = event.nb_resources
        names = self.host_names if self.host_names is not None else sorted(f"a{i}" for i in range(nb))
        if len(names) != nb:
            raise ProtocolError(f"{where}: {len(names)} host names for {nb} resources")
        config = {**DEFAULT_CONFIG, **event.config}
        self.forward_profiles = bool(config["profiles-forwarded-on-submission"])
        return {
            "nb_resources": nb, "nb_compute_resources": nb, "nb_storage_resources": 0,
            "allow_compute_sharing": False, "allow_storage_sharing": True, "config": config,
            "compute_resources": [{"id": i, "name": name, "state": "idle", "properties": {"role": ""},
                                   "zone_properties": {}} for i, name in enumerate(names)],
            "storage_resources": [],
            "workloads": dict(self.workloads),
            "profiles": {wl: dict(table) for wl, table in self.profiles.items()},
        }

    # --- decoding --------------------------------------------------------------------

    def decode(self, text: str | bytes) -> tuple[float, list[events.Decision]]:
        """Validate one scheduler reply; its ``now`` and decisions, in order."""
        now, timed = self.decode_timed(text)
        return now, [decision for _, decision in timed]

    def decode_timed(self, text: str | bytes) -> tuple[float, list[tuple[float, events.Decision]]]:
        """Like :meth:`decode`, with each decision's timestamp (Batsim applies it then)."""
        where = f"reply to Batsim message {self.messages}"
        message = wire.decode(_REPLIES, text, where)
        decisions = read_events(message, where, self._decision)  # Batsim reads the events first
        if self.now is not None and message.now < self.now:
            raise ProtocolError(f"{where}: now={message.now} is before the message's now={self.now}")
        return message.now, decisions

    def _decision(self, event: wire.AnyEvent) -> tuple[float, events.Decision]:
        reader = self._readers.get(event.type)
        if reader is None:
            if event.type in _UNSUPPORTED_DECISIONS:
                raise Invalid(f"{event.type} is valid in Batsim 4.2.1 but our Batsim peer does not play it")
            raise Invalid(f"unknown event type {event.type!r} (Batsim aborts)")
        return event.timestamp, reader(event.data)

    @staticmethod
    def _members(data: dict[str, Any], allowed: tuple[int, ...]) -> None:
        if len(data) not in allowed:
            raise Invalid(f"'data' must have {' or '.join(map(str, allowed))} members "
                          f"(Batsim asserts it), got {sorted(data)}")

    @staticmethod
    def _job_id(data: dict[str, Any]) -> str:
        return wire.job_id(wire.field(data, "job_id", "a string", "data"), "data.job_id")

    def _execute(self, data: dict[str, Any]) -> events.Execute:
        self._members(data, (2, 3))
        job_id = self._job_id(data)
        alloc = wire.intervals(wire.field(data, "alloc", "a string", "data"), "data.alloc")
        extra = set(data) - {"job_id", "alloc"}
        if extra - {"mapping", "storage_mapping", "additional_io_job"}:
            raise Invalid(f"unexpected member(s) {sorted(extra)} in 'data'")
        return events.Execute(job_id, from_interval_string(alloc))  # a mapping is meaningless for delay jobs: ignored

    def _reject(self, data: dict[str, Any]) -> events.Reject:
        self._members(data, (1,))
        return events.Reject(self._job_id(data), "")

    def _kill(self, data: dict[str, Any]) -> events.Kill:
        self._members(data, (1,))
        job_ids = wire.job_ids(wire.field(data, "job_ids", "an array", "data"), "data.job_ids")
        if not job_ids:
            raise Invalid("'data.job_ids' is empty")
        return events.Kill(job_ids)

    def _call_me_later(self, data: dict[str, Any]) -> events.CallMeLater:
        self._members(data, (1,))
        return events.CallMeLater(float(wire.field(data, "timestamp", "a number", "data")))

    def _register_profile(self, data: dict[str, Any]) -> events.RegisterProfile:
        workload = wire.field(data, "workload_name", "a string", "data")
        name = wire.field(data, "profile_name", "a string", "data")
        profile = wire.field(data, "profile", "an object", "data")
        kind = wire.field(profile, "type", "a string", "data.profile")
        if kind != "delay":
            raise Invalid(f"profile type {kind!r} is not supported (only 'delay')")
        delay = wire.field(profile, "delay", "a number", "data.profile")
        if delay < 0:
            raise Invalid(f"'data.profile.delay' must be >= 0, got {delay}")
        table = self.profiles.setdefault(workload, {})
        if name in table:
            raise Invalid(f"profile {name!r} already exists in workload {workload!r} (Batsim aborts)")
        table[name] = profile
        return events.RegisterProfile(workload, name, float(delay))

    def _register_job(self, data: dict[str, Any]) -> events.RegisterJob:
        job_id = self._job_id(data)
        if "job" not in data:
            raise Invalid("missing 'data.job' (Batsim's Redis mode is not supported)")
        obj = wire.field(data, "job", "an object", "data")
        job = read_job(obj, job_id, "data.job")
        workload = job_id.partition("!")[0]
        if workload not in self.profiles and workload not in self.workloads:
            raise Invalid(f"workload {workload!r} does not exist (register a profile in it first)")
        known = self.profiles.get(workload, {})
        if job.profile not in known:
            raise Invalid(f"profile {job.profile!r} does not exist in workload {workload!r}")
        self._job_profiles[job_id] = job.profile
        return events.RegisterJob(Job(job_id, job.subtime, job.res, job.walltime, job.profile,
                                      delay_of(known[job.profile]), job.extras))

    def _set_metadata(self, data: dict[str, Any]) -> events.SetMetadata:
        self._members(data, (2,))
        job_id = self._job_id(data)
        metadata = wire.field(data, "metadata", "a string", "data")
        if '"' in metadata:
            raise Invalid("'data.metadata' may not contain '\"' (Batsim aborts)")
        return events.SetMetadata(job_id, metadata)

    @staticmethod
    def _notify(data: dict[str, Any]) -> events.RegistrationFinished:
        kind = wire.field(data, "type", "a string", "data")
        if kind == "registration_finished":
            return events.RegistrationFinished()
        if kind == "continue_registration":
            raise Invalid("NOTIFY continue_registration is not played by our Batsim peer")
        raise Invalid(f"unknown NOTIFY type {kind!r} (Batsim aborts)")

    def _answer(self, data: dict[str, Any]) -> events.AnswerWaitingTime:
        self._members(data, (1,))
        answer = wire.field(data, "estimate_waiting_time", "an object", "data")
        path = "data.estimate_waiting_time"
        job_id = wire.job_id(wire.field(answer, "job_id", "a string", path), f"{path}.job_id")
        estimate = wire.field(answer, "estimated_waiting_time", "a number", path)
        return events.AnswerWaitingTime(job_id, float(estimate))
