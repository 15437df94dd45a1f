"""The decision process's side of Batsim's protocol: Batsim's messages into events, decisions into replies."""

from __future__ import annotations

from typing import Any, Callable, Sequence

from batsim_classifier_scheduler.batsim import wire
from batsim_classifier_scheduler.batsim.rules import (WORKLOAD_SUBTIME, delay_of, job_extras, read_events, read_job,
                                                      read_walltime, usual_job)
from batsim_classifier_scheduler.batsim.wire import UNSET, Invalid
from batsim_classifier_scheduler.core import messages as events
from batsim_classifier_scheduler.core.job import Job
from batsim_classifier_scheduler.core.machines import to_interval_string
from batsim_classifier_scheduler.errors import ProtocolError
from batsim_classifier_scheduler.util.values import MAX_MACHINES, MAX_SECONDS

#: The ``job_state`` values of JOB_COMPLETED.
JOB_STATES = frozenset({events.SUCCESS, events.FAILED, events.WALLTIME, events.KILLED, events.REJECTED})

#: The members of SIMULATION_BEGINS' ``config`` the scheduler reads, and their kinds.
_CONFIG_KINDS = {"dynamic-jobs-enabled": "a boolean", "dynamic-jobs-acknowledged": "a boolean",
                 "profile-reuse-enabled": "a boolean", "profiles-forwarded-on-submission": "a boolean",
                 "sched-config": "a string"}

_BATSIM_MESSAGES = wire.decoder(wire.BatsimEvent)

#: The allocations' interval strings kept, at most (most allocations repeat: each is written once), of the masks
#: below this (a hundred machines or so).
_ALLOCS_KEPT = 16384
_SMALL_MASK = 1 << 128


