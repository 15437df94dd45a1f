"""Batsim's JSON on the wire: typed message schemas, and errors that name the field.

Messages are decoded by msgspec into the structs below, which validates the types while it
parses (in C). The codecs (:mod:`batsim_classifier_scheduler.batsim`) check the rest, the rules that
are not types, and raise :class:`Invalid` naming the field; the location (message and event)
is added by whoever knows it. A message msgspec refuses is explained in the same words:
``Batsim message 3, event 0 (JOB_SUBMITTED): 'data.job.res' must be an integer, got 1.0``.

Both directions share the envelope :class:`Message`. Batsim's events have one struct per
type (a tagged union on ``type``); the objects that may carry arbitrary members (a job with
its extra fields, the events we only log) stay plain dicts and are checked field by field.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any, Callable, Generic, TypeVar, Union

import msgspec
from msgspec import UNSET, Struct, UnsetType

from batsim_classifier_scheduler.errors import ProtocolError
from batsim_classifier_scheduler.util.values import is_number, plain

class Invalid(ValueError):
    """A field breaks the protocol: the message is the field's part (``'data.alloc' must be...``)."""


# --- the envelope, both directions ----------------------------------------------------------

E = TypeVar("E")


class Message(Struct, Generic[E]):
    """``{"now": float, "events": [...]}``."""

    now: float
    events: list[E]


class AnyEvent(Struct):
    """An event of any type, its ``data`` checked by the reader of its type (our peer's side)."""

    timestamp: float
    type: str
    data: dict[str, Any]


# --- Batsim -> scheduler ----------------------------------------------------------------------


class _Event(Struct, tag_field="type"):
    timestamp: float


class Empty(Struct):
    """``data`` with nothing we read (any members are ignored)."""


class SimulationBeginsData(Struct):
    nb_resources: Union[int, UnsetType] = UNSET
    nb_compute_resources: Union[int, UnsetType] = UNSET
    config: dict[str, Any] = {}
    profiles: dict[str, Any] = {}
    workloads: Union[dict[str, Any], UnsetType] = UNSET


class JobSubmittedData(Struct):
    job_id: str
    job: Union[dict[str, Any], UnsetType] = UNSET  # absent in Batsim's Redis mode
    profile: Union[dict[str, Any], UnsetType] = UNSET  # with --forward-profiles-on-submission


class JobCompletedData(Struct):
    job_id: str
    job_state: str
    return_code: Union[int, UnsetType] = UNSET
    alloc: Union[str, UnsetType] = UNSET


class JobKilledData(Struct):
    job_ids: list[str]
    job_progress: Union[dict[str, Any], UnsetType] = UNSET


def _event(name: str, tag: str, data: Any) -> type[Struct]:
    """The struct of the events of type ``tag`` with ``data`` of type ``data``."""
    return msgspec.defstruct(name, [("data", data)], bases=(_Event,), tag=tag, module=__name__)


SimulationBeginsEvent = _event("SimulationBeginsEvent", "SIMULATION_BEGINS", SimulationBeginsData)
JobSubmittedEvent = _event("JobSubmittedEvent", "JOB_SUBMITTED", JobSubmittedData)
JobCompletedEvent = _event("JobCompletedEvent", "JOB_COMPLETED", JobCompletedData)
JobKilledEvent = _event("JobKilledEvent", "JOB_KILLED", JobKilledData)
RequestedCallEvent = _event("RequestedCallEvent", "REQUESTED_CALL", Empty)
SimulationEndsEvent = _event("SimulationEndsEvent", "SIMULATION_ENDS", Empty)
# Events the scheduler only logs (or reads one member of): their data stays a dict.
NotifyEvent = _event("NotifyEvent", "NOTIFY", dict[str, Any])
QueryEvent = _event("QueryEvent", "QUERY", dict[str, Any])
AnswerEvent = _event("AnswerEvent", "ANSWER", dict[str, Any])
ResourceStateChangedEvent = _event("ResourceStateChangedEvent", "RESOURCE_STATE_CHANGED", dict[str, Any])
FromJobMsgEvent = _event("FromJobMsgEvent", "FROM_JOB_MSG", dict[str, Any])

