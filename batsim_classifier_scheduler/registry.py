"""One registry of names: every kind of plug-in a configuration names, and how a name becomes an object.

A *kind* (:data:`KINDS`: algorithm, policy, estimator, predictor, correction, estimates) has a *home*, the
module that registers its built-in names (:func:`register`, a line beside each) and its rules
(:func:`define`: what a plug-in of the kind must be, and how one is made); the registry imports it the
first time the kind is asked for. A name (a *spec*) is resolved the same way for every kind:

1. a built-in name, case-insensitive, or one of its aliases (batsched's ``easy_bf``); ``NAME:ARG`` for a
   built-in that takes an argument (``score:FILE``, ``constant:C``);
2. a plug-in: ``FILE.py:NAME``, attribute NAME of a Python file of the user's (imported once per process and
   version of the file); ``MODULE:NAME``, attribute NAME of an importable module
   (``my_package.orders:AgedArea``); or the name of an installed package's entry point in the kind's group
   (:attr:`Kind.group`).

A plug-in declares its options as ``Options``, a :class:`msgspec.Struct` class: the options given (a JSON
object) are validated once, by msgspec, unknown names refused (:func:`options`); the kind's maker gets the
instance. Every error is a :class:`ConfigError` naming the kind and the spec; an unknown name's lists the
known ones (:func:`unknown`). The registry is asked when a configuration is checked and composed, never
while deciding.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Callable, get_args, get_origin

import msgspec

from batsim_classifier_scheduler.errors import ConfigError, PluginError, describe, error_text
from batsim_classifier_scheduler.util.checksums import data_hash

__all__ = ["KINDS", "Entry", "Kind", "Made", "Rules", "alias", "builtins", "call", "canonical", "define", "describe",
           "describe_options", "error_text", "is_builtin", "make", "names", "options", "options_type", "register",
           "source_file", "target", "unknown"]

_GROUP = "batsim_classifier_scheduler."


@dataclass(frozen=True)
class Kind:
    """A kind of name: where its built-ins are registered, the entry-point group of its plug-ins, and the
    option that holds a plug-in's options (None: the kind takes none)."""

    name: str
    home: str
    group: str
    options: str | None = None


KINDS: dict[str, Kind] = {kind.name: kind for kind in (
    Kind("algorithm", "batsim_classifier_scheduler.core.algorithm_registry", _GROUP + "algorithms", "algorithm_options"),
    Kind("policy", "batsim_classifier_scheduler.core.policies", _GROUP + "policies", "policy_options"),
    Kind("estimator", "batsim_classifier_scheduler.knowledge.sklearn_estimators", _GROUP + "estimators", "estimator_options"),
    Kind("predictor", "batsim_classifier_scheduler.knowledge.predictors", _GROUP + "predictors", "predictor_options"),
    Kind("correction", "batsim_classifier_scheduler.knowledge.corrections", _GROUP + "corrections"),
    Kind("estimates", "batsim_classifier_scheduler.knowledge.runtime_estimates", _GROUP + "estimates"),
)}


@dataclass(frozen=True)
class Entry:
    """A built-in name: what it names (an object, or ``"module:attribute"`` imported when first used) and, for
    a name that takes an argument (``NAME:ARG``), the check of the argument's text and its placeholder."""

    target: Any
    argument: Callable[[str], Any] | None = None
    metavar: str = "ARG"
    bare: bool = True  # the name alone is valid too
    reads_file: bool = False  # the argument is a file that the composition root reads (``make``'s ``read``)


@dataclass(frozen=True)
class Made:
    """What a kind's maker is given: the name (canonical for a built-in), what it names, the argument of
    ``NAME:ARG`` (checked; read when it is a file), and the options (as given, and as the ``Options``)."""

    kind: str
    name: str
    target: Any
    argument: Any = None
    options: dict | None = None
    instance: msgspec.Struct | None = None


@dataclass(frozen=True)
class Rules:
    """A kind's rules, declared by its home: ``check(spec, target)`` raises ConfigError when a plug-in is not of
    the kind; ``make(made)`` makes the object; ``loose`` checks the options of a plug-in that declares no
    ``Options`` (None: refused) and ``describe_loose`` lists them; ``claims(target)`` says that an object is of
    this kind (so that another kind's option refuses it by name); ``make_at_check``: making a plug-in is cheap
    and checked when its options are."""

    check: Callable[[str, Any], None]
    make: Callable[[Made], Any]
    loose: Callable[[str, Any, dict], dict] | None = None
    describe_loose: Callable[[str, Any], list[str]] | None = None
    claims: Callable[[Any], bool] | None = None
    make_at_check: bool = False


