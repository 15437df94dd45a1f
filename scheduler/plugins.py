"""Plug-ins: the scheduling algorithm, queue order and classifier estimator a config names.

A name (a *spec*) is resolved the same way for the three kinds:

1. a built-in name (``easy``, ``spf``, ``score:FILE``, ``forest``...), from the kind's registry;
2. ``FILE.py:NAME``: attribute NAME of a Python file of the user's (imported once per process and version
   of the file);
3. ``MODULE:NAME``: attribute NAME of an importable module (``my_package.orders:AgedArea``);
4. a name of an installed package's entry point in the kind's group (:data:`GROUPS`).

What a spec names is checked for its kind: an :class:`~scheduler.core.algorithm.Algorithm` subclass; a
queue order (a key function ``key(job, estimate, now) -> tuple``, a :class:`~scheduler.core.policies.Policy`,
or a class making a key function); a classifier estimator (an unfitted scikit-learn classifier, or a class or
function making one). Every error is a :class:`ConfigError` naming the spec.

A plug-in declares its options as ``Options``, a :class:`msgspec.Struct` class: the options given (a JSON
object) are validated once, by msgspec, unknown names refused (:func:`check_options`), into an instance of it.
An algorithm class gets that instance as ``self.options``; a queue order or an estimator that declares
``Options`` is called with it and returns the key function or the unfitted estimator. Without ``Options``, a
class is called without arguments, a key function or an estimator is used as it is, a function making an
estimator is called; such an estimator takes its scikit-learn parameters as options.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import inspect
import re
import sys
from functools import partial
from pathlib import Path
from typing import Annotated, Any, Callable, get_args, get_origin

import msgspec

from scheduler.core.algorithm import Algorithm
from scheduler.core.algorithms import algorithm_name, get_algorithm
from scheduler.core.policies import Policy, policy_name, score_file
from scheduler.errors import ConfigError, PluginError

KINDS = ("algorithm", "policy", "estimator")
#: The entry-point group of each kind: an installed package registers ``NAME = module:attribute`` there.
GROUPS = {"algorithm": "batsim_classifier_scheduler.algorithms",
          "policy": "batsim_classifier_scheduler.policies",
          "estimator": "batsim_classifier_scheduler.estimators"}
#: The built-in estimators, by name: each a module spec, imported only when used (scikit-learn is heavy).
ESTIMATORS = {"forest": "scheduler.knowledge.learner:default_forest"}
#: The option that holds each kind's options, to name it in errors and help.
OPTIONS_FIELD = {kind: f"{kind}_options" for kind in KINDS}

_SPEC_HINT = "or a plug-in: FILE.py:NAME, MODULE:NAME, or the name of an entry point of group {group}"
_MODULE_NAME = re.compile(r"^[A-Za-z_]\w*(\.[A-Za-z_]\w*)*$")
_files: dict[tuple[str, int, int], Any] = {}  # (resolved path, mtime, size) -> the module it was imported as


def estimator_name(name: str) -> str:
    """The canonical name of built-in estimator ``name`` (case-insensitive)."""
    if name.lower() not in ESTIMATORS:
        raise ConfigError(f"unknown estimator {name!r}; known: {', '.join(ESTIMATORS)}")
    return name.lower()


#: Each kind's built-in names: a name -> its canonical form, ConfigError for a name the registry does not know.
_BUILTIN_NAMES: dict[str, Callable[[str], str]] = {
    "algorithm": algorithm_name, "policy": policy_name, "estimator": estimator_name}


# --- resolving a spec ------------------------------------------------------------------------


def resolve(kind: str, spec: str) -> str:
    """The canonical name of built-in ``spec``, else ``spec`` itself once it loads as a plug-in of ``kind``."""
    try:
        return _BUILTIN_NAMES[kind](spec)
    except ConfigError as unknown:
        if kind == "policy" and score_file(spec) is not None:
            raise
        if ":" not in spec and _entry_point(kind, spec) is None:
            raise ConfigError(f"{unknown}; {_SPEC_HINT.format(group=GROUPS[kind])}") from None
    load(kind, spec)
    return spec


def is_builtin(kind: str, spec: str) -> bool:
    """Whether ``spec`` is a built-in name of ``kind`` (``score:FILE`` included)."""
    try:
        _BUILTIN_NAMES[kind](spec)
    except ConfigError:
        return kind == "policy" and score_file(spec) is not None
    return True


def load(kind: str, spec: str) -> Any:
    """What plug-in ``spec`` names (not a built-in name), checked for ``kind``."""
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
        target = _attribute(kind, spec, module, attribute, where)
    else:
        entry_point = _entry_point(kind, spec)
        if entry_point is None:
            raise ConfigError(f"{kind} {spec!r}: no entry point of that name in group {GROUPS[kind]}")
        try:
            target = entry_point.load()
        except Exception as exc:  # the package's own code failed: say so, on one line
            raise PluginError(f"{kind} {spec!r}: entry point {entry_point.value} failed to load "
                              f"({type(exc).__name__}: {exc})") from None
    _check_kind(kind, spec, target)
    options_type(kind, spec, target)
    return target


def source_file(kind: str, spec: str) -> str | None:
    """The Python file of a ``FILE.py:NAME`` spec (a run's input, checksummed with it), else None."""
    location = spec.rpartition(":")[0]
    return None if is_builtin(kind, spec) or not _is_file(location) else location


def _is_file(location: str) -> bool:
    """Whether the part before the colon names a file (``x.py``, ``dir/x``) rather than a module."""
    return location.endswith(".py") or "/" in location or "\\" in location


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
        name = f"scheduler_plugin_{stem}_{hashlib.sha256(key[0].encode()).hexdigest()[:12]}"
        module_spec = importlib.util.spec_from_file_location(name, path)
        if module_spec is None or module_spec.loader is None:
            raise PluginError(f"{kind} {spec!r}: {location} is not a Python file")
        module = importlib.util.module_from_spec(module_spec)
        sys.modules[name] = module  # msgspec and dataclasses look the module up while it runs
        try:
            module_spec.loader.exec_module(module)
        except Exception as exc:  # the user's code failed: say where, on one line
            del sys.modules[name]
            raise PluginError(f"{kind} {spec!r}: {location} failed to load ({_error_text(exc)})") from None
        _files[key] = module
    return module


def _import_module(kind: str, spec: str, name: str) -> Any:
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        raise PluginError(f"{kind} {spec!r}: no module named {exc.name!r}") from None
    except Exception as exc:
        raise PluginError(f"{kind} {spec!r}: module {name} failed to load ({_error_text(exc)})") from None


def _error_text(exc: BaseException) -> str:
    """An exception on one line, with the file and line of a syntax error."""
    if isinstance(exc, SyntaxError):
        return f"SyntaxError: {exc.msg}, line {exc.lineno}"
    return f"{type(exc).__name__}: {exc}"


def _attribute(kind: str, spec: str, module: Any, attribute: str, where: str) -> Any:
    target = module
    for part in attribute.split("."):
        try:
            target = getattr(target, part)
        except AttributeError:
            raise ConfigError(f"{kind} {spec!r}: {where} has no attribute {attribute!r}") from None
    return target


def _entry_point(kind: str, name: str) -> Any:
    """The installed entry point ``name`` of the kind's group, or None."""
    from importlib.metadata import entry_points

    return next(iter(entry_points(group=GROUPS[kind], name=name)), None)


def _check_kind(kind: str, spec: str, target: Any) -> None:
    got = f"got {_describe(target)}"
    if kind == "algorithm":
        if not (inspect.isclass(target) and issubclass(target, Algorithm)):
            raise ConfigError(f"algorithm {spec!r}: not an Algorithm subclass "
                              f"(scheduler.core.algorithm.Algorithm); {got}")
        if inspect.isabstract(target):
            missing = ", ".join(sorted(target.__abstractmethods__))
            raise ConfigError(f"algorithm {spec!r}: {target.__name__} does not implement {missing}")
    elif inspect.isclass(target) and issubclass(target, Algorithm):
        raise ConfigError(f"{kind} {spec!r}: {target.__name__} is a scheduling algorithm: give it to --algorithm")
    elif kind == "policy":
        if not (isinstance(target, Policy) or callable(target)):
            raise ConfigError(f"policy {spec!r}: not a queue order (a key function (job, estimate, now) -> tuple, a "
                              f"Policy, or a class making a key function); {got}")
    elif not (callable(target) or _is_estimator(target)):
        raise ConfigError(f"estimator {spec!r}: not a classifier estimator (an unfitted scikit-learn classifier, or a "
                          f"class or function making one); {got}")


def _describe(target: Any) -> str:
    if inspect.isclass(target):
        return f"class {target.__name__}"
    if inspect.isfunction(target):
        return f"function {target.__name__}"
    return f"a {type(target).__name__}"


def _is_estimator(target: Any) -> bool:
    return not inspect.isclass(target) and hasattr(target, "fit") and hasattr(target, "get_params")


# --- options ---------------------------------------------------------------------------------


def options_type(kind: str, spec: str, target: Any) -> type[msgspec.Struct] | None:
    """The ``Options`` struct a plug-in declares, None when it declares none."""
    declared = getattr(target, "Options", None)
    if declared is None:
        return None
    if not (inspect.isclass(declared) and issubclass(declared, msgspec.Struct)):
        raise ConfigError(f"{kind} {spec!r}: its Options must be a msgspec.Struct class, got {_describe(declared)}")
    return declared


def target_of(kind: str, spec: str) -> Any:
    """What ``spec`` names: a built-in's registry entry (an algorithm class, a policy name, an estimator factory)
    or the plug-in (see :func:`load`)."""
    if is_builtin(kind, spec):
        if kind == "algorithm":
            return get_algorithm(spec)
        if kind == "estimator":
            return load(kind, ESTIMATORS[estimator_name(spec)])
        return spec
    return load(kind, spec)


def check_options(kind: str, spec: str, options: dict | None) -> dict | None:
    """The canonical ``options`` of plug-in ``spec``: every field of its ``Options`` (defaults filled in),
    None for one that declares none (then options are refused, but for an estimator's scikit-learn
    parameters). Errors name the option and the spec."""
    label = OPTIONS_FIELD[kind]
    target = target_of(kind, spec)
    declared = options_type(kind, spec, target)
    if declared is not None:
        canonical = msgspec.to_builtins(_convert(declared, options or {}, label, kind, spec))
    elif not options:
        canonical = None
    elif kind == "estimator":
        _check_estimator_parameters(spec, target, options)
        canonical = dict(options)
    else:
        raise ConfigError(f"{label}: {kind} {spec!r} takes no options")
    if kind == "policy" and not is_builtin(kind, spec):
        make_policy(spec, canonical)  # cheap: a plug-in that cannot make its key function fails here, at the door
    return canonical


def _convert(declared: type[msgspec.Struct], options: dict, label: str, kind: str, spec: str) -> msgspec.Struct:
    known = {field.encode_name for field in msgspec.structs.fields(declared)}
    unknown = sorted(set(options) - known)
    if unknown:
        raise ConfigError(f"{label}: unknown option(s) {', '.join(unknown)} of {kind} {spec!r}; "
                          f"known: {', '.join(sorted(known)) or 'none'}")
    try:
        return msgspec.convert(options, declared)
    except msgspec.ValidationError as exc:
        message, _, path = str(exc).partition(" - at `$.")
        raise ConfigError(f"{label}: {path.rstrip('`') + ': ' if path else ''}{message} ({kind} {spec!r})") from None


def _check_estimator_parameters(spec: str, target: Any, options: dict) -> None:
    """The scikit-learn parameters of the estimator ``target`` makes, checked by scikit-learn."""
    from scheduler.knowledge.learner import validate_estimator

    estimator = _unconfigured_estimator(spec, target)
    known = estimator.get_params(deep=False)
    unknown = sorted(set(options) - set(known))
    if unknown:
        raise ConfigError(f"estimator_options: unknown parameter(s) {', '.join(unknown)} of estimator {spec!r} "
                          f"({type(estimator).__name__}); known: {', '.join(sorted(known))}")
    estimator.set_params(**options)
    try:
        validate_estimator(estimator)
    except ConfigError as exc:
        raise ConfigError(f"estimator_options: {str(exc).removeprefix('classifier estimator: ')} "
                          f"(estimator {spec!r})") from None


def _unconfigured_estimator(spec: str, target: Any) -> Any:
    """The estimator an Options-less estimator plug-in gives: itself (a copy), or what calling it makes."""
    if _is_estimator(target):
        from sklearn.base import clone

        return clone(target)
    try:
        estimator = target()
    except Exception as exc:
        raise ConfigError(f"estimator {spec!r}: calling it failed ({_error_text(exc)})") from None
    if not _is_estimator(estimator):
        raise ConfigError(f"estimator {spec!r}: it made {_describe(estimator)}, not a scikit-learn estimator")
    return estimator


def describe_options(kind: str, spec: str) -> list[str]:
    """One line per option of ``spec``: name, type and constraints, default, and its description."""
    target = target_of(kind, spec)
    declared = options_type(kind, spec, target)
    if declared is None:
        if kind != "estimator":
            return []
        parameters = _unconfigured_estimator(spec, target).get_params(deep=False)
        return [f"{name} (scikit-learn parameter, default {value!r})" for name, value in sorted(parameters.items())]
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


# --- making the plug-ins ---------------------------------------------------------------------


def options_instance(kind: str, spec: str, options: dict | None) -> msgspec.Struct | None:
    """The ``Options`` instance of canonical ``options`` (see :func:`check_options`), None without."""
    declared = options_type(kind, spec, target_of(kind, spec))
    return None if declared is None else _convert(declared, options or {}, OPTIONS_FIELD[kind], kind, spec)


def make_algorithm(spec: str, options: dict | None) -> Callable[..., Algorithm]:
    """What makes the algorithm ``spec`` names: its class, given its ``Options`` instance when it declares one."""
    target = target_of("algorithm", spec)
    instance = options_instance("algorithm", spec, options)
    return target if instance is None else partial(target, options=instance)


def make_policy(spec: str, options: dict | None) -> Policy:
    """The queue order plug-in ``spec`` names, made with its options."""
    target = load("policy", spec)
    instance = options_instance("policy", spec, options)
    if instance is not None:
        target = _call("policy", spec, target, instance)
    elif inspect.isclass(target):
        target = _call("policy", spec, target)
    if isinstance(target, Policy):
        return target
    if not callable(target):
        raise ConfigError(f"policy {spec!r}: it made {_describe(target)}, not a key function (job, estimate, now)")
    doc = (inspect.getdoc(target) or "").partition("\n")[0]
    return Policy(spec, doc or f"the queue order of {spec}", target, dynamic=bool(getattr(target, "dynamic", False)))


def make_estimator(spec: str, options: dict | None) -> Any:
    """A new, unfitted estimator of ``spec``, with its options."""
    target = target_of("estimator", spec)
    instance = options_instance("estimator", spec, options)
    if instance is not None:
        estimator = _call("estimator", spec, target, instance)
    else:
        estimator = _unconfigured_estimator(spec, target)
        if options:
            estimator.set_params(**options)
    if not _is_estimator(estimator):
        raise ConfigError(f"estimator {spec!r}: it made {_describe(estimator)}, not a scikit-learn estimator")
    return estimator


def _call(kind: str, spec: str, target: Callable, *arguments: Any) -> Any:
    try:
        return target(*arguments)
    except Exception as exc:  # the plug-in's own code failed: name it, on one line
        raise ConfigError(f"{kind} {spec!r}: making it failed ({_error_text(exc)})") from None
