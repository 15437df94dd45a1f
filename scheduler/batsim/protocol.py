"""Batsim 4.2.1's JSON protocol: the only module that knows its messages.

Two codecs, one per side of the socket:

- :class:`SchedulerCodec` (our decision process): decodes Batsim's messages into events,
  encodes decisions into the reply;
- :class:`BatsimCodec` (our embedded ``batsim-peer``): encodes events exactly as real
  Batsim 4.2.1 sends them, decodes and validates any scheduler's reply into decisions.

Both raise :class:`ProtocolError` naming the message, the event and the field. The JSON and
its types are handled by :mod:`scheduler.batsim.wire` (msgspec); this module holds the rules.

Envelope, both directions::

    {"now": float, "events": [{"timestamp": float, "type": str, "data": {...}}, ...]}

``timestamp <= now``, timestamps non-decreasing inside a message, ``now`` never decreasing
from one message to the next (a reply's ``now`` >= the ``now`` it answers).

Batsim -> scheduler (``data`` members; * = not in our events, checked when present)::

    SIMULATION_BEGINS  nb_resources, nb_compute_resources, nb_storage_resources,
                       allow_compute_sharing, allow_storage_sharing, config,
                       compute_resources [{id, name, state, properties, zone_properties}],
                       storage_resources, workloads {"w0": path}, profiles {"w0": {name: profile}}
    JOB_SUBMITTED      job_id "w0!12", job {id, subtime, res, walltime?, profile, extra fields...},
                       profile? (the profile object, with --forward-profiles-on-submission)
    JOB_COMPLETED      job_id, job_state, return_code*, alloc* "0-3 7"
    JOB_KILLED         job_ids [...], job_progress* {job_id: {profile_name, progress}}
    REQUESTED_CALL     {}
    NOTIFY             type: no_more_static_job_to_submit | no_more_external_event_to_occur |
                       event_machine_available | event_machine_unavailable (+ resources) | ...
    QUERY              requests {estimate_waiting_time: {job_id, job {res, walltime?}}}
    RESOURCE_STATE_CHANGED resources, state;  ANSWER {consumed_energy};  FROM_JOB_MSG job_id, msg
    SIMULATION_ENDS    {}

Scheduler -> Batsim (exactly these members: Batsim asserts the member counts)::

    EXECUTE_JOB        job_id, alloc "0-3 7"
    REJECT_JOB         job_id
    KILL_JOB           job_ids [...] (non-empty)
    CALL_ME_LATER      timestamp
    REGISTER_PROFILE   workload_name, profile_name, profile {"type": "delay", "delay": d}
    REGISTER_JOB       job_id, job {id, subtime, res, walltime (-1 = none), profile}
    SET_JOB_METADATA   job_id, metadata (no double quote)
    NOTIFY             type: registration_finished
    ANSWER             estimate_waiting_time {job_id, estimated_waiting_time}

Job times: on the scheduler side, ``Job.subtime`` is the **arrival time** (the timestamp of
JOB_SUBMITTED: the scheduler cannot know a job earlier), and the workload's own ``subtime``,
which Batsim writes as ``submission_time`` in ``_jobs.csv``, is kept in
``Job.extras["workload_subtime"]``. On the Batsim side ``Job.subtime`` is the workload's
``subtime``; :class:`BatsimCodec` writes ``extras["workload_subtime"]`` instead when present,
so a decoded job re-encodes unchanged.

A scheduler that must stop (a refused option, a broken message) replies with
:meth:`SchedulerCodec.encode_error`: a NOTIFY whose ``type`` is the error text. Batsim 4.2.1
aborts on it at once (exit code 134, ``Unknown NOTIFY type received ('<the text>')``) instead
of waiting forever for a reply; :class:`BatsimCodec` refuses it the same way.
"""

from __future__ import annotations

import math
from typing import Any, Callable, Mapping, Sequence, TypeVar

from procset import ProcSet

