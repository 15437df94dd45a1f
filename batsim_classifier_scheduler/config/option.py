"""How a scheduler option is declared and checked: one :class:`Option` per field of
:class:`~batsim_classifier_scheduler.config.SchedulerConfig` (its help, flags, group and check), the checks that turn a given
value into the canonical one, and the parsers of a flag's text. ``--help``, the JSON config readers and the
option reference all read these declarations."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field, fields
from typing import Any, Callable, Iterable

from batsim_classifier_scheduler import registry
from batsim_classifier_scheduler.errors import ConfigError
from batsim_classifier_scheduler.knowledge.choices import DIVIDERS
from batsim_classifier_scheduler.util.values import is_number

# --- how an option is declared -------------------------------------------------------------

#: The groups of options, in the order a reader meets them (``--help``, the README's option table): title and
#: description. Each option's :attr:`Option.group` is one of these keys.
OPTION_GROUPS: dict[str, tuple[str, str | None]] = {
    "run": ("the run and its outputs", None),
    "scheduling": ("scheduling", None),
    "classes": ("the paper's classes (Q_small ahead of Q) and safeguard", None),
    "trials": ("trials (ours: uncertain jobs run early, on a trial)", None),
    "predictors": ("runtime predictors (instead of the requested time)", None),
    "plugins": ("plug-ins (docs/plugins.md)", None),
}


@dataclass(frozen=True)
class Option:
    """What a :class:`SchedulerConfig` field is as an option.

    ``check`` turns a given value (from JSON, or from a flag's text through ``parse``) into the
    canonical one, or raises ``ValueError``/``ConfigError`` saying what is wrong. ``flags`` are the
    command-line flags, the main one first (default: ``--<name-with-dashes>``); ``choices`` lists
    the accepted names for the help; ``group`` is where ``--help`` and the README show it (a key of
    :data:`OPTION_GROUPS`).
    """

    help: str
    check: Callable[[Any], Any]
    flags: tuple[str, ...] = ()
    metavar: str | None = None
    parse: Callable[[str], Any] = str
    choices: Callable[[], Iterable[str]] | None = None
    group: str = "scheduling"
    #: What ``--help`` leaves out for brevity: the reference (docs/options.md) adds it to ``help``.
    details: str = ""


def option(default: Any, help: str, check: Callable[[Any], Any], **details: Any) -> Any:
    """A :class:`SchedulerConfig` field declared as an option (see :class:`Option`)."""
    return field(default=default, metadata={"option": Option(help, check, **details)})


def options_of(cls: type) -> dict[str, Option]:
    """Every option of a config class, by field name, in declaration order."""
    return {f.name: f.metadata["option"] for f in fields(cls)}


def flags_of(name: str, spec: Option) -> tuple[str, ...]:
    """The command-line flags of option ``name``, the main one first."""
    return spec.flags or ("--" + name.replace("_", "-"),)


def main_flag(name: str, spec: Option) -> str:
    return flags_of(name, spec)[0]


# --- checks of values (and of flags' texts) -------------------------------------------------


def non_empty_text(value: Any) -> str:
    """A non-empty string."""
    if not isinstance(value, str) or not value:
        raise ValueError(f"expected a non-empty string, got {value!r}")
    return value


def choice(names: Callable[[], Iterable[str]]) -> Callable[[Any], str]:
    """The check of one of ``names`` (case-insensitive)."""
    def check(value: Any) -> str:
        known = tuple(names())
        if not isinstance(value, str) or value.lower() not in known:
            raise ValueError(f"unknown value {value!r}; known: {', '.join(known)}")
        return value.lower()
    return check


def optional(check: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """``check``, None allowed."""
    return lambda value: None if value is None else check(value)


def positive_seconds(value: Any) -> float:
    """A positive, finite number of seconds."""
    if not is_number(value) or not math.isfinite(value) or value <= 0:
        raise ValueError(f"expected a positive number of seconds, got {value!r}")
    return float(value)


def positive_integer(value: Any) -> int:
    """A positive integer."""
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ValueError(f"expected a positive integer, got {value!r}")
    return value


def divider_value(value: Any) -> str | float:
    if isinstance(value, str) and value in DIVIDERS:
        return value
    if isinstance(value, str):
        try:
            value = float(value)
        except ValueError:
            raise ValueError(f"expected {' or '.join(DIVIDERS)} or seconds, got {value!r}") from None
    return positive_seconds(value)


def probability_below_one(value: Any) -> float:
    if not is_number(value) or not 0 <= value < 1:
        raise ValueError(f"expected a probability in [0, 1), got {value!r}")
    return float(value)


def probability_or_one(value: Any) -> float:
    if not is_number(value) or not 0 < value <= 1:
        raise ValueError(f"must be a number in (0, 1], got {value!r}")
    return float(value)


def non_negative(value: Any) -> float:
    if not is_number(value) or not 0 <= value < math.inf:
        raise ValueError(f"expected a non-negative number, got {value!r}")
    return float(value)


def seed_value(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < 2 ** 32:
        raise ValueError(f"expected an integer in [0, 2**32), got {value!r}")
    return value


def timezone_value(value: Any) -> str | float:
    from batsim_classifier_scheduler.knowledge.features import resolve_timezone

    resolve_timezone(value)  # raises ConfigError for an unknown name or a bad offset
    return float(value) if is_number(value) else value


def json_object(value: Any) -> dict:
    if not isinstance(value, dict):
        raise ValueError(f"expected a JSON object, got {value!r}")
    return value


def number_text(text: str) -> float:
    """A flag's text as a number."""
    try:
        return float(text)
    except ValueError:
        raise ValueError(f"expected a number, got {text!r}") from None


def integer_text(text: str) -> int:
    """A flag's text as an integer."""
    try:
        return int(text)
    except ValueError:
        raise ValueError(f"expected an integer, got {text!r}") from None


def json_text(text: str) -> Any:
    """A flag's text as JSON."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"invalid JSON ({exc})") from None


def registered(kind: str) -> Callable[[Any], str]:
    """The check of a name of ``kind`` (``batsim_classifier_scheduler.registry``: a built-in's canonical name; a plug-in loads)."""
    return lambda value: registry.canonical(kind, non_empty_text(value))



def checked(spec: Option, value: Any, label: str) -> Any:
    """``spec.check(value)``, its complaint as a ConfigError (of the same kind) naming the option by ``label``."""
    try:
        return spec.check(value)
    except (ValueError, ConfigError) as exc:
        raise (type(exc) if isinstance(exc, ConfigError) else ConfigError)(f"{label}: {exc}") from None