BatsimEvent = Union[SimulationBeginsEvent, JobSubmittedEvent, JobCompletedEvent, JobKilledEvent, RequestedCallEvent,
                    SimulationEndsEvent, NotifyEvent, QueryEvent, AnswerEvent, ResourceStateChangedEvent,
                    FromJobMsgEvent]


def kind_of(event: Struct) -> str:
    """The ``type`` of a decoded event."""
    return event.type if isinstance(event, AnyEvent) else type(event).__struct_config__.tag


# --- decoding, encoding ---------------------------------------------------------------------


def decoder(event_type: Any) -> msgspec.json.Decoder:
    """A decoder of messages whose events are ``event_type``."""
    return msgspec.json.Decoder(Message[event_type])


def decode(messages: msgspec.json.Decoder, text: str | bytes, where: str) -> Message:
    """One message; :class:`ProtocolError` naming ``where``, the event and the field if it is invalid."""
    try:
        return messages.decode(text)
    except msgspec.ValidationError as exc:
        raise ProtocolError(_explain(str(exc), text, where)) from None
    except (msgspec.DecodeError, UnicodeDecodeError) as exc:
        raise ProtocolError(f"{where}: invalid JSON: {_json_error(text) or exc}") from None


def peek_now(text: str | bytes) -> float | None:
    """The ``now`` of a message, however invalid the rest is (None if it has none)."""
    try:
        now = msgspec.json.decode(text, type=_Now).now
    except (msgspec.DecodeError, UnicodeDecodeError):
        return None
    return now if math.isfinite(now) else None


class _Now(Struct):
    now: float


_encoder = msgspec.json.Encoder(enc_hook=plain)  # numpy scalars: job extras read with pandas


def encode(message: dict[str, Any], where: str) -> bytes:
    """A message as JSON bytes."""
    try:
        return _encoder.encode(message)
    except (TypeError, ValueError, OverflowError) as exc:
        raise ProtocolError(f"{where}: cannot encode ({exc})") from None


# --- field checks, for what types cannot say ---------------------------------------------------

_KINDS: dict[str, Callable[[Any], bool]] = {
    "a boolean": lambda v: isinstance(v, bool),
    "a number": is_number,
    "an integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "a string": lambda v: isinstance(v, str),
    "an object": lambda v: isinstance(v, dict),
    "an array": lambda v: isinstance(v, list),
}
_MISSING = object()
_INTERVALS = re.compile(r"[0-9]+(-[0-9]+)?( [0-9]+(-[0-9]+)?)*")


def show(value: Any) -> str:
    """A short JSON-ish rendering of a bad value, for error messages."""
    return json.dumps(value, default=repr)[:60]


def field(obj: dict[str, Any], key: str, kind: str, path: str, default: Any = _MISSING) -> Any:
    """``obj[key]``, checked to be of ``kind`` ("a number", "a string"...); ``default`` if absent."""
    value = obj.get(key, _MISSING)
    if value is _MISSING:
        if default is _MISSING:
            raise Invalid(f"missing '{path}.{key}'")
        return default
    if not _KINDS[kind](value):
        raise Invalid(f"'{path}.{key}' must be {kind}, got {show(value)}")
    return value


def job_id(value: Any, path: str) -> str:
    """``value`` if it is a job id ``"workload!name"``: exactly one '!', both parts non-empty."""
    if not isinstance(value, str):
        raise Invalid(f"'{path}' must be a string, got {show(value)}")
    if value.count("!") != 1 or value[0] == "!" or value[-1] == "!":
        raise Invalid(f"'{path}' must be 'workload!name' (one '!'), got {value!r}")
    return value


def job_ids(values: list[Any], path: str) -> tuple[str, ...]:
    """A list of job ids."""
    return tuple(job_id(value, f"{path}[{i}]") for i, value in enumerate(values))


def intervals(value: Any, path: str) -> str:
    """``value`` if it is a non-empty interval set such as ``"0-3 7"`` (each ``a-b`` with a <= b)."""
    if not isinstance(value, str):
        raise Invalid(f"'{path}' must be a string, got {show(value)}")
    if not _INTERVALS.fullmatch(value) or ("-" in value and not all(map(_ordered, value.split(" ")))):
        raise Invalid(f"'{path}' must be an interval set such as '0-3 7', got {value!r}")
    return value


