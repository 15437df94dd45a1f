"""Batsim 4.2.1's JSON protocol: the only module that knows its messages.

Two codecs, one per side of the socket:

- :class:`SchedulerCodec` (our decision process): decodes Batsim's messages into events,
  encodes decisions into the reply;
- :class:`BatsimCodec` (our embedded ``batsim-peer``): encodes events exactly as real
  Batsim 4.2.1 sends them, decodes and validates any scheduler's reply into decisions.

Both raise :class:`ProtocolError` naming the message, the event and the field.

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
"""

from __future__ import annotations

import json
import math
import re
from typing import Any, Callable, Mapping, Sequence

from procset import ProcSet

from scheduler.core.events import (
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
from scheduler.core.machines import to_interval_string
from scheduler.errors import ProtocolError
from scheduler.values import is_number, plain

#: The ``job_state`` values of JOB_COMPLETED.
JOB_STATES = frozenset({"COMPLETED_SUCCESSFULLY", "COMPLETED_FAILED", "COMPLETED_WALLTIME_REACHED",
                        "COMPLETED_KILLED", "REJECTED"})

#: JOB_COMPLETED's ``return_code`` per state. Batsim uses the profile's ``ret`` (default 0)
#: for success and failure; walltime and kills leave it at -1.
RETURN_CODES = {"COMPLETED_SUCCESSFULLY": 0, "COMPLETED_FAILED": 1, "COMPLETED_WALLTIME_REACHED": -1,
                "COMPLETED_KILLED": -1, "REJECTED": -1}

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
_INTERVALS = re.compile(r"[0-9]+(-[0-9]+)?( [0-9]+(-[0-9]+)?)*")

# Event types real Batsim may send, and decision types it accepts but our peer does not play.
_BATSIM_TYPES = frozenset({"SIMULATION_BEGINS", "SIMULATION_ENDS", "JOB_SUBMITTED", "JOB_COMPLETED",
                           "JOB_KILLED", "REQUESTED_CALL", "NOTIFY", "QUERY", "ANSWER",
                           "RESOURCE_STATE_CHANGED", "FROM_JOB_MSG"})
_UNSUPPORTED_DECISIONS = frozenset({"QUERY", "CHANGE_JOB_STATE", "SET_RESOURCE_STATE", "TO_JOB_MSG"})


# --- JSON and validation helpers --------------------------------------------------------


def _reject_constant(name: str) -> float:
    raise ValueError(f"non-finite number {name}")


def _loads(text: str | bytes, where: str) -> Any:
    try:
        return json.loads(text, parse_constant=_reject_constant)
    except ValueError as exc:  # JSONDecodeError, bad UTF-8, NaN/Infinity
        raise ProtocolError(f"{where}: invalid JSON: {exc}") from None


def _dumps(message: dict[str, Any], where: str) -> str:
    try:
        return json.dumps(message, separators=(",", ":"), allow_nan=False, default=plain)
    except (TypeError, ValueError) as exc:
        raise ProtocolError(f"{where}: cannot encode ({exc})") from None


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


_KINDS: dict[str, Callable[[Any], bool]] = {
    "a number": is_number,
    "an integer": _is_int,
    "a string": lambda v: isinstance(v, str),
    "an object": lambda v: isinstance(v, dict),
    "an array": lambda v: isinstance(v, list),
}

_MISSING = object()


def _show(value: Any) -> str:
    """A short JSON-ish rendering of a bad value, for error messages."""
    return json.dumps(value, default=repr)[:60]


def _field(obj: dict[str, Any], key: str, kind: str, where: str, path: str, default: Any = _MISSING) -> Any:
    """``obj[key]``, checked to be of ``kind`` ("a number", "a string"...); ``default`` if absent."""
    value = obj.get(key, _MISSING)
    if value is _MISSING:
        if default is _MISSING:
            raise ProtocolError(f"{where}: missing '{path}.{key}'")
        return default
    if not _KINDS[kind](value):
        raise ProtocolError(f"{where}: '{path}.{key}' must be {kind}, got {_show(value)}")
    return value


def _check_job_id(value: Any, where: str, path: str) -> str:
    """``value`` if it is a job id ``"workload!name"``: exactly one '!', both parts non-empty."""
    if not isinstance(value, str):
        raise ProtocolError(f"{where}: '{path}' must be a string, got {_show(value)}")
    workload, _, name = value.partition("!")
    if not workload or not name or "!" in name:
        raise ProtocolError(f"{where}: '{path}' must be 'workload!name' (one '!'), got {value!r}")
    return value


def _job_id(obj: dict[str, Any], key: str, where: str, path: str) -> str:
    """The job id ``obj[key]``."""
    return _check_job_id(_field(obj, key, "a string", where, path), where, f"{path}.{key}")


def _job_ids(obj: dict[str, Any], key: str, where: str, path: str) -> tuple[str, ...]:
    """The list of job ids ``obj[key]``."""
    values = _field(obj, key, "an array", where, path)
    return tuple(_check_job_id(value, where, f"{path}.{key}[{i}]") for i, value in enumerate(values))


def _procset(obj: dict[str, Any], key: str, where: str, path: str) -> ProcSet:
    """A non-empty interval-set string such as ``"0-3 7"``, as a ``ProcSet``."""
    value = _field(obj, key, "a string", where, path)
    try:
        if not _INTERVALS.fullmatch(value):
            raise ValueError
        return ProcSet.from_str(value)
    except ValueError:
        raise ProtocolError(f"{where}: '{path}.{key}' must be an interval set such as '0-3 7', "
                            f"got {value!r}") from None


def _walltime(job: dict[str, Any], where: str, path: str) -> float:
    walltime = _field(job, "walltime", "a number", where, path, -1)
    if walltime != -1 and not walltime > 0:
        raise ProtocolError(f"{where}: '{path}.walltime' must be -1 (none) or positive, got {walltime}")
    return float(walltime)


def _delay(profile: Any) -> float | None:
    """The ``delay`` of a delay profile, else None."""
    if isinstance(profile, dict) and profile.get("type") == "delay" and is_number(profile.get("delay")):
        return float(profile["delay"])
    return None


def _read_job(job: dict[str, Any], job_id: str, where: str, path: str) -> tuple[float, int, float, str, dict]:
    """Check a job object; its ``(subtime, res, walltime, profile, extras)``."""
    if "id" not in job:
        raise ProtocolError(f"{where}: missing '{path}.id'")
    given = job["id"]
    if not (isinstance(given, str) or _is_int(given)):
        raise ProtocolError(f"{where}: '{path}.id' must be a string or an integer, got {_show(given)}")
    full = str(given) if "!" in str(given) else f"{job_id.partition('!')[0]}!{given}"
    if full != job_id:
        raise ProtocolError(f"{where}: '{path}.id' is {given!r} but the job id is {job_id!r}")
    subtime = _field(job, "subtime", "a number", where, path)
    res = _field(job, "res", "an integer", where, path)
    if res < 0:
        raise ProtocolError(f"{where}: '{path}.res' must be >= 0, got {res}")
    walltime = _walltime(job, where, path)
    profile = _field(job, "profile", "a string", where, path)
    extras = {k: v for k, v in job.items() if k not in _JOB_FIELDS}
    return float(subtime), res, walltime, profile, extras


def _envelope(text: str | bytes, where: str) -> tuple[float, list[tuple[float, str, dict[str, Any], str]]]:
    """Check a message's envelope; its ``now`` and ``(timestamp, type, data, where)`` per event."""
    message = _loads(text, where)
    if not isinstance(message, dict):
        raise ProtocolError(f"{where}: the message must be a JSON object")
    now = _field(message, "now", "a number", where, "message")
    events = _field(message, "events", "an array", where, "message")
    checked = []
    last = -math.inf
    for index, event in enumerate(events):
        at = f"{where}, event {index}"
        if not isinstance(event, dict):
            raise ProtocolError(f"{at}: an event must be an object")
        kind = _field(event, "type", "a string", at, "event")
        at = f"{at} ({kind})"
        timestamp = _field(event, "timestamp", "a number", at, "event")
        if timestamp > now:
            raise ProtocolError(f"{at}: 'event.timestamp' {timestamp} is after now={now}")
        if timestamp < last:
            raise ProtocolError(f"{at}: 'event.timestamp' {timestamp} is before the previous event's {last}")
        last = timestamp
        data = _field(event, "data", "an object", at, "event")
        checked.append((float(timestamp), kind, data, at))
    return float(now), checked


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
        self._readers: dict[str, Callable[[float, dict[str, Any], str], Event]] = {
            "SIMULATION_BEGINS": self._simulation_begins,
            "JOB_SUBMITTED": self._job_submitted,
            "JOB_COMPLETED": self._job_completed,
            "JOB_KILLED": self._job_killed,
            "REQUESTED_CALL": lambda t, d, w: RequestedCall(t),
            "NOTIFY": self._notify,
            "QUERY": self._query,
            "SIMULATION_ENDS": lambda t, d, w: SimulationEnds(t),
            "RESOURCE_STATE_CHANGED": self._resource_state_changed,
            "ANSWER": lambda t, d, w: Unhandled(t, "ANSWER", d),
            "FROM_JOB_MSG": self._from_job_msg,
        }
        self._writers: dict[type, Callable[[Any], tuple[str, dict[str, Any]]]] = {
            Execute: self._execute,
            Reject: lambda d: ("REJECT_JOB", {"job_id": d.job_id}),
            Kill: self._kill,
            CallMeLater: lambda d: ("CALL_ME_LATER", {"timestamp": float(d.time)}),
            RegisterProfile: self._register_profile,
            RegisterJob: self._register_job,
            SetMetadata: self._set_metadata,
            RegistrationFinished: lambda d: ("NOTIFY", {"type": "registration_finished"}),
            AnswerWaitingTime: lambda d: ("ANSWER", {"estimate_waiting_time": {
                "job_id": d.job_id, "estimated_waiting_time": float(d.estimate)}}),
        }

    # --- decoding --------------------------------------------------------------------

    def decode(self, text: str | bytes) -> tuple[float, list[Event]]:
        """Validate one Batsim message; its ``now`` and events, in order."""
        self.messages += 1
        where = f"Batsim message {self.messages}"
        now, raw = _envelope(text, where)
        if self.now is not None and now < self.now:
            raise ProtocolError(f"{where}: now={now} is before the previous message's now={self.now}")
        events = []
        for timestamp, kind, data, at in raw:
            reader = self._readers.get(kind)
            if reader is None:
                raise ProtocolError(f"{at}: unknown event type {kind!r}")
            events.append(reader(timestamp, data, at))
        self.now = now
        return now, events

    def _simulation_begins(self, time: float, data: dict[str, Any], where: str) -> SimulationBegins:
        nb = _field(data, "nb_compute_resources", "an integer", where, "data", None)
        if nb is None:
            nb = _field(data, "nb_resources", "an integer", where, "data")
        config = _field(data, "config", "an object", where, "data", {})
        profiles = _field(data, "profiles", "an object", where, "data", {})
        for workload, table in profiles.items():
            if not isinstance(table, dict):
                raise ProtocolError(f"{where}: 'data.profiles.{workload}' must be an object")
        _field(data, "workloads", "an object", where, "data", None)
        self.profiles = {workload: dict(table) for workload, table in profiles.items()}
        return SimulationBegins(time, nb, config)

    def _job_submitted(self, time: float, data: dict[str, Any], where: str) -> JobSubmitted:
        job_id = _job_id(data, "job_id", where, "data")
        if "job" not in data:
            raise ProtocolError(f"{where}: missing 'data.job' (Batsim's Redis mode is not supported)")
        obj = _field(data, "job", "an object", where, "data")
        subtime, res, walltime, profile, extras = _read_job(obj, job_id, where, "data.job")
        forwarded = _field(data, "profile", "an object", where, "data", None)
        if forwarded is None:
            forwarded = self.profiles.get(job_id.partition("!")[0], {}).get(profile)
        extras[WORKLOAD_SUBTIME] = subtime
        return JobSubmitted(time, Job(job_id, time, res, walltime, profile, _delay(forwarded), extras))

    def _job_completed(self, time: float, data: dict[str, Any], where: str) -> JobCompleted:
        job_id = _job_id(data, "job_id", where, "data")
        state = _field(data, "job_state", "a string", where, "data")
        if state not in JOB_STATES:
            raise ProtocolError(f"{where}: 'data.job_state' must be one of {sorted(JOB_STATES)}, got {state!r}")
        _field(data, "return_code", "an integer", where, "data", None)
        if "alloc" in data:
            _procset(data, "alloc", where, "data")
        return JobCompleted(time, job_id, state)

    def _job_killed(self, time: float, data: dict[str, Any], where: str) -> JobKilled:
        job_ids = _job_ids(data, "job_ids", where, "data")
        _field(data, "job_progress", "an object", where, "data", None)
        return JobKilled(time, job_ids)

    def _notify(self, time: float, data: dict[str, Any], where: str) -> Event:
        kind = _field(data, "type", "a string", where, "data")
        if kind == "no_more_static_job_to_submit":
            return NoMoreStaticJobs(time)
        if kind in ("event_machine_available", "event_machine_unavailable"):
            _procset(data, "resources", where, "data")
        return Unhandled(time, "NOTIFY", data)

    def _query(self, time: float, data: dict[str, Any], where: str) -> Event:
        requests = _field(data, "requests", "an object", where, "data")
        if "estimate_waiting_time" not in requests:
            return Unhandled(time, "QUERY", data)
        request = _field(requests, "estimate_waiting_time", "an object", where, "data.requests")
        path = "data.requests.estimate_waiting_time"
        job_id = _job_id(request, "job_id", where, path)
        obj = _field(request, "job", "an object", where, path)
        res = _field(obj, "res", "an integer", where, f"{path}.job")
        walltime = _walltime(obj, where, f"{path}.job")
        profile = _field(obj, "profile", "a string", where, f"{path}.job", "")
        runtime = _delay(self.profiles.get(job_id.partition("!")[0], {}).get(profile))
        extras = {k: v for k, v in obj.items() if k not in _JOB_FIELDS}
        return WaitingTimeQuery(time, Job(job_id, time, res, walltime, profile, runtime, extras))

    def _resource_state_changed(self, time: float, data: dict[str, Any], where: str) -> Unhandled:
        _procset(data, "resources", where, "data")
        _field(data, "state", "a string", where, "data")
        return Unhandled(time, "RESOURCE_STATE_CHANGED", data)

    def _from_job_msg(self, time: float, data: dict[str, Any], where: str) -> Unhandled:
        _job_id(data, "job_id", where, "data")
        return Unhandled(time, "FROM_JOB_MSG", data)

    # --- encoding --------------------------------------------------------------------

    def encode(self, now: float, decisions: Sequence[Decision]) -> str:
        """The reply: every decision as one event stamped ``now`` (the received ``now``)."""
        where = f"reply to Batsim message {self.messages}"
        if self.now is not None and now < self.now:
            raise ProtocolError(f"{where}: now={now} is before the received now={self.now}")
        now = float(now)
        events = []
        for index, decision in enumerate(decisions):
            writer = self._writers.get(type(decision))
            if writer is None:
                raise ProtocolError(f"{where}, decision {index}: cannot encode {type(decision).__name__}")
            try:
                kind, data = writer(decision)
            except ProtocolError as exc:
                raise ProtocolError(f"{where}, decision {index}: {exc}") from None
            events.append({"timestamp": now, "type": kind, "data": data})
        return _dumps({"now": now, "events": events}, where)

    @staticmethod
    def _execute(decision: Execute) -> tuple[str, dict[str, Any]]:
        if decision.machines <= 0:
            raise ProtocolError(f"EXECUTE_JOB {decision.job_id!r}: empty allocation")
        return "EXECUTE_JOB", {"job_id": decision.job_id, "alloc": to_interval_string(decision.machines)}

    @staticmethod
    def _kill(decision: Kill) -> tuple[str, dict[str, Any]]:
        if not decision.job_ids:
            raise ProtocolError("KILL_JOB with no job id")
        return "KILL_JOB", {"job_ids": list(decision.job_ids)}

    def _register_profile(self, decision: RegisterProfile) -> tuple[str, dict[str, Any]]:
        profile = {"type": "delay", "delay": float(decision.delay)}
        self.profiles.setdefault(decision.workload, {})[decision.name] = profile
        return "REGISTER_PROFILE", {"workload_name": decision.workload, "profile_name": decision.name,
                                    "profile": profile}

    @staticmethod
    def _register_job(decision: RegisterJob) -> tuple[str, dict[str, Any]]:
        job = decision.job
        _check_job_id(job.id, "REGISTER_JOB", "data.job_id")
        return "REGISTER_JOB", {"job_id": job.id, "job": {
            "id": job.id, "subtime": float(job.subtime), "res": int(job.res),
            "walltime": float(job.walltime) if job.walltime > 0 else -1, "profile": job.profile}}

    @staticmethod
    def _set_metadata(decision: SetMetadata) -> tuple[str, dict[str, Any]]:
        if '"' in decision.metadata:
            raise ProtocolError(f"SET_JOB_METADATA {decision.job_id!r}: the metadata may not contain '\"' "
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
        self._readers: dict[str, Callable[[dict[str, Any], str], Decision]] = {
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

    def encode(self, now: float, events: Sequence[Event]) -> str:
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
        text = _dumps({"now": float(now), "events": out}, where)
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
                progress[job_id] = {"profile_name": self._job_profiles.get(job_id, ""), "progress": float(value)}
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
        now, raw = _envelope(text, where)
        if self.now is not None and now < self.now:
            raise ProtocolError(f"{where}: now={now} is before the message's now={self.now}")
        decisions = []
        for timestamp, kind, data, at in raw:
            reader = self._readers.get(kind)
            if reader is None:
                if kind in _UNSUPPORTED_DECISIONS:
                    raise ProtocolError(f"{at}: {kind} is valid in Batsim 4.2.1 but our Batsim peer does not play it")
                raise ProtocolError(f"{at}: unknown event type {kind!r} (Batsim aborts)")
            decisions.append((timestamp, reader(data, at)))
        return now, decisions

    @staticmethod
    def _members(data: dict[str, Any], allowed: tuple[int, ...], where: str) -> None:
        if len(data) not in allowed:
            raise ProtocolError(f"{where}: 'data' must have {' or '.join(map(str, allowed))} members "
                                f"(Batsim asserts it), got {sorted(data)}")

    def _execute(self, data: dict[str, Any], where: str) -> Execute:
        self._members(data, (2, 3), where)
        job_id = _job_id(data, "job_id", where, "data")
        alloc = _procset(data, "alloc", where, "data")
        extra = set(data) - {"job_id", "alloc"}
        if extra - {"mapping", "storage_mapping", "additional_io_job"}:
            raise ProtocolError(f"{where}: unexpected member(s) {sorted(extra)} in 'data'")
        return Execute.on(job_id, alloc)  # a mapping is meaningless for delay jobs: ignored

    def _reject(self, data: dict[str, Any], where: str) -> Reject:
        self._members(data, (1,), where)
        return Reject(_job_id(data, "job_id", where, "data"), "")

    def _kill(self, data: dict[str, Any], where: str) -> Kill:
        self._members(data, (1,), where)
        job_ids = _job_ids(data, "job_ids", where, "data")
        if not job_ids:
            raise ProtocolError(f"{where}: 'data.job_ids' is empty")
        return Kill(job_ids)

    def _call_me_later(self, data: dict[str, Any], where: str) -> CallMeLater:
        self._members(data, (1,), where)
        return CallMeLater(float(_field(data, "timestamp", "a number", where, "data")))

    def _register_profile(self, data: dict[str, Any], where: str) -> RegisterProfile:
        workload = _field(data, "workload_name", "a string", where, "data")
        name = _field(data, "profile_name", "a string", where, "data")
        profile = _field(data, "profile", "an object", where, "data")
        kind = _field(profile, "type", "a string", where, "data.profile")
        if kind != "delay":
            raise ProtocolError(f"{where}: profile type {kind!r} is not supported (only 'delay')")
        delay = _field(profile, "delay", "a number", where, "data.profile")
        if delay < 0:
            raise ProtocolError(f"{where}: 'data.profile.delay' must be >= 0, got {delay}")
        table = self.profiles.setdefault(workload, {})
        if name in table:
            raise ProtocolError(f"{where}: profile {name!r} already exists in workload {workload!r} (Batsim aborts)")
        table[name] = profile
        return RegisterProfile(workload, name, float(delay))

    def _register_job(self, data: dict[str, Any], where: str) -> RegisterJob:
        job_id = _job_id(data, "job_id", where, "data")
        if "job" not in data:
            raise ProtocolError(f"{where}: missing 'data.job' (Batsim's Redis mode is not supported)")
        obj = _field(data, "job", "an object", where, "data")
        subtime, res, walltime, profile, extras = _read_job(obj, job_id, where, "data.job")
        workload = job_id.partition("!")[0]
        if workload not in self.profiles and workload not in self.workloads:
            raise ProtocolError(f"{where}: workload {workload!r} does not exist (register a profile in it first)")
        known = self.profiles.get(workload, {})
        if profile not in known:
            raise ProtocolError(f"{where}: profile {profile!r} does not exist in workload {workload!r}")
        self._job_profiles[job_id] = profile
        return RegisterJob(Job(job_id, subtime, res, walltime, profile, _delay(known[profile]), extras))

    def _set_metadata(self, data: dict[str, Any], where: str) -> SetMetadata:
        self._members(data, (2,), where)
        job_id = _job_id(data, "job_id", where, "data")
        metadata = _field(data, "metadata", "a string", where, "data")
        if '"' in metadata:
            raise ProtocolError(f"{where}: 'data.metadata' may not contain '\"' (Batsim aborts)")
        return SetMetadata(job_id, metadata)

    def _notify(self, data: dict[str, Any], where: str) -> RegistrationFinished:
        kind = _field(data, "type", "a string", where, "data")
        if kind == "registration_finished":
            return RegistrationFinished()
        if kind == "continue_registration":
            raise ProtocolError(f"{where}: NOTIFY continue_registration is not played by our Batsim peer")
        raise ProtocolError(f"{where}: unknown NOTIFY type {kind!r} (Batsim aborts)")

    def _answer(self, data: dict[str, Any], where: str) -> AnswerWaitingTime:
        self._members(data, (1,), where)
        answer = _field(data, "estimate_waiting_time", "an object", where, "data")
        path = "data.estimate_waiting_time"
        job_id = _job_id(answer, "job_id", where, path)
        estimate = _field(answer, "estimated_waiting_time", "a number", where, path)
        return AnswerWaitingTime(job_id, float(estimate))
