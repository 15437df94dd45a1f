"""Scheduling options shared by ``simulate`` and ``serve``: one flag per :class:`SchedulerConfig` field,
made from the field's declaration, plus ``--variant`` and the option files.

Every source of options is checked on its own, so that an error names where the bad value came from;
flags win over ``--variant_options``, which wins over ``--config``.
"""

from __future__ import annotations

import argparse
import math
import re
import textwrap
from typing import Any, Callable

from batsim_classifier_scheduler import registry
from batsim_classifier_scheduler.config import SchedulerConfig
from batsim_classifier_scheduler.config.option import (OPTION_GROUPS, Option, flags_of, integer_text, main_flag, number_text, options_of,
                              positive_integer, positive_seconds)
from batsim_classifier_scheduler.config.variants import RECOMMENDED, VARIANTS, resolve
from batsim_classifier_scheduler.errors import ConfigError, PluginError, UsageError
from batsim_classifier_scheduler.util.values import MAX_MACHINES

def flag_type(parse: Callable[[str], Any]) -> Callable[[str], Any]:
    """An argparse ``type`` from a parser raising ValueError: its message becomes argparse's error."""
    def convert(text: str) -> Any:
        try:
            return parse(text)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None
    return convert


def positive_number(value: float) -> float:
    """A positive, finite number."""
    if not math.isfinite(value) or value <= 0:
        raise ValueError(f"expected a positive number, got {value!r}")
    return value


def machine_size(value: int) -> int:
    """A machine size: a positive integer up to :data:`MAX_MACHINES`, the bound of every door (workload files,
    platforms, Batsim's messages)."""
    if not 0 < value <= MAX_MACHINES:
        raise ValueError(f"expected a positive integer up to {MAX_MACHINES:,} (2**24) machines, got {value}")
    return value


#: ``type`` of flags taking a positive number of seconds, a positive count, a positive number, a seed.
seconds_flag = flag_type(lambda text: positive_seconds(number_text(text)))
count_flag = flag_type(lambda text: positive_integer(integer_text(text)))
#: ``type`` of flags taking a number of machines (``--nb-res``).
machines_flag = flag_type(lambda text: machine_size(integer_text(text)))
number_flag = flag_type(lambda text: positive_number(number_text(text)))
seed_flag = flag_type(lambda text: options_of(SchedulerConfig)["seed"].check(integer_text(text)))
#: ``type`` of a socket's ``--timeout``: seconds, 0 (None) to wait forever.
timeout_flag = flag_type(lambda text: None if number_text(text) == 0 else positive_seconds(number_text(text)))
#: The default ``--timeout`` of both sides of the socket: long enough for any decision or simulation step.
DEFAULT_TIMEOUT = 600.0


def option_groups(parser: argparse.ArgumentParser) -> dict[str, Any]:
    """One argument group of ``parser`` per :data:`OPTION_GROUPS` entry, in its order (``--help`` shows them so)."""
    return {key: parser.add_argument_group(title, description) for key, (title, description) in OPTION_GROUPS.items()}


def add_scheduling_options(parser: argparse.ArgumentParser, groups: dict[str, Any] | None = None, *,
                           several_variants: bool = False) -> dict[str, Any]:
    """Add ``--variant``, the option files and a flag per :class:`SchedulerConfig` field, each in its group
    (made here unless given); return the groups, for the command's own options. ``several_variants``:
    ``--variant`` takes a comma-separated list (``simulate``)."""
    groups = groups or option_groups(parser)
    run = groups["run"]
    named = ", ".join(VARIANTS).replace(RECOMMENDED, f"{RECOMMENDED} (ours, recommended)") + ", or FILE.json:PRESET"
    if several_variants:
        run.add_argument("--variant", metavar="NAME[,NAME...]",
                         help=f"a variant, or several (or 'all') to compare with the first: {named}")
    else:
        run.add_argument("--variant", metavar="NAME", type=variant_list, help=f"a variant: {named}")
    run.add_argument("--config", "--variant_options_filepath", dest="config", metavar="FILE",
                     help="JSON file of scheduling options; flags override it")
    run.add_argument("--variant_options", metavar="JSON",
                     help="scheduling options as a JSON object; flags override it")
    for name, spec in options_of(SchedulerConfig).items():
        groups[spec.group].add_argument(*flags_of(name, spec), dest=name, metavar=spec.metavar, help=option_help(name, spec),
                                        type=None if spec.parse is str else flag_type(spec.parse))
    parser.help_extra = plugin_help
    return groups


def variant_list(text: str) -> str:
    """``--variant``'s text, once each variant it names is known (``all``, or names separated by commas)."""
    if not text:
        raise argparse.ArgumentTypeError("expected a value, got ''")
    for name in text.split(","):
        if name.strip() and name.strip() != "all":
            try:
                resolve(name.strip())
            except ConfigError as exc:
                raise argparse.ArgumentTypeError(str(exc)) from None
    return text


#: The options that name a plug-in, with the kind of each.
PLUGIN_OPTIONS = {"algorithm": "algorithm", "policy": "policy", "backfill_order": "policy", "estimator": "estimator"}