_entries: dict[str, dict[str, Entry]] = {kind: {} for kind in KINDS}
_aliases: dict[str, dict[str, str]] = {kind: {} for kind in KINDS}
_rules: dict[str, Rules] = {}


# --- what the homes declare ------------------------------------------------------------------


def register(kind: str, name: str, target: Any, *, aliases: tuple[str, ...] = (), **argument: Any) -> Any:
    """Register built-in ``name`` of ``kind`` (with its ``aliases``; ``argument=``, ``metavar=``, ``bare=``,
    ``reads_file=`` for a name that takes an argument: see :class:`Entry`). Returns ``target``."""
    _entries[kind][name] = Entry(target, **argument)
    _aliases[kind].update(dict.fromkeys(aliases, name))
    return target


def alias(kind: str, aliases: dict[str, str]) -> None:
    """Register other names of built-ins of ``kind``: ``{alias: name}``."""
    _aliases[kind].update(aliases)


def define(kind: str, rules: Rules) -> None:
    """Declare the rules of ``kind`` (its home does, once)."""
    _rules[kind] = rules


def _home(kind: str) -> Rules:
    if kind not in _rules:
        importlib.import_module(KINDS[kind].home)
    return _rules[kind]


# --- names -----------------------------------------------------------------------------------


def builtins(kind: str) -> list[str]:
    """The built-in names of ``kind``, as registered (no aliases)."""
    _home(kind)
    return list(_entries[kind])


def names(kind: str) -> list[str]:
    """Every built-in name of ``kind``, for help texts and errors: names, aliases, then ``NAME:ARG`` forms."""
    _home(kind)
    entries = _entries[kind]
    return [*(name for name, entry in entries.items() if entry.bare),
            *(alias for alias in _aliases[kind] if alias not in entries),
            *(f"{name}:{entry.metavar}" for name, entry in entries.items() if entry.argument)]


def unknown(kind: str, spec: str) -> ConfigError:
    """The one error of an unknown name: the known names, and how to name a plug-in."""
    return ConfigError(f"unknown {kind} {spec!r}; known: {', '.join(names(kind))}; or a plug-in: FILE.py:NAME, "
                       f"MODULE:NAME, or the name of an entry point of group {KINDS[kind].group}")


def _lookup(kind: str, spec: str) -> tuple[str, Entry, str | None] | None:
    """The built-in ``spec`` names (its key, entry and argument text), None when it names none."""
    _home(kind)
    base, colon, argument = spec.partition(":")
    key = _aliases[kind].get(base.lower(), base.lower())
    entry = _entries[kind].get(key)
    return None if entry is None else (key, entry, argument if colon else None)


def _builtin(kind: str, spec: str) -> tuple[str, Entry, Any] | None:
    """As :func:`_lookup`, the argument checked and made a value; errors for a missing or stray argument."""
    found = _lookup(kind, spec)
    if found is None:
        return None
    key, entry, text = found
    if text is None:
        if not entry.bare:
            raise ConfigError(f"{kind} {spec!r}: name its {entry.metavar} ({key}:{entry.metavar})")
        return key, entry, None
    if entry.argument is None:
        forms = [name for name in names(kind) if ":" in name]
        raise ConfigError(f"{kind} {spec!r}: only {' and '.join(forms) or 'none'} take{'s' * (len(forms) == 1)} an "
                          f"argument")
    try:
        return key, entry, entry.argument(text)
    except ValueError as exc:
        raise ConfigError(f"{kind} {spec!r}: {exc}") from None


def is_builtin(kind: str, spec: str) -> bool:
    """Whether ``spec`` names a built-in of ``kind`` (well-formed or not)."""
    return _lookup(kind, spec) is not None


def canonical(kind: str, spec: str) -> str:
    """The canonical name of built-in ``spec`` (``NAME`` or ``NAME:ARG``), else ``spec`` itself once it loads
    as a plug-in of ``kind``."""
    found = _builtin(kind, spec)
    if found is not None:
        key, _, argument = found
        return key if argument is None else f"{key}:{spec.partition(':')[2]}"
    if ":" not in spec and _entry_point(KINDS[kind].group, spec) is None:
        raise unknown(kind, spec)
    target(kind, spec)
    return spec


def target(kind: str, spec: str) -> Any:
    """What ``spec`` names: a built-in's registered object, or the plug-in, checked for ``kind``."""
    found = _builtin(kind, spec)
    if found is not None:
        entry = found[1]
        return _import_target(entry.target) if isinstance(entry.target, str) else entry.target
    rules = _home(kind)
    loaded = _load(kind, spec, KINDS[kind].group)
    claims = _home("algorithm").claims
    if kind != "algorithm" and claims is not None and claims(loaded):
        raise ConfigError(f"{kind} {spec!r}: {loaded.__name__} is a scheduling algorithm: give it to --algorithm")
    rules.check(spec, loaded)
    options_type(kind, spec, loaded)
    return loaded