class SchedulerCodec:
    """Batsim messages -> events, decisions -> replies, for a decision process.

    Attributes
    ----------
    profiles : ``{"w0": {name: profile}}`` from SIMULATION_BEGINS, plus the profiles this
        side registered; a submitted job's ``runtime`` is its delay profile's ``delay``.
    now : the ``now`` of the last decoded message (None before the first).
    ended : whether a decoded message carried SIMULATION_ENDS.
    """

    def __init__(self) -> None:
        self.profiles: dict[str, dict[str, Any]] = {}
        self.now: float | None = None
        self.messages = 0
        self.ended = False
        self._allocs: dict[int, str] = {}  # machines' bit mask -> its interval string, written once (_execute)
        self._sent: dict[str, str] = {}  # a running job's id -> the allocation sent for it
        self._delays: dict[tuple[str, str], float | None] = {}  # (workload, profile name) -> its delay (_delay)
        self._readers: dict[type, Callable[[Any], events.Event]] = {
            wire.SimulationBeginsEvent: self._simulation_begins,
            wire.JobSubmittedEvent: self._job_submitted,
            wire.JobCompletedEvent: self._job_completed,
            wire.JobKilledEvent: self._job_killed,
            wire.RequestedCallEvent: lambda e: events.RequestedCall(e.timestamp),
            wire.NotifyEvent: self._notify,
            wire.QueryEvent: self._query,
            wire.SimulationEndsEvent: self._simulation_ends,
            wire.ResourceStateChangedEvent: self._resource_state_changed,
            wire.AnswerEvent: lambda e: events.Unhandled(e.timestamp, "ANSWER", e.data),
            wire.FromJobMsgEvent: self._from_job_msg,
        }
        self._writers: dict[type, Callable[[Any], tuple[str, dict[str, Any]]]] = {
            events.Execute: self._execute,
            events.Reject: lambda d: ("REJECT_JOB", {"job_id": d.job_id}),
            events.Kill: self._kill,
            events.CallMeLater: lambda d: ("CALL_ME_LATER", {"timestamp": wire.finite(d.time, "CALL_ME_LATER's time")}),
            events.RegisterProfile: self._register_profile,
            events.RegisterJob: self._register_job,
            events.SetMetadata: self._set_metadata,
            events.RegistrationFinished: lambda d: ("NOTIFY", {"type": "registration_finished"}),
            events.AnswerWaitingTime: lambda d: ("ANSWER", {"estimate_waiting_time": {
                "job_id": d.job_id, "estimated_waiting_time": wire.finite(d.estimate, "the estimated waiting time")}}),
        }

    # --- decoding --------------------------------------------------------------------

    def decode(self, text: str | bytes) -> tuple[float, list[events.Event]]:
        """Validate one Batsim message; its ``now`` and events, in order."""
        self.messages += 1
        where = f"Batsim message {self.messages}"
        message = wire.decode(_BATSIM_MESSAGES, text, where)
        now = message.now
        if self.now is not None and now < self.now:
            raise ProtocolError(f"{where}: now={now} is before the previous message's now={self.now}")
        if not 0 <= now <= MAX_SECONDS:  # simulated time starts at 0; the scheduler's calendar ends there
            raise ProtocolError(f"{where}: now={now} is outside the simulator's time range (0 to {MAX_SECONDS:.0f} s)")
        decoded = self._one_event(message) if len(message.events) == 1 else None
        if decoded is None:
            decoded = read_events(message, where, self._read, first=0.0)
        self.now = now
        return now, decoded

    def _one_event(self, message: wire.Message) -> list[events.Event] | None:
        """The usual message's event (one, read without :func:`read_events`' loop); None when its time or a field is
        wrong (:func:`read_events` then reads it again, to say where). The readers change nothing before they
        refuse a field."""
        event = message.events[0]
        if not 0.0 <= event.timestamp <= message.now:
            return None
        try:
            return [self._readers[type(event)](event)]
        except Invalid:
            return None

    def _read(self, event: Any) -> events.Event:
        """The event of a decoded Batsim event, read by the reader of its type."""
        return self._readers[type(event)](event)

    def _simulation_begins(self, event: wire.SimulationBeginsEvent) -> events.SimulationBegins:
        data = event.data
        nb = data.nb_compute_resources if data.nb_compute_resources is not UNSET else data.nb_resources
        if nb is UNSET:
            raise Invalid("missing 'data.nb_resources'")
        if not 0 < nb <= MAX_MACHINES:  # the machines are a bit mask: 2**60 of them would fill the memory
            which = "nb_compute_resources" if data.nb_compute_resources is not UNSET else "nb_resources"
            raise Invalid(f"'data.{which}' must be in 1..{MAX_MACHINES}, got {nb}")
        for key, kind in _CONFIG_KINDS.items():
            wire.field(data.config, key, kind, "data.config", None)
        for workload, table in data.profiles.items():
            if not isinstance(table, dict):
                raise Invalid(f"'data.profiles.{workload}' must be an object")
        self.profiles = {workload: dict(table) for workload, table in data.profiles.items()}
        self._delays.clear()
        workloads = {} if data.workloads is UNSET else {str(name): path for name, path in data.workloads.items()
                                                        if isinstance(path, str)}
        return events.SimulationBegins(event.timestamp, nb, data.config, workloads)

    def _simulation_ends(self, event: wire.SimulationEndsEvent) -> events.SimulationEnds:
        self.ended = True
        return events.SimulationEnds(event.timestamp)

    def _job_submitted(self, event: wire.JobSubmittedEvent) -> events.JobSubmitted:
        data = event.data
        job_id = data.job_id
        workload, _, name = job_id.partition("!")
        if not workload or not name or "!" in name:  # (a string, by its type: wire.job_id's other checks)
            wire.job_id(job_id, "data.job_id")
        obj = data.job
        if obj is UNSET:
            raise Invalid("missing 'data.job' (Batsim's Redis mode is not supported)")
        subtime, res, walltime, profile = usual_job(obj, job_id) or read_job(obj, job_id, "data.job")[:4]
        runtime = self._delay(workload, profile) if data.profile is UNSET else delay_of(data.profile)
        extras = job_extras(obj)
        extras[WORKLOAD_SUBTIME] = subtime
        time = event.timestamp
        return events.JobSubmitted(time, Job(job_id, time, res, walltime, profile, runtime, extras))

    def _delay(self, workload: str, profile: str) -> float | None:
        """The ``delay`` of the profile ``profile`` of ``workload`` (None when it is not a known delay profile), read
        once per profile: :attr:`profiles` changes only at SIMULATION_BEGINS and REGISTER_PROFILE, which clear
        what was read."""
        key = (workload, profile)
        delays = self._delays
        if key not in delays:
            delays[key] = delay_of(self.profiles.get(workload, {}).get(profile))
        return delays[key]

    def _job_completed(self, event: wire.JobCompletedEvent) -> events.JobCompleted:
        data = event.data
        job_id = wire.job_id(data.job_id, "data.job_id")
        if data.job_state not in JOB_STATES:
            raise Invalid(f"'data.job_state' must be one of {sorted(JOB_STATES)}, got {data.job_state!r}")
        if data.alloc is not UNSET and data.alloc != self._sent.get(job_id):  # not needed: only checked (the one
            wire.intervals(data.alloc, "data.alloc")  # sent for it is valid)
        self._sent.pop(job_id, None)
        return events.JobCompleted(event.timestamp, job_id, data.job_state)

    @staticmethod
    def _job_killed(event: wire.JobKilledEvent) -> events.JobKilled:
        return events.JobKilled(event.timestamp, wire.job_ids(event.data.job_ids, "data.job_ids"))

    @staticmethod
    def _notify(event: wire.NotifyEvent) -> events.Event:
        data = event.data
        kind = wire.field(data, "type", "a string", "data")
        if kind == "no_more_static_job_to_submit":
            return events.NoMoreStaticJobs(event.timestamp)
        if kind in ("event_machine_available", "event_machine_unavailable"):
            wire.intervals(wire.field(data, "resources", "a string", "data"), "data.resources")
        return events.Unhandled(event.timestamp, "NOTIFY", data)

    def _query(self, event: wire.QueryEvent) -> events.Event:
        time, data = event.timestamp, event.data
        requests = wire.field(data, "requests", "an object", "data")
        if "estimate_waiting_time" not in requests:
            return events.Unhandled(time, "QUERY", data)
        path = "data.requests.estimate_waiting_time"
        request = wire.field(requests, "estimate_waiting_time", "an object", "data.requests")
        job_id = wire.job_id(wire.field(request, "job_id", "a string", path), f"{path}.job_id")
        obj = wire.field(request, "job", "an object", path)
        res = wire.field(obj, "res", "an integer", f"{path}.job")
        walltime = read_walltime(obj, f"{path}.job")
        profile = wire.field(obj, "profile", "a string", f"{path}.job", "")
        runtime = delay_of(self.profiles.get(job_id.partition("!")[0], {}).get(profile))
        extras = job_extras(obj)
        return events.WaitingTimeQuery(time, Job(job_id, time, res, walltime, profile, runtime, extras))

    @staticmethod
    def _resource_state_changed(event: wire.ResourceStateChangedEvent) -> events.Unhandled:
        data = event.data
        wire.intervals(wire.field(data, "resources", "a string", "data"), "data.resources")
        wire.field(data, "state", "a string", "data")
        return events.Unhandled(event.timestamp, "RESOURCE_STATE_CHANGED", data)

    @staticmethod
    def _from_job_msg(event: wire.FromJobMsgEvent) -> events.Unhandled:
        wire.job_id(wire.field(event.data, "job_id", "a string", "data"), "data.job_id")
        return events.Unhandled(event.timestamp, "FROM_JOB_MSG", event.data)

    # --- encoding --------------------------------------------------------------------

    def encode(self, now: float, decisions: Sequence[events.Decision]) -> bytes:
        """The reply: every decision as one event stamped ``now`` (the received ``now``)."""
        where = f"reply to Batsim message {self.messages}"
        if self.now is not None and now < self.now:
            raise ProtocolError(f"{where}: now={now} is before the received now={self.now}")
        out = []
        try:
            now = wire.finite(now, "now")
            for index, decision in enumerate(decisions):
                writer = self._writers.get(type(decision))
                if writer is None:
                    raise Invalid(f"decision {index}: cannot encode {type(decision).__name__}")
                try:
                    kind, data = writer(decision)
                except Invalid as exc:
                    raise Invalid(f"decision {index}: {exc}") from None
                out.append({"timestamp": now, "type": kind, "data": data})
        except Invalid as exc:
            raise ProtocolError(f"{where}, {exc}") from None
        return wire.encode({"now": now, "events": out}, where)

    def encode_error(self, error: str, message: str | bytes | None = None) -> bytes:
        """A reply that stops Batsim at once with ``error`` in its log: a NOTIFY whose ``type``
        is the error text, stamped with ``message``'s ``now`` (or the last one known)."""
        known = [now for now in (self.now, wire.peek_now(message) if message is not None else None) if now is not None]
        now = max(known, default=0.0)
        error = error.encode(errors="backslashreplace").decode()  # no lone surrogate: it must be valid UTF-8
        return wire.encode({"now": now, "events": [{"timestamp": now, "type": "NOTIFY", "data": {"type": error}}]},
                           "error reply")

    def _execute(self, decision: events.Execute) -> tuple[str, dict[str, Any]]:
        mask = decision.machines
        alloc = self._allocs.get(mask)
        if alloc is None:
            if mask <= 0:
                raise Invalid(f"EXECUTE_JOB {decision.job_id!r}: empty allocation")
            alloc = to_interval_string(mask)
            if mask < _SMALL_MASK:  # (a large machine's allocations hardly repeat)
                if len(self._allocs) >= _ALLOCS_KEPT:
                    self._allocs.clear()
                self._allocs[mask] = alloc
        self._sent[decision.job_id] = alloc
        return "EXECUTE_JOB", {"job_id": decision.job_id, "alloc": alloc}

    @staticmethod
    def _kill(decision: events.Kill) -> tuple[str, dict[str, Any]]:
        if not decision.job_ids:
            raise Invalid("KILL_JOB with no job id")
        return "KILL_JOB", {"job_ids": list(decision.job_ids)}

    def _register_profile(self, decision: events.RegisterProfile) -> tuple[str, dict[str, Any]]:
        profile = {"type": "delay", "delay": wire.finite(decision.delay, "REGISTER_PROFILE's delay")}
        self.profiles.setdefault(decision.workload, {})[decision.name] = profile
        self._delays.clear()
        return "REGISTER_PROFILE", {"workload_name": decision.workload, "profile_name": decision.name,
                                    "profile": profile}

    @staticmethod
    def _register_job(decision: events.RegisterJob) -> tuple[str, dict[str, Any]]:
        job = decision.job
        try:
            wire.job_id(job.id, "data.job_id")
        except Invalid as exc:
            raise Invalid(f"REGISTER_JOB: {exc}") from None
        walltime = wire.finite(job.walltime, "REGISTER_JOB's walltime") if job.walltime > 0 else -1
        return "REGISTER_JOB", {"job_id": job.id, "job": {
            "id": job.id, "subtime": wire.finite(job.subtime, "REGISTER_JOB's subtime"), "res": int(job.res),
            "walltime": walltime, "profile": job.profile}}

    @staticmethod
    def _set_metadata(decision: events.SetMetadata) -> tuple[str, dict[str, Any]]:
        if '"' in decision.metadata:
            raise Invalid(f"SET_JOB_METADATA {decision.job_id!r}: the metadata may not contain '\"' "
                          f"(Batsim aborts), got {decision.metadata!r}")
        return "SET_JOB_METADATA", {"job_id": decision.job_id, "metadata": decision.metadata}
