"""Text that fits the console: its width, wrapped lines, labelled rows, and columns side by side, split into
blocks of columns when they do not fit."""

from __future__ import annotations

import shutil
import textwrap

#: The width when the output is no terminal and ``COLUMNS`` is not set (a file, a pipe, a CI log).
DEFAULT_WIDTH = 100
#: No table is laid out narrower than this, whatever ``COLUMNS`` says.
MIN_WIDTH = 80
#: Between two columns.
GAP = "  "


def console_width() -> int:
    """``COLUMNS`` when set, else the terminal's width, else :data:`DEFAULT_WIDTH`; at least :data:`MIN_WIDTH`."""
    return max(MIN_WIDTH, shutil.get_terminal_size((DEFAULT_WIDTH, 24)).columns)


def wrap(text: str, width: int, indent: str = "  ") -> list[str]:
    """``text`` in lines of at most ``width`` characters, the later ones indented by ``indent``; words (file
    names, hyphenated names) are never broken, so a single word longer than the line stays whole."""
    return textwrap.wrap(text, width, subsequent_indent=indent, break_long_words=False,
                         break_on_hyphens=False) or [""]


def labelled(rows: list[tuple[str, str]], width: int) -> list[str]:
    """One row per (label, value): labels in a column, each value wrapped beside its label."""
    size = max(len(label) for label, _ in rows)
    lines = []
    for label, value in rows:
        wrapped = wrap(value, max(width - size - len(GAP), 20), indent="")
        lines.append(f"{label:<{size}}{GAP}{wrapped[0]}")
        lines += [" " * (size + len(GAP)) + line for line in wrapped[1:]]
    return lines


def side_by_side(names: list[str], rows: list[tuple[str, list[str]]], width: int) -> list[str]:
    """A table with one right-aligned column per name and a label per row, in at most ``width`` characters
    when it can be: the names are broken after their hyphens when the columns do not fit whole, then the
    columns are split into blocks (each with the row labels, one after the other, a blank line between)."""
    size = max(len(label) for label, _ in rows)
    values = [max((len(row[j]) for _, row in rows), default=0) for j in range(len(names))]
    widths = [max(value, len(name)) for value, name in zip(values, names)]
    headers = [[name] for name in names]
    if size + sum(len(GAP) + w for w in widths) > width:
        widths = [max(value, *map(len, _pieces(name))) for value, name in zip(values, names)]
        headers = [_header(name, w) for name, w in zip(names, widths)]
    lines: list[str] = []
    for block in _blocks([len(GAP) + w for w in widths], width - size):
        height = max(len(headers[j]) for j in block)
        if lines:
            lines.append("")
        for i in range(height):
            cells = [_line(headers[j], i - height + len(headers[j])) for j in block]
            lines.append((" " * size + "".join(f"{GAP}{cell:>{widths[j]}}" for cell, j in zip(cells, block)))
                         .rstrip())
        lines += [f"{label:<{size}}" + "".join(f"{GAP}{row[j]:>{widths[j]}}" for j in block)
                  for label, row in rows]
    return lines


def _pieces(name: str) -> list[str]:
    """``name`` cut after each hyphen: "classification-idempotent" -> ["classification-", "idempotent"]."""
    parts = name.split("-")
    return [part + "-" for part in parts[:-1]] + [parts[-1]]


def _header(name: str, width: int) -> list[str]:
    """The lines of a column's name: its pieces (:func:`_pieces`) joined while they fit ``width``."""
    lines = [""]
    for piece in _pieces(name):
        if lines[-1] and len(lines[-1]) + len(piece) > width:
            lines.append("")
        lines[-1] += piece
    return lines


def _line(lines: list[str], i: int) -> str:
    return lines[i] if 0 <= i < len(lines) else ""


def _blocks(sizes: list[int], room: int) -> list[list[int]]:
    """The columns (by index, in order) in as few blocks as fit ``room`` (a column wider than it alone), as
    even in number of columns as the widths allow."""
    greedy: list[list[int]] = [[]]
    for j, size in enumerate(sizes):
        if greedy[-1] and sum(sizes[k] for k in greedy[-1]) + size > room:
            greedy.append([])
        greedy[-1].append(j)
    few, extra = divmod(len(sizes), len(greedy))  # the first `extra` blocks take one column more
    ends = [(b + 1) * few + min(b + 1, extra) for b in range(len(greedy))]
    even = [list(range(start, end)) for start, end in zip([0, *ends], ends)]
    fits = all(sum(sizes[k] for k in block) <= room for block in even)
    return even if fits else greedy
