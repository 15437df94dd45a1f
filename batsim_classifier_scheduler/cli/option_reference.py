"""The option reference, ``docs/options.md``: rendered from ``simulate``'s own parser, the one ``--help`` prints,
so that the two cannot disagree. ``python -m batsim_classifier_scheduler.cli.option_reference > docs/options.md`` writes it; a
test holds the file to :func:`render`."""

from __future__ import annotations

import argparse

from batsim_classifier_scheduler.config import SchedulerConfig
from batsim_classifier_scheduler.config.option import options_of


def _simulate_parser() -> argparse.ArgumentParser:
    from batsim_classifier_scheduler.cli import build_parser

    return build_parser("simulate")._subparsers._group_actions[0].choices["simulate"]


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def render() -> str:
    """The reference in Markdown: one table per group of ``simulate --help``, one row per flag; the scheduling
    options' names as a ``--config`` file, ``--variant_options`` or Batsim's ``--sched-cfg`` take them."""
    parser = _simulate_parser()
    formatter = parser._get_formatter()
    options = options_of(SchedulerConfig)
    lines = ["# Options of `simulate`", "",
             "`simulate` takes these flags, and `serve` the scheduling ones (every row with a name); a `--config` "
             "file, `--variant_options`, Batsim's `--sched-cfg` and a sweep's `options` take the scheduling options "
             "by name (`probe_threshold` or `probe-threshold`). This page is generated from the parser that "
             "`simulate --help` prints, with the details `--help` leaves out "
             "(`python -m batsim_classifier_scheduler.cli.option_reference > docs/options.md`).", ""]
    for group in parser._action_groups:
        actions = [action for action in group._group_actions if action.option_strings and action.dest != "help"]
        if not actions:
            continue
        lines += [f"## {group.title[0].upper()}{group.title[1:]}", ""]
        if group.description:
            lines += [f"{_cell(group.description[0].upper() + group.description[1:])}.", ""]
        lines += ["| flag | name | what it does |", "|---|---|---|"]
        for action in actions:
            metavar = f" {action.metavar}" if action.metavar else ""
            flags = ", ".join(f"`{flag}{metavar}`" for flag in action.option_strings)
            name = f"`{action.dest}`" if action.dest in options else "–"
            text = formatter._expand_help(action) if action.help else ""
            if action.dest in options and options[action.dest].details:
                text += f". {options[action.dest].details}"
            lines.append(f"| {flags} | {name} | {_cell(text)} |")
        lines.append("")
    return "\n".join(lines)


if __name__ == "__main__":
    print(render(), end="")
