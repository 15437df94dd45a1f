"""The option reference, ``docs/options.md``: rendered from the same declarations as ``--help``, so that the two
cannot disagree. ``python -m scheduler.cli.option_reference > docs/options.md`` writes it; a test holds the
file to :func:`render`."""

from __future__ import annotations

from scheduler.cli.options import option_help
from scheduler.config import SchedulerConfig
from scheduler.option import OPTION_GROUPS, flags_of, options_of


def render() -> str:
    """The reference in Markdown: one table per group of options, one row per option."""
    options = options_of(SchedulerConfig)
    lines = ["# Scheduling options", "",
             "`simulate` and `serve` take these flags; a `--config` file, `--variant_options`, Batsim's `--sched-cfg` "
             "and a sweep's `options` take the same options by name (`probe_threshold` or `probe-threshold`). This "
             "page is generated from the declarations `--help` reads (`python -m scheduler.cli.option_reference > "
             "docs/options.md`).", ""]
    for group, (title, description) in OPTION_GROUPS.items():
        lines += [f"## {title[0].upper()}{title[1:]}", ""]
        if description:
            lines += [f"{description[0].upper()}{description[1:]}.", ""]
        lines += ["| flag | name | what it does |", "|---|---|---|"]
        for name, spec in options.items():
            if spec.group == group:
                flags = ", ".join(f"`{flag}{' ' + spec.metavar if spec.metavar else ''}`"
                                  for flag in flags_of(name, spec))
                text = option_help(name, spec).replace("%%", "%").replace("|", "\\|")
                lines.append(f"| {flags} | `{name}` | {text} |")
        lines.append("")
    return "\n".join(lines)


if __name__ == "__main__":
    print(render(), end="")