from scheduler.batsim import wire
from scheduler.batsim.wire import UNSET, Invalid
from scheduler.core.events import (
    FAILED,
    KILLED,
    REJECTED,
    SUCCESS,
    WALLTIME,
    AnswerWaitingTime,
    CallMeLater,
    Decision,
    Event,
    Execute,
    JobCompleted,
    JobKilled,
    JobSubmitted,
    Kill,
    NoMoreStaticJobs,
    RegisterJob,
    RegisterProfile,
    RegistrationFinished,
    Reject,
    RequestedCall,
    SetMetadata,
    SimulationBegins,
    SimulationEnds,
    Unhandled,
    WaitingTimeQuery,
)
from scheduler.core.job import Job
from scheduler.core.machines import from_interval_string, to_interval_string
from scheduler.errors import ProtocolError
from scheduler.values import MAX_MACHINES, MAX_SECONDS, is_number

#: The ``job_state`` values of JOB_COMPLETED.
JOB_STATES = frozenset({SUCCESS, FAILED, WALLTIME, KILLED, REJECTED})

#: JOB_COMPLETED's ``return_code`` per state. Batsim uses the profile's ``ret`` (default 0)
#: for success and failure; walltime and kills leave it at -1.
RETURN_CODES = {SUCCESS: 0, FAILED: 1, WALLTIME: -1, KILLED: -1, REJECTED: -1}

#: The ``config`` of SIMULATION_BEGINS as Batsim 4.2.1 sends it without special flags.
DEFAULT_CONFIG: dict[str, Any] = {
    "redis-enabled": False, "redis-hostname": "127.0.0.1", "redis-port": 6379, "redis-prefix": "default",
    "profiles-forwarded-on-submission": False, "dynamic-jobs-enabled": False,
    "dynamic-jobs-acknowledged": False, "profile-reuse-enabled": False, "sched-config": "",
    "forward-unknown-events": False,
}

#: The key of ``Job.extras`` holding the workload's ``subtime`` (see the module docstring).
WORKLOAD_SUBTIME = "workload_subtime"

_JOB_FIELDS = frozenset({"id", "subtime", "res", "walltime", "profile"})
#: The members of SIMULATION_BEGINS' ``config`` the scheduler reads, and their kinds.
_CONFIG_KINDS = {"dynamic-jobs-enabled": "a boolean", "dynamic-jobs-acknowledged": "a boolean",
                 "profile-reuse-enabled": "a boolean", "profiles-forwarded-on-submission": "a boolean",
                 "sched-config": "a string"}

# Event types real Batsim may send, and decision types it accepts but our peer does not play.
_BATSIM_TYPES = frozenset({"SIMULATION_BEGINS", "SIMULATION_ENDS", "JOB_SUBMITTED", "JOB_COMPLETED",
                           "JOB_KILLED", "REQUESTED_CALL", "NOTIFY", "QUERY", "ANSWER",
                           "RESOURCE_STATE_CHANGED", "FROM_JOB_MSG"})
_UNSUPPORTED_DECISIONS = frozenset({"QUERY", "CHANGE_JOB_STATE", "SET_RESOURCE_STATE", "TO_JOB_MSG"})

_BATSIM_MESSAGES = wire.decoder(wire.BatsimEvent)
_REPLIES = wire.decoder(wire.AnyEvent)

T = TypeVar("T")


# --- shared rules ---------------------------------------------------------------------------


def _read_events(message: wire.Message, where: str, read: Callable[[Any], T], first: float = -math.inf) -> list[T]:
    """``read(event)`` for each event of ``message``, whose timestamps must be non-decreasing, from
    ``first`` and at most ``now``; an :class:`Invalid` event is reported with its place."""
    now = message.now
    out = []
    last = first
    for index, event in enumerate(message.events):
        try:
            timestamp = event.timestamp
            if timestamp > now:
                raise Invalid(f"'event.timestamp' {timestamp} is after now={now}")
            if timestamp < last:
                raise Invalid(f"'event.timestamp' {timestamp} is before the previous event's {last}"
                              if index else f"'event.timestamp' must be >= 0, got {timestamp}")
            last = timestamp
            out.append(read(event))
        except Invalid as exc:
            raise ProtocolError(f"{where}, event {index} ({wire.kind_of(event)}): {exc}") from None
    return out