def plugin_help(argv: list[str]) -> str:
    """What ``--help`` adds: the options of each plug-in the command line names (``--algorithm X``...), with
    their type, default and description."""
    specs = options_of(SchedulerConfig)
    finder = argparse.ArgumentParser(add_help=False, exit_on_error=False)
    for name in PLUGIN_OPTIONS:
        finder.add_argument(*flags_of(name, specs[name]), dest=name)
    try:
        given = vars(finder.parse_known_args(argv)[0])
    except argparse.ArgumentError:  # e.g. --algorithm without its name: the usual help is all there is
        return ""
    sections = []
    for name, kind in PLUGIN_OPTIONS.items():
        spec = given[name]
        if spec is None or (kind != "estimator" and registry.is_builtin(kind, spec)):
            continue  # a built-in algorithm or order takes no options; the estimator's are its parameters
        try:
            lines = registry.describe_options(kind, spec)
        except ConfigError as exc:
            sections.append(f"cannot list its options: {exc}")
            continue
        if not lines:
            sections.append(f"{kind} {spec} takes no options")
            continue
        given_as = ("runs with its defaults, as --backfill-order" if name == "backfill_order" else
                    f"given as {main_flag(f'{kind}_options', specs[f'{kind}_options'])} JSON")
        sections.append("\n".join([f"options of {kind} {spec} ({given_as}):",
                                   *(textwrap.fill(line, 118, initial_indent="  ", subsequent_indent="      ")
                                     for line in lines)]))
    return "".join(f"\n{section}\n" for section in sections)


def option_help(name: str, spec: Option) -> str:
    """The help of option ``name``: its text, its choices and its default (``%`` doubled for argparse)."""
    text = spec.help
    if spec.choices:
        text += "; one of " + ", ".join(spec.choices())
    default = SchedulerConfig.__dataclass_fields__[name].default
    if default is not None:
        text += f" (default {default})"
    return text.replace("%", "%%")


def flag_labels() -> dict[str, str]:
    """Each option as argparse names it in its errors (``argument --seed``)."""
    return {name: f"argument {main_flag(name, spec)}" for name, spec in options_of(SchedulerConfig).items()}


#: The settings that define a variant (the paper's Figure 9): a flag may not turn off one its variant turns on.
DEFINING = ("classifier", "safeguard", "estimates")


def option_overrides(args: argparse.Namespace) -> dict:
    """The scheduling options given as flags (``--variant`` first, explicit flags on top), checked: a value
    refused is a :class:`UsageError` (exit 2), but for a plug-in file or module that cannot be loaded."""
    variant = getattr(args, "variant", None)
    try:
        overrides = resolve(variant) if variant else {}
    except ConfigError as exc:
        raise UsageError(f"argument --variant: {exc}") from None
    specs = options_of(SchedulerConfig)
    for name, spec in specs.items():
        given = getattr(args, name, None)
        if given is None:
            continue
        defining, default = overrides.get(name), SchedulerConfig.__dataclass_fields__[name].default
        if name in DEFINING and defining not in (None, default) and str(given).lower() == default:
            flag = main_flag(name, spec)
            raise UsageError(f"--variant {variant} is defined by {flag} {defining}: {flag} {given} would run "
                             f"another variant under its name; drop {flag}, or choose the variant you mean")
        overrides[name] = given
    try:
        return SchedulerConfig.check_options(overrides, None, flag_labels())
    except PluginError:
        raise
    except ConfigError as exc:
        raise UsageError(str(exc)) from None


def file_options(args: argparse.Namespace) -> dict:
    """The scheduling options of ``--config`` FILE and ``--variant_options`` JSON (the JSON wins), checked."""
    options = SchedulerConfig.read_options(args.config) if args.config else {}
    if args.variant_options:
        given = SchedulerConfig.parse_options(args.variant_options, "--variant_options")
        options.update(SchedulerConfig.check_options(given, "--variant_options"))
    return options


def config_from_args(args: argparse.Namespace) -> SchedulerConfig:
    """The config of the option files (if any) with the command-line flags applied on top.

    Options that do not go together are the command line's mistake (:class:`UsageError`) unless the files'
    options alone already do not."""
    files, flags = file_options(args), option_overrides(args)
    variant = getattr(args, "variant", None)
    try:
        return SchedulerConfig.from_dict({**files, **flags}, f"--variant {variant}" if variant else "scheduling options")
    except PluginError:
        raise
    except ConfigError as exc:
        if files:
            SchedulerConfig.from_dict(files, args.config or "--variant_options")  # the files' own mistake: exit 1
        raise UsageError(in_flags(str(exc))) from None


def in_flags(message: str) -> str:
    """``message`` with the options it names given as the flags a user types: a name with an underscore
    wherever it stands, a one-word name where it is an option (``NAME: ...``, ``needs NAME 'VALUE'``; not a
    plug-in's kind, as in ``of policy 'X'``)."""
    for name, spec in options_of(SchedulerConfig).items():
        width = len(name)
        context = "" if "_" in name else (rf"(?:(?=: )(?<!the \w{{{width}}})|(?= ')(?<!of \w{{{width}}})"
                                          rf"(?<!\(\w{{{width}}})(?<!: \w{{{width}}}))")
        message = re.sub(rf"(?<![\w-]){name}(?![\w-]){context}", main_flag(name, spec), message)
    return message
