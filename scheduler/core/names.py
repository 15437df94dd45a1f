"""Option values that carry an argument, ``NAME:ARG``: a ``score:FILE`` policy, a ``constant:C`` predictor."""

from __future__ import annotations


def split_argument(value: str) -> tuple[str, str | None]:
    """``(name, argument)`` of ``NAME:ARG``: the name before the first colon, in lower case, and the text after it
    as given (``""`` after a bare colon); the argument is None when there is no colon."""
    name, colon, argument = value.partition(":")
    return name.lower(), argument if colon else None
