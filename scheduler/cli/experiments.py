"""``sweep`` and ``report`` (placeholder registration: filled in by the experiments module)."""

from __future__ import annotations

import argparse


def register(subparsers: argparse._SubParsersAction) -> None:
    """Registers nothing yet."""