def _walltime(job: dict[str, Any], path: str) -> float:
    walltime = wire.field(job, "walltime", "a number", path, -1)
    if walltime != -1 and not walltime > 0:
        raise Invalid(f"'{path}.walltime' must be -1 (none) or positive, got {walltime}")
    return float(walltime)


def _delay(profile: Any) -> float | None:
    """The ``delay`` of a delay profile, else None."""
    if isinstance(profile, dict) and profile.get("type") == "delay" and is_number(profile.get("delay")):
        return float(profile["delay"])
    return None


def _read_job(job: dict[str, Any], job_id: str, path: str) -> tuple[float, int, float, str, dict]:
    """Check a job object; its ``(subtime, res, walltime, profile, extras)``."""
    if "id" not in job:
        raise Invalid(f"missing '{path}.id'")
    given = job["id"]
    if not (isinstance(given, str) or (isinstance(given, int) and not isinstance(given, bool))):
        raise Invalid(f"'{path}.id' must be a string or an integer, got {wire.show(given)}")
    full = str(given) if "!" in str(given) else f"{job_id.partition('!')[0]}!{given}"
    if full != job_id:
        raise Invalid(f"'{path}.id' is {given!r} but the job id is {job_id!r}")
    subtime = wire.field(job, "subtime", "a number", path)
    res = wire.field(job, "res", "an integer", path)
    if res < 0:
        raise Invalid(f"'{path}.res' must be >= 0, got {res}")
    walltime = _walltime(job, path)
    profile = wire.field(job, "profile", "a string", path)
    extras = {k: v for k, v in job.items() if k not in _JOB_FIELDS}
    return float(subtime), res, walltime, profile, extras


def _job_dict(job: Job) -> dict[str, Any]:
    """A job object as Batsim forwards it: the fixed fields, then the extra ones."""
    subtime = job.extras.get(WORKLOAD_SUBTIME, job.subtime)
    fields = {"id": job.id, "subtime": subtime, "walltime": job.walltime if job.walltime > 0 else -1,
              "res": int(job.res), "profile": job.profile}
    fields.update((k, v) for k, v in job.extras.items() if k not in _JOB_FIELDS and k != WORKLOAD_SUBTIME)
    return fields


# --- the scheduler's side -----------------------------------------------------------------