def _ordered(interval: str) -> bool:
    first, _, last = interval.partition("-")
    return not last or int(first) <= int(last)


def finite(value: float, what: str) -> float:
    """``value`` as a float, if it is finite (JSON has no NaN or infinity)."""
    value = float(value)
    if not math.isfinite(value):
        raise Invalid(f"{what} must be a finite number, got {value}")
    return value


# --- msgspec's errors in our words ----------------------------------------------------------------

_ERROR = re.compile(r"(?P<what>.*?)(?: - at `(?P<path>[^`]*)`)?", re.S)
_STEP = re.compile(r"\.([^.\[]+)|\[(\d+|\.\.\.)\]")
_EXPECTED = re.compile(r"Expected `(\w+)`")
_INVALID = re.compile(r"Invalid value (.*)")
_TYPE_NAMES = {"float": "a number", "int": "an integer", "str": "a string", "object": "an object", "array": "an array"}


def _explain(error: str, text: str | bytes, where: str) -> str:
    """msgspec's ``error`` on ``text`` as one of our messages."""
    match = _ERROR.fullmatch(error)
    what, path = match["what"], match["path"] or "$"
    steps: list[Any] = [int(i) if i and i.isdigit() else (name or i) for name, i in _STEP.findall(path[1:])]
    document = _document(text)
    if len(steps) >= 2 and steps[0] == "events" and isinstance(steps[1], int):
        event = _lookup(document, steps[:2])
        kind = event.get("type") if isinstance(event, dict) else None
        if isinstance(kind, str):
            where = f"{where}, event {steps[1]} ({kind if kind.isascii() and kind.isprintable() else ascii(kind)})"
        else:
            where = f"{where}, event {steps[1]}"
        owner, steps, document = "event", steps[2:], event
    else:
        owner = "message"
    if what.startswith("Object missing required field"):
        return f"{where}: missing '{_name(owner, steps + [what.split('`')[1]])}'"
    if not steps and what.startswith("Expected `object`"):
        return f"{where}: {'the message must be a JSON object' if owner == 'message' else 'an event must be an object'}"
    if owner == "event" and steps == ["type"] and (invalid := _INVALID.fullmatch(what)):
        return f"{where}: unknown event type {invalid[1]}"
    expected = _EXPECTED.match(what)
    if expected and expected[1] in _TYPE_NAMES:
        value = _lookup(document, steps)
        got = "" if value is _MISSING else f", got {show(value)}"
        return f"{where}: '{_name(owner, steps)}' must be {_TYPE_NAMES[expected[1]]}{got}"
    return f"{where}: '{_name(owner, steps)}': {what}"


def _name(owner: str, steps: list[Any]) -> str:
    """A field's name as our messages write it: ``message.now``, ``event.data``, ``data.job.res``."""
    name = "".join(f"[{s}]" if isinstance(s, int) or s == "..." else f".{s}" for s in steps).lstrip(".")
    return f"{owner}.{name}" if len(steps) <= 1 else name


def _document(text: str | bytes) -> Any:
    try:
        return msgspec.json.decode(text)
    except (msgspec.DecodeError, UnicodeDecodeError):
        return None


def _lookup(document: Any, steps: list[Any]) -> Any:
    for step in steps:
        if isinstance(step, int) and isinstance(document, list) and step < len(document):
            document = document[step]
        elif isinstance(step, str) and isinstance(document, dict) and step in document:
            document = document[step]
        else:
            return _MISSING
    return document


def _reject_constant(name: str) -> float:
    raise ValueError(f"non-finite number {name}")


def _json_error(text: str | bytes) -> str | None:
    """What the standard library says is wrong with ``text`` (it words it better than msgspec)."""
    try:
        json.loads(text, parse_constant=_reject_constant)
    except ValueError as exc:  # JSONDecodeError, bad UTF-8, NaN/Infinity
        return str(exc)
    return None