def source_file(kind: str, spec: str) -> str | None:
    """The file a run with ``spec`` reads: a ``FILE.py:NAME`` plug-in's, or a built-in's file argument (a
    ``score:FILE`` policy's θ file); None for any other."""
    found = _lookup(kind, spec)
    if found is not None:
        return found[2] if found[1].reads_file and found[2] else None
    location = spec.rpartition(":")[0]
    return location if _is_file(location) else None


# --- options ---------------------------------------------------------------------------------


def options_type(kind: str, spec: str, target: Any) -> type[msgspec.Struct] | None:
    """The ``Options`` struct a plug-in declares, None when it declares none."""
    declared = getattr(target, "Options", None)
    if declared is None:
        return None
    if not (inspect.isclass(declared) and issubclass(declared, msgspec.Struct)):
        raise ConfigError(f"{kind} {spec!r}: its Options must be a msgspec.Struct class, got "
                          f"{describe(declared)}")
    return declared


def options(kind: str, spec: str, given: dict | None) -> dict | None:
    """The canonical options of ``spec``: every field of its ``Options`` (defaults filled in), None for one that
    declares none (then options are refused, unless its kind checks them another way). Errors name the option
    and the spec."""
    label, rules, made = KINDS[kind].options, _home(kind), target(kind, spec)
    declared = options_type(kind, spec, made)
    if declared is not None:
        result = msgspec.to_builtins(_convert(declared, given or {}, label, kind, spec))
    elif not given:
        result = None
    elif rules.loose is not None:
        result = rules.loose(spec, made, given)
    else:
        raise ConfigError(f"{label}: {kind} {spec!r} takes no options")
    if rules.make_at_check and not is_builtin(kind, spec):
        make(kind, spec, result)  # a plug-in that cannot make itself fails here, at the door
    return result


def _convert(declared: type[msgspec.Struct], given: dict, label: str | None, kind: str, spec: str) -> msgspec.Struct:
    label = label or f"{kind} options"
    known = {field.encode_name for field in msgspec.structs.fields(declared)}
    unknown_names = sorted(set(given) - known)
    if unknown_names:
        raise ConfigError(f"{label}: unknown option(s) {', '.join(unknown_names)} of {kind} {spec!r}; "
                          f"known: {', '.join(sorted(known)) or 'none'}")
    try:
        return msgspec.convert(given, declared)
    except msgspec.ValidationError as exc:
        message, _, path = str(exc).partition(" - at `$.")
        raise ConfigError(f"{label}: {path.rstrip('`') + ': ' if path else ''}{message} ({kind} {spec!r})") from None


def describe_options(kind: str, spec: str) -> list[str]:
    """One line per option of ``spec``: name, type and constraints, default, and its description."""
    made = target(kind, spec)
    declared = options_type(kind, spec, made)
    if declared is None:
        describe_loose = _home(kind).describe_loose
        return [] if describe_loose is None else describe_loose(spec, made)
    lines = []
    for field in msgspec.structs.fields(declared):
        kind_text, description = _type_text(field.type)
        default = ("required" if field.required else
                   f"default {field.default_factory()!r}" if field.default is msgspec.NODEFAULT
                   else f"default {field.default!r}")
        lines.append(f"{field.encode_name} ({kind_text}, {default}){': ' + description if description else ''}")
    return lines


_BOUNDS = {"gt": ">", "ge": ">=", "lt": "<", "le": "<="}


def _type_text(annotation: Any) -> tuple[str, str]:
    """A field's type as text, with its msgspec.Meta bounds, and the Meta's description."""
    constraints, description = [], ""
    if get_origin(annotation) is Annotated:
        annotation, *extras = get_args(annotation)
        for meta in extras:
            if isinstance(meta, msgspec.Meta):
                description = meta.description or description
                constraints += [f"{symbol} {getattr(meta, bound)}" for bound, symbol in _BOUNDS.items()
                                if getattr(meta, bound) is not None]
    name = annotation.__name__ if inspect.isclass(annotation) else str(annotation).replace("typing.", "")
    return " ".join([name, *constraints]), description


# --- making ----------------------------------------------------------------------------------


