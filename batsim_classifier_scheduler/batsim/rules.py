"""The rules both sides of Batsim 4.2.1's JSON protocol share: envelopes, timestamps and job objects.

The protocol is played by two codecs, one per side of the socket:

- :class:`~batsim_classifier_scheduler.batsim.scheduler_codec.SchedulerCodec` (our decision process): decodes Batsim's
  messages into events, encodes decisions into the reply;
- :class:`~batsim_classifier_scheduler.batsim.batsim_codec.BatsimCodec` (our embedded ``batsim-peer``): encodes events
  exactly as real Batsim 4.2.1 sends them, decodes and validates any scheduler's reply into decisions.

Both raise :class:`ProtocolError` naming the message, the event and the field. The JSON and
its types are handled by :mod:`batsim_classifier_scheduler.batsim.wire` (msgspec); this module holds what both codecs check,
and each codec's module the rules of its own side.

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
aborts on it at once (a non-zero exit code: 134, or 139 in some builds; ``Unknown NOTIFY type received
('<the text>')``) instead of waiting forever for a reply; :class:`BatsimCodec` refuses it the same way.
"""

from __future__ import annotations

import math
from typing import Any, Callable, NamedTuple, TypeVar

from batsim_classifier_scheduler.batsim import wire
from batsim_classifier_scheduler.batsim.wire import Invalid
from batsim_classifier_scheduler.errors import ProtocolError
from batsim_classifier_scheduler.util.values import is_number

#: The key of ``Job.extras`` holding the workload's ``subtime`` (see the module docstring).
WORKLOAD_SUBTIME = "workload_subtime"

#: The members of a job object that are not extra fields.
JOB_FIELDS = frozenset({"id", "subtime", "res", "walltime", "profile"})

T = TypeVar("T")


class JobObject(NamedTuple):
    """What a checked job object (JOB_SUBMITTED's or REGISTER_JOB's ``job``) says."""

    subtime: float
    res: int
    walltime: float  #: -1 for none
    profile: str
    extras: dict[str, Any]  #: the members other than :data:`JOB_FIELDS`


def read_events(message: wire.Message, where: str, read: Callable[[Any], T], first: float = -math.inf) -> list[T]:
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


def read_walltime(job: dict[str, Any], path: str) -> float:
    """The ``walltime`` of a job object: -1 (none, also when absent) or positive."""
    walltime = wire.field(job, "walltime", "a number", path, -1)
    if walltime != -1 and not walltime > 0:
        raise Invalid(f"'{path}.walltime' must be -1 (none) or positive, got {walltime}")
    return float(walltime)


def delay_of(profile: Any) -> float | None:
    """The ``delay`` of a delay profile, else None."""
    if isinstance(profile, dict) and profile.get("type") == "delay" and is_number(profile.get("delay")):
        return float(profile["delay"])
    return None


def read_job(job: dict[str, Any], job_id: str, path: str) -> JobObject:
    """Check a job object; what it says."""
    usual = usual_job(job, job_id)
    if usual is not None:
        return JobObject(*usual, job_extras(job))
    return _read_job(job, job_id, path)


def usual_job(job: dict[str, Any], job_id: str) -> tuple[float, int, float, str] | None:
    """The usual job object's ``subtime``, ``res``, ``walltime`` and ``profile``, when every check of
    :func:`read_job` passes at once; None otherwise (then :func:`read_job` says what is wrong, if anything)."""
    subtime, res, walltime, profile = job.get("subtime"), job.get("res"), job.get("walltime", -1), job.get("profile")
    if (job.get("id") == job_id and type(subtime) in _NUMBER and type(res) is int and res >= 0
            and type(walltime) in _NUMBER and (walltime == -1 or walltime > 0) and type(profile) is str):
        return float(subtime), res, float(walltime), profile
    return None


def job_extras(job: dict[str, Any]) -> dict[str, Any]:
    """The members of a job object other than :data:`JOB_FIELDS`."""
    return {k: v for k, v in job.items() if k not in JOB_FIELDS}


#: The types of a JSON number (``bool`` is not one).
_NUMBER = (int, float)


def _read_job(job: dict[str, Any], job_id: str, path: str) -> JobObject:
    """:func:`read_job`, field by field, naming the first one that is wrong."""
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
    walltime = read_walltime(job, path)
    profile = wire.field(job, "profile", "a string", path)
    return JobObject(float(subtime), res, walltime, profile, job_extras(job))