class SchedulerCodec:
    """Batsim messages -> events, decisions -> replies, for a decision process.

    Attributes
    ----------
    profiles : ``{"w0": {name: profile}}`` from SIMULATION_BEGINS, plus the profiles this
        side registered; a submitted job's ``runtime`` is its delay profile's ``delay``.
    now : the ``now`` of the last decoded message (None before the first).
    """

    def __init__(self) -> None:
        self.profiles: dict[str, dict[str, Any]] = {}
        self.now: float | None = None
        self.messages = 0
        self._readers: dict[type, Callable[[Any], Event]] = {
            wire.SimulationBeginsEvent: self._simulation_begins,
            wire.JobSubmittedEvent: self._job_submitted,
            wire.JobCompletedEvent: self._job_completed,
            wire.JobKilledEvent: self._job_killed,
            wire.RequestedCallEvent: lambda e: RequestedCall(e.timestamp),
            wire.NotifyEvent: self._notify,
            wire.QueryEvent: self._query,
            wire.SimulationEndsEvent: lambda e: SimulationEnds(e.timestamp),
            wire.ResourceStateChangedEvent: self._resource_state_changed,
            wire.AnswerEvent: lambda e: Unhandled(e.timestamp, "ANSWER", e.data),
            wire.FromJobMsgEvent: self._from_job_msg,
        }
        self._writers: dict[type, Callable[[Any], tuple[str, dict[str, Any]]]] = {
            Execute: self._execute,
            Reject: lambda d: ("REJECT_JOB", {"job_id": d.job_id}),
            Kill: self._kill,
            CallMeLater: lambda d: ("CALL_ME_LATER", {"timestamp": wire.finite(d.time, "CALL_ME_LATER's time")}),
            RegisterProfile: self._register_profile,
            RegisterJob: self._register_job,
            SetMetadata: self._set_metadata,
            RegistrationFinished: lambda d: ("NOTIFY", {"type": "registration_finished"}),
            AnswerWaitingTime: lambda d: ("ANSWER", {"estimate_waiting_time": {
                "job_id": d.job_id, "estimated_waiting_time": wire.finite(d.estimate, "the estimated waiting time")}}),
        }

    # --- decoding --------------------------------------------------------------------

    def decode(self, text: str | bytes) -> tuple[float, list[Event]]:
        """Validate one Batsim message; its ``now`` and events, in order."""
        self.messages += 1
        where = f"Batsim message {self.messages}"
        message = wire.decode(_BATSIM_MESSAGES, text, where)
        now = message.now
        if self.now is not None and now < self.now:
            raise ProtocolError(f"{where}: now={now} is before the previous message's now={self.now}")
        if not 0 <= now <= MAX_SECONDS:  # simulated time starts at 0; the scheduler's calendar ends there
            raise ProtocolError(f"{where}: now={now} is outside the simulator's time range (0 to {MAX_SECONDS:.0f} s)")
        readers = self._readers
        events = _read_events(message, where, lambda event: readers[type(event)](event), first=0.0)
        self.now = now
        return now, events

    def _simulation_begins(self, event: wire.SimulationBeginsEvent) -> SimulationBegins:
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
        workloads = {} if data.workloads is UNSET else {str(name): path for name, path in data.workloads.items()
                                                        if isinstance(path, str)}
        return SimulationBegins(event.timestamp, nb, data.config, workloads)

    def _job_submitted(self, event: wire.JobSubmittedEvent) -> JobSubmitted:
        data = event.data
        job_id = wire.job_id(data.job_id, "data.job_id")
        if data.job is UNSET:
            raise Invalid("missing 'data.job' (Batsim's Redis mode is not supported)")
        subtime, res, walltime, profile, extras = _read_job(data.job, job_id, "data.job")
        forwarded = data.profile
        if forwarded is UNSET:
            forwarded = self.profiles.get(job_id.partition("!")[0], {}).get(profile)
        extras[WORKLOAD_SUBTIME] = subtime
        time = event.timestamp
        return JobSubmitted(time, Job(job_id, time, res, walltime, profile, _delay(forwarded), extras))

    @staticmethod
    def _job_completed(event: wire.JobCompletedEvent) -> JobCompleted:
        data = event.data
        job_id = wire.job_id(data.job_id, "data.job_id")
        if data.job_state not in JOB_STATES:
            raise Invalid(f"'data.job_state' must be one of {sorted(JOB_STATES)}, got {data.job_state!r}")
        if data.alloc is not UNSET:  # not needed: only checked
            wire.intervals(data.alloc, "data.alloc")
        return JobCompleted(event.timestamp, job_id, data.job_state)

    @staticmethod
    def _job_killed(event: wire.JobKilledEvent) -> JobKilled:
        return JobKilled(event.timestamp, wire.job_ids(event.data.job_ids, "data.job_ids"))

    @staticmethod
    def _notify(event: wire.NotifyEvent) -> Event:
        data = event.data
        kind = wire.field(data, "type", "a string", "data")
        if kind == "no_more_static_job_to_submit":
            return NoMoreStaticJobs(event.timestamp)
        if kind in ("event_machine_available", "event_machine_unavailable"):
            wire.intervals(wire.field(data, "resources", "a string", "data"), "data.resources")
        return Unhandled(event.timestamp, "NOTIFY", data)

    def _query(self, event: wire.QueryEvent) -> Event:
        time, data = event.timestamp, event.data
        requests = wire.field(data, "requests", "an object", "data")
        if "estimate_waiting_time" not in requests:
            return Unhandled(time, "QUERY", data)
        path = "data.requests.estimate_waiting_time"
        request = wire.field(requests, "estimate_waiting_time", "an object", "data.requests")
        job_id = wire.job_id(wire.field(request, "job_id", "a string", path), f"{path}.job_id")
        obj = wire.field(request, "job", "an object", path)
        res = wire.field(obj, "res", "an integer", f"{path}.job")
        walltime = _walltime(obj, f"{path}.job")
        profile = wire.field(obj, "profile", "a string", f"{path}.job", "")
        runtime = _delay(self.profiles.get(job_id.partition("!")[0], {}).get(profile))
        extras = {k: v for k, v in obj.items() if k not in _JOB_FIELDS}
        return WaitingTimeQuery(time, Job(job_id, time, res, walltime, profile, runtime, extras))

    @staticmethod
    def _resource_state_changed(event: wire.ResourceStateChangedEvent) -> Unhandled:
        data = event.data
        wire.intervals(wire.field(data, "resources", "a string", "data"), "data.resources")
        wire.field(data, "state", "a string", "data")
        return Unhandled(event.timestamp, "RESOURCE_STATE_CHANGED", data)

    @staticmethod
    def _from_job_msg(event: wire.FromJobMsgEvent) -> Unhandled:
        wire.job_id(wire.field(event.data, "job_id", "a string", "data"), "data.job_id")
        return Unhandled(event.timestamp, "FROM_JOB_MSG", event.data)

    # --- encoding --------------------------------------------------------------------

    def encode(self, now: float, decisions: Sequence[Decision]) -> bytes:
        """The reply: every decision as one event stamped ``now`` (the received ``now``)."""
        where = f"reply to Batsim message {self.messages}"
        if self.now is not None and now < self.now:
            raise ProtocolError(f"{where}: now={now} is before the received now={self.now}")
        events = []
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
                events.append({"timestamp": now, "type": kind, "data": data})
        except Invalid as exc:
            raise ProtocolError(f"{where}, {exc}") from None
        return wire.encode({"now": now, "events": events}, where)

    def encode_error(self, error: str, message: str | bytes | None = None) -> bytes:
        """A reply that stops Batsim at once with ``error`` in its log: a NOTIFY whose ``type``
        is the error text, stamped with ``message``'s ``now`` (or the last one known)."""
        known = [now for now in (self.now, wire.peek_now(message) if message is not None else None) if now is not None]
        now = max(known, default=0.0)
        error = error.encode(errors="backslashreplace").decode()  # no lone surrogate: it must be valid UTF-8
        return wire.encode({"now": now, "events": [{"timestamp": now, "type": "NOTIFY", "data": {"type": error}}]},
                           "error reply")

    @staticmethod
    def _execute(decision: Execute) -> tuple[str, dict[str, Any]]:
        if decision.machines <= 0:
            raise Invalid(f"EXECUTE_JOB {decision.job_id!r}: empty allocation")
        return "EXECUTE_JOB", {"job_id": decision.job_id, "alloc": to_interval_string(decision.machines)}

    @staticmethod
    def _kill(decision: Kill) -> tuple[str, dict[str, Any]]:
        if not decision.job_ids:
            raise Invalid("KILL_JOB with no job id")
        return "KILL_JOB", {"job_ids": list(decision.job_ids)}

    def _register_profile(self, decision: RegisterProfile) -> tuple[str, dict[str, Any]]:
        profile = {"type": "delay", "delay": wire.finite(decision.delay, "REGISTER_PROFILE's delay")}
        self.profiles.setdefault(decision.workload, {})[decision.name] = profile
        return "REGISTER_PROFILE", {"workload_name": decision.workload, "profile_name": decision.name,
                                    "profile": profile}

    @staticmethod
    def _register_job(decision: RegisterJob) -> tuple[str, dict[str, Any]]:
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
    def _set_metadata(decision: SetMetadata) -> tuple[str, dict[str, Any]]:
        if '"' in decision.metadata:
            raise Invalid(f"SET_JOB_METADATA {decision.job_id!r}: the metadata may not contain '\"' "
                          f"(Batsim aborts), got {decision.metadata!r}")
        return "SET_JOB_METADATA", {"job_id": decision.job_id, "metadata": decision.metadata}