def make(kind: str, spec: str, given: dict | None = None, read: Callable[[str], Any] | None = None) -> Any:
    """The object ``spec`` names, made by its kind's rules with the options ``given`` (canonical: see
    :func:`options`); a built-in's file argument (``score:FILE``) is given as ``read(FILE)``."""
    found = _builtin(kind, spec)
    name, argument = (spec, None) if found is None else (canonical(kind, spec), found[2])
    if found is not None and found[1].reads_file and read is not None:
        argument = read(argument)
    made = target(kind, spec)
    declared = options_type(kind, spec, made)
    instance = None if declared is None else _convert(declared, given or {}, KINDS[kind].options, kind, spec)
    return _home(kind).make(Made(kind, name, made, argument, given, instance))


def call(kind: str, spec: str, function: Callable, *arguments: Any, **keywords: Any) -> Any:
    """``function(*arguments, **keywords)``: a plug-in's code, its failure one line naming it."""
    try:
        return function(*arguments, **keywords)
    except Exception as exc:  # the plug-in's own code failed: name it, on one line
        raise ConfigError(f"{kind} {spec!r}: making it failed ({error_text(exc)})") from None


# --- loading a plug-in ------------------------------------------------------------------------


_MODULE_NAME = re.compile(r"^[A-Za-z_]\w*(\.[A-Za-z_]\w*)*$")
_files: dict[tuple[str, int, int], Any] = {}  # (resolved path, mtime, size) -> the module it was imported as


def _load(kind: str, spec: str, group: str) -> Any:
    """What plug-in ``spec`` of ``kind`` names: a ``FILE.py:NAME`` or ``MODULE:NAME`` attribute, or the entry
    point of that name in ``group``."""
    location, _, attribute = spec.rpartition(":")
    if location:
        if not attribute:
            raise ConfigError(f"{kind} {spec!r}: name the attribute after the colon (FILE.py:NAME, MODULE:NAME)")
        if _is_file(location):
            where, module = location, _import_file(kind, spec, location)
        elif _MODULE_NAME.match(location):
            where, module = f"module {location}", _import_module(kind, spec, location)
        else:
            raise ConfigError(f"{kind} {spec!r}: {location!r} is neither a Python file (FILE.py) nor a module name")
        return _attribute(kind, spec, module, attribute, where)
    found = _entry_point(group, spec)
    if found is None:
        raise ConfigError(f"{kind} {spec!r}: no entry point of that name in group {group}")
    try:
        return found.load()
    except Exception as exc:  # the package's own code failed: say so, on one line
        raise PluginError(f"{kind} {spec!r}: entry point {found.value} failed to load "
                          f"({type(exc).__name__}: {exc})") from None


def _entry_point(group: str, name: str) -> Any:
    """The installed entry point ``name`` of ``group``, or None."""
    from importlib.metadata import entry_points

    return next(iter(entry_points(group=group, name=name)), None)


def _is_file(location: str) -> bool:
    """Whether the part before the colon names a file (``x.py``, ``dir/x``) rather than a module."""
    return location.endswith(".py") or "/" in location or "\\" in location


def _import_target(path: str) -> Any:
    """The attribute a ``module:attribute`` path of the package names (a lazily registered built-in)."""
    module, _, attribute = path.partition(":")
    return getattr(importlib.import_module(module), attribute)


def _import_file(kind: str, spec: str, location: str) -> Any:
    path = Path(location).expanduser()
    try:
        stat = path.stat()
    except OSError:
        raise PluginError(f"{kind} {spec!r}: file {location} not found") from None
    key = (str(path.resolve()), stat.st_mtime_ns, stat.st_size)
    module = _files.get(key)
    if module is None:
        stem = re.sub(r"\W", "_", path.stem)
        name = f"scheduler_plugin_{stem}_{data_hash(key[0], 12)}"
        module_spec = importlib.util.spec_from_file_location(name, path)
        if module_spec is None or module_spec.loader is None:
            raise PluginError(f"{kind} {spec!r}: {location} is not a Python file")
        module = importlib.util.module_from_spec(module_spec)
        sys.modules[name] = module  # msgspec and dataclasses look the module up while it runs
        try:
            module_spec.loader.exec_module(module)
        except Exception as exc:  # the user's code failed: say where, on one line
            del sys.modules[name]
            raise PluginError(f"{kind} {spec!r}: {location} failed to load ({error_text(exc)})") from None
        _files[key] = module
    return module


def _import_module(kind: str, spec: str, name: str) -> Any:
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        raise PluginError(f"{kind} {spec!r}: no module named {exc.name!r}") from None
    except Exception as exc:
        raise PluginError(f"{kind} {spec!r}: module {name} failed to load ({error_text(exc)})") from None


def _attribute(kind: str, spec: str, module: Any, attribute: str, where: str) -> Any:
    target = module
    for part in attribute.split("."):
        try:
            target = getattr(target, part)
        except AttributeError:
            raise ConfigError(f"{kind} {spec!r}: {where} has no attribute {attribute!r}") from None
    return target
