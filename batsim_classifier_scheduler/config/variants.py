"""The settings that go together: the value sets of the choice options, the paper's variants and ours
(:data:`VARIANTS`), the presets that led to ours (:func:`resolve`), and the options that act only beside another
setting."""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any

from batsim_classifier_scheduler.errors import ConfigError

SAFEGUARDS = ("none", "kill")
#: Which jobs the safeguard's bound (the divider) plans: none, running ones, or all watched ones.
DIVIDER_ESTIMATES = ("none", "running", "all")
#: What the queue's policy orders a waiting job by: the estimate it is planned with, or its own estimate.
ORDER_BY = ("planned", "estimate")
#: When the kill safeguard kills a watched job past its deadline: then, or once its processors are needed.
KILL_ON = ("deadline", "demand", "blocking", "patient")
#: For which waiting job a job past its trial may be killed: one it would wait behind once requeued, or one
#: classified small or before it in the policy's order.
KILL_FOR = ("requeued", "policy", "order")
#: Which jobs a promotion out of Q (promote_after) moves: the job alone, with every job of Q before it in the
#: policy's order (no job of Q is overtaken by a promotion), or with the first of them (one for one).
PROMOTE_SCOPES = ("job", "ahead", "head")
#: --kill-limit, --waste-limit: which watched jobs get the trials the limits allow: first come; the likelier small
#: first; or the likelier small per processor-second a failed trial would waste first.
LIMIT_ORDERS = ("arrival", "p-small", "value")
#: --kill-limit, --waste-limit: whether a job refused a trial may get one later, while it still waits.
READMITS = ("none", "waiting")
#: Options that act only with probing (a probe_threshold), and only with the kill safeguard.
PROBING_OPTIONS = ("probe_length", "probe_limit")
KILL_OPTIONS = ("kill_on", "kill_for", "head_slack", "promote_overdue", "kill_limit", "waste_limit", "limit_order",
                "readmit")
#: Options that act only when waiting watched jobs are planned with their trial (divider_estimates all).
PLANNED_TRIAL_OPTIONS = ("order_by",)
#: Options that act only with a classifier, and why.
CLASSIFIER_OPTIONS = {"promote_scope": "it moves jobs out of Q, the queue of the jobs classified large",
                      "promote_after": "it moves jobs out of Q, the queue of the jobs classified large"}

#: The paper's variants (Figure 9): classifier, safeguard and runtime estimates; then ours. The steps that led to
#: ours are presets (``experiments/presets/variants.json``), each written as its difference from its parent.
VARIANTS: dict[str, dict[str, Any]] = {
    "base": {"classifier": "none", "safeguard": "none", "estimates": "requested"},
    "classification": {"classifier": "rf", "safeguard": "none", "estimates": "requested"},
    "classification-idempotent": {"classifier": "rf", "safeguard": "kill", "estimates": "requested"},
    "class-clairvoyant": {"classifier": "oracle", "safeguard": "none", "estimates": "requested"},
    "runtimes-clairvoyant": {"classifier": "none", "safeguard": "none", "estimates": "clairvoyant"},
    # ours (docs/variants.md): jobs the forest cannot call large with confidence get a trial of a divider (300 s at
    # most) under the safeguard; one past its trial is killed only if it is in the way of the first waiting job that
    # goes before it, unless that job is delayed by at most 0.3 x its request; a job that waited seven times its
    # request leaves Q, taking Q's first job with it; SPF orders by the requests
    "classification-ordered": {"classifier": "rf", "safeguard": "kill", "estimates": "requested",
                               "probe_threshold": 0.02, "divider_estimates": "all", "probe_length": 1.0,
                               "probe_limit": 300, "kill_on": "blocking", "kill_for": "order", "head_slack": 0.3,
                               "promote_after": 7.0, "order_by": "estimate", "promote_scope": "head"},
    # ordered within three guarantees: a trial is granted only if the run stays within 10% of its jobs killed and 1%
    # of its useful work wasted were every open trial killed (a kill is never refused; a job past its trial the limits
    # no longer cover is released, never killed; scarce trials go to the jobs likeliest small per processor-second
    # risked, and a job refused one gets it later while it still waits); and a job of Q (a killed job's retry among
    # them) whose wait since its first submission reaches the longest wait of a first attempt started unpromoted
    # moves ahead of every queue, one job per user at a time (the next once the previous has ended), so that a burst
    # of one user's jobs takes one lane, not the machine
    "classification-guaranteed": {"classifier": "rf", "safeguard": "kill", "estimates": "requested",
                                  "probe_threshold": 0.02, "divider_estimates": "all", "probe_length": 1.0,
                                  "probe_limit": 300, "kill_on": "blocking", "kill_for": "order", "head_slack": 0.3,
                                  "promote_after": 7.0, "order_by": "estimate", "promote_scope": "head",
                                  "kill_limit": 0.10, "waste_limit": 0.01, "limit_order": "value",
                                  "readmit": "waiting", "promote_overdue": "queue-user"},
}

#: The presets of ``experiments/presets/variants.json``, in the order they were made: tables and plots show them so,
#: after :data:`VARIANTS`.
PRESETS = ("classification-probing", "classification-bounded", "classification-blocking", "classification-tolerant",
           "classification-guarded", "classification-limited")
#: The variant ``--help`` recommends.
RECOMMENDED = "classification-guaranteed"


def preset_reference(name: str) -> tuple[str, str] | None:
    """``(FILE.json, NAME)`` when ``name`` names a preset ``FILE.json:NAME``, else None."""
    path, colon, preset = name.rpartition(":")
    return (path, preset) if colon and path.endswith(".json") else None


@lru_cache(maxsize=None)
def _presets(path: str) -> Any:
    """A presets file's JSON, read once per process."""
    try:
        return json.loads(Path(path).read_text())
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read presets file ({exc.strerror})") from None
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{path}: invalid JSON ({exc})") from None


def resolve(name: str) -> dict[str, Any]:
    """The settings of a variant: one of :data:`VARIANTS`, or a preset ``FILE.json:NAME`` from a presets file, a JSON
    object of presets each ``{"parent": NAME, "why": TEXT, OPTION: VALUE...}``, its parent a variant or another
    preset of the same file."""
    if name in VARIANTS:
        return dict(VARIANTS[name])
    reference = preset_reference(name)
    if reference is None:
        raise ConfigError(f"unknown variant {name!r}; known: {', '.join(VARIANTS)}, or a preset FILE.json:NAME")
    path, preset = reference
    presets = _presets(path)
    chain: list[str] = []
    while preset not in VARIANTS:
        if preset in chain:
            raise ConfigError(f"{path}: presets {' -> '.join(chain + [preset])} make a circle")
        entry = presets.get(preset) if isinstance(presets, dict) else None
        if not isinstance(entry, dict) or "parent" not in entry:
            raise ConfigError(f"{path}: no preset {preset!r} with a 'parent'; presets: {', '.join(presets)}")
        chain.append(preset)
        preset = entry["parent"]
    settings = dict(VARIANTS[preset])
    for step in reversed(chain):
        settings.update({key: value for key, value in presets[step].items() if key not in ("parent", "why")})
    return settings


def label(name: str) -> str:
    """What a variant is called in tables and file names: its name, or a preset's own name."""
    reference = preset_reference(name)
    return reference[1] if reference else name