# --- Batsim's side ------------------------------------------------------------------------


class BatsimCodec:
    """Events -> Batsim messages, scheduler replies -> decisions, for our Batsim peer.

    Parameters
    ----------
    host_names : the compute hosts in resource-id order; default ``a0, a1, a10, ...``
        (sorted names, as :func:`scheduler.platforms.platform_xml` makes them).
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
        self._readers: dict[str, Callable[[dict[str, Any]], Decision]] = {
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

    def encode(self, now: float, events: Sequence[Event]) -> bytes:
        """One Batsim message carrying ``events`` (each stamped with its own ``time``)."""
        where = f"Batsim message {self.messages + 1}"
        if self.now is not None and now < self.now:
            raise ProtocolError(f"{where}: now={now} is before the previous message's now={self.now}")
        out = []
        last = -math.inf
        for index, event in enumerate(events):
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

    def _event(self, event: Event, where: str) -> tuple[str, dict[str, Any]]:
        if isinstance(event, JobSubmitted):
            job = event.job
            self._job_profiles[job.id] = job.profile
            data: dict[str, Any] = {"job_id": job.id, "job": _job_dict(job)}
            if self.forward_profiles:
                data["profile"] = self._profile_object(job, where)
            return "JOB_SUBMITTED", data
        if isinstance(event, JobCompleted):
            if self.alloc_of is None:
                raise ProtocolError(f"{where}: JOB_COMPLETED needs alloc_of")
            alloc = self.alloc_of(event.job_id)
            if isinstance(alloc, int):
                alloc = to_interval_string(alloc)
            return "JOB_COMPLETED", {"job_id": event.job_id, "job_state": event.state,
                                     "return_code": RETURN_CODES.get(event.state, -1), "alloc": str(alloc)}
        if isinstance(event, JobKilled):
            return "JOB_KILLED", {"job_ids": list(event.job_ids), "job_progress": self._progress(event, where)}
        if isinstance(event, RequestedCall):
            return "REQUESTED_CALL", {}
        if isinstance(event, NoMoreStaticJobs):
            return "NOTIFY", {"type": "no_more_static_job_to_submit"}
        if isinstance(event, SimulationEnds):
            return "SIMULATION_ENDS", {}
        if isinstance(event, SimulationBegins):
            return "SIMULATION_BEGINS", self._simulation_begins(event, where)
        if isinstance(event, WaitingTimeQuery):
            return "QUERY", {"requests": {"estimate_waiting_time": {
                "job_id": event.job.id,
                "job": {"res": int(event.job.res), "walltime": event.job.walltime if event.job.walltime > 0 else -1}}}}
        if isinstance(event, Unhandled) and event.type in _BATSIM_TYPES:
            return event.type, dict(event.data)
        raise ProtocolError(f"{where}: Batsim sends no such event")

    def _profile_object(self, job: Job, where: str) -> dict[str, Any]:
        """The profile of ``job``, for --forward-profiles-on-submission."""
        profile = self.profiles.get(job.workload, {}).get(job.profile)
        if profile is None and job.runtime is None:
            raise ProtocolError(f"{where}: job {job.id!r} has an unknown profile {job.profile!r} and no runtime")
        return profile if profile is not None else {"type": "delay", "delay": job.runtime}

    def _progress(self, event: JobKilled, where: str) -> dict[str, Any]:
        if self.progress_of is None:
            raise ProtocolError(f"{where}: JOB_KILLED needs progress_of")
        progress = {}
        for job_id in event.job_ids:
            value = self.progress_of(job_id)
            if value is not None:
                # Batsim prints every number with 6 decimals (``%f``)
                progress[job_id] = {"profile_name": self._job_profiles.get(job_id, ""), "progress": round(value, 6)}
        return progress

    def _simulation_begins(self, event: SimulationBegins, where: str) -> dict[str, Any]:
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

    def decode(self, text: str | bytes) -> tuple[float, list[Decision]]:
        """Validate one scheduler reply; its ``now`` and decisions, in order."""
        now, timed = self.decode_timed(text)
        return now, [decision for _, decision in timed]

    def decode_timed(self, text: str | bytes) -> tuple[float, list[tuple[float, Decision]]]:
        """Like :meth:`decode`, with each decision's timestamp (Batsim applies it then)."""
        where = f"reply to Batsim message {self.messages}"
        message = wire.decode(_REPLIES, text, where)
        decisions = _read_events(message, where, self._decision)  # Batsim reads the events first
        if self.now is not None and message.now < self.now:
            raise ProtocolError(f"{where}: now={message.now} is before the message's now={self.now}")
        return message.now, decisions

    def _decision(self, event: wire.AnyEvent) -> tuple[float, Decision]:
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

    def _execute(self, data: dict[str, Any]) -> Execute:
        self._members(data, (2, 3))
        job_id = self._job_id(data)
        alloc = wire.intervals(wire.field(data, "alloc", "a string", "data"), "data.alloc")
        extra = set(data) - {"job_id", "alloc"}
        if extra - {"mapping", "storage_mapping", "additional_io_job"}:
            raise Invalid(f"unexpected member(s) {sorted(extra)} in 'data'")
        return Execute(job_id, from_interval_string(alloc))  # a mapping is meaningless for delay jobs: ignored

    def _reject(self, data: dict[str, Any]) -> Reject:
        self._members(data, (1,))
        return Reject(self._job_id(data), "")

    def _kill(self, data: dict[str, Any]) -> Kill:
        self._members(data, (1,))
        job_ids = wire.job_ids(wire.field(data, "job_ids", "an array", "data"), "data.job_ids")
        if not job_ids:
            raise Invalid("'data.job_ids' is empty")
        return Kill(job_ids)

    def _call_me_later(self, data: dict[str, Any]) -> CallMeLater:
        self._members(data, (1,))
        return CallMeLater(float(wire.field(data, "timestamp", "a number", "data")))

    def _register_profile(self, data: dict[str, Any]) -> RegisterProfile:
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
        return RegisterProfile(workload, name, float(delay))

    def _register_job(self, data: dict[str, Any]) -> RegisterJob:
        job_id = self._job_id(data)
        if "job" not in data:
            raise Invalid("missing 'data.job' (Batsim's Redis mode is not supported)")
        obj = wire.field(data, "job", "an object", "data")
        subtime, res, walltime, profile, extras = _read_job(obj, job_id, "data.job")
        workload = job_id.partition("!")[0]
        if workload not in self.profiles and workload not in self.workloads:
            raise Invalid(f"workload {workload!r} does not exist (register a profile in it first)")
        known = self.profiles.get(workload, {})
        if profile not in known:
            raise Invalid(f"profile {profile!r} does not exist in workload {workload!r}")
        self._job_profiles[job_id] = profile
        return RegisterJob(Job(job_id, subtime, res, walltime, profile, _delay(known[profile]), extras))

    def _set_metadata(self, data: dict[str, Any]) -> SetMetadata:
        self._members(data, (2,))
        job_id = self._job_id(data)
        metadata = wire.field(data, "metadata", "a string", "data")
        if '"' in metadata:
            raise Invalid("'data.metadata' may not contain '\"' (Batsim aborts)")
        return SetMetadata(job_id, metadata)

    @staticmethod
    def _notify(data: dict[str, Any]) -> RegistrationFinished:
        kind = wire.field(data, "type", "a string", "data")
        if kind == "registration_finished":
            return RegistrationFinished()
        if kind == "continue_registration":
            raise Invalid("NOTIFY continue_registration is not played by our Batsim peer")
        raise Invalid(f"unknown NOTIFY type {kind!r} (Batsim aborts)")

    def _answer(self, data: dict[str, Any]) -> AnswerWaitingTime:
        self._members(data, (1,))
        answer = wire.field(data, "estimate_waiting_time", "an object", "data")
        path = "data.estimate_waiting_time"
        job_id = wire.job_id(wire.field(answer, "job_id", "a string", path), f"{path}.job_id")
        estimate = wire.field(answer, "estimated_waiting_time", "a number", path)
        return AnswerWaitingTime(job_id, float(estimate))
