"""Loading a plug-in a name points to, the same way for every kind of name (``scheduler.registry``).

A plug-in is named one of three ways:

1. ``FILE.py:NAME``: attribute NAME of a Python file of the user's (imported once per process and version
   of the file);
2. ``MODULE:NAME``: attribute NAME of an importable module (``my_package.orders:AgedArea``);
3. the name of an installed package's entry point in the kind's group.

Every error is a :class:`ConfigError` (a :class:`PluginError` when a file or module cannot be found or
loaded) naming the kind and the spec. What the plug-in must be is the registry's business, not this module's.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import re
import sys
from pathlib import Path
from typing import Any

from scheduler.errors import ConfigError, PluginError, error_text

_MODULE_NAME = re.compile(r"^[A-Za-z_]\w*(\.[A-Za-z_]\w*)*$")
_files: dict[tuple[str, int, int], Any] = {}  # (resolved path, mtime, size) -> the module it was imported as


def load(kind: str, spec: str, group: str) -> Any:
    """What plug-in ``spec`` of ``kind`` names: a ``FILE.py:NAME`` or ``MODULE:NAME`` attribute, or the entry
    point of that name in ``group``."""
    location, _, attribute = spec.rpartition(":")
    if location:
        if not attribute:
            raise ConfigError(f"{kind} {spec!r}: name the attribute after the colon (FILE.py:NAME, MODULE:NAME)")
        if is_file(location):
            where, module = location, _import_file(kind, spec, location)
        elif _MODULE_NAME.match(location):
            where, module = f"module {location}", _import_module(kind, spec, location)
        else:
            raise ConfigError(f"{kind} {spec!r}: {location!r} is neither a Python file (FILE.py) nor a module name")
        return _attribute(kind, spec, module, attribute, where)
    found = entry_point(group, spec)
    if found is None:
        raise ConfigError(f"{kind} {spec!r}: no entry point of that name in group {group}")
    try:
        return found.load()
    except Exception as exc:  # the package's own code failed: say so, on one line
        raise PluginError(f"{kind} {spec!r}: entry point {found.value} failed to load "
                          f"({type(exc).__name__}: {exc})") from None


def entry_point(group: str, name: str) -> Any:
    """The installed entry point ``name`` of ``group``, or None."""
    from importlib.metadata import entry_points

    return next(iter(entry_points(group=group, name=name)), None)


def is_file(location: str) -> bool:
    """Whether the part before the colon names a file (``x.py``, ``dir/x``) rather than a module."""
    return location.endswith(".py") or "/" in location or "\\" in location


def import_target(path: str) -> Any:
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
