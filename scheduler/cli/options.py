"""Scheduling options shared by ``simulate``, ``serve`` and ``batsim-peer``'s callers."""

from __future__ import annotations

import argparse

from scheduler.config import CLASSIFIERS, FEATURE_MODES, SAFEGUARDS, VARIANTS, SchedulerConfig
from scheduler.core.policies import BATSCHED_ALIASES, POLICIES
from scheduler.knowledge import ESTIMATES


def add_scheduling_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("scheduling")
    policies = ", ".join(list(POLICIES) + [a for a in BATSCHED_ALIASES if a not in POLICIES])
    group.add_argument("--policy", "-o", "--queue_order", dest="policy", metavar="NAME",
                       help=f"queue order: {policies} (default fcfs)")
    group.add_argument("--backfill-order", metavar="NAME", help="backfilling order (default: the queue order)")
    group.add_argument("--estimates", choices=sorted(ESTIMATES), help="runtime knowledge (default requested)")
    group.add_argument("--starvation-threshold", type=float, metavar="S",
                       help="seconds of waiting after which a job moves to the head of the queue (default: off)")
    group.add_argument("--variant", choices=list(VARIANTS),
                       help="one of the paper's variants (sets classifier, safeguard and estimates)")
    group.add_argument("--classifier", choices=CLASSIFIERS, help="job size classifier (default none)")
    group.add_argument("--safeguard", choices=SAFEGUARDS, help="kill small jobs that outlive the divider (default none)")
    group.add_argument("--divider", metavar="D", help="small/large boundary: median, last-week-median or seconds")
    group.add_argument("--classifier-threshold", type=float, metavar="P",
                       help="a job is small when the forest's P(small) exceeds P (default 0.5)")
    group.add_argument("--features", choices=FEATURE_MODES, help="classifier history features (default live)")
    group.add_argument("--model", metavar="FILE", help="start from a saved classifier")
    group.add_argument("--timezone", metavar="TZ", help="trace time zone for temporal features (IANA name)")
    group.add_argument("--seed", type=int, help="random seed (default 0)")
    group.add_argument("--predictor", metavar="NAME",
                       help="runtime predictor: requested, clairvoyant, constant[:C], ave2, ruh, sbh, sbh-noest, eloss "
                            "(default requested: --estimates decides)")
    group.add_argument("--correction", choices=["requested", "incremental", "doubling"],
                       help="correction when a job outlives its prediction (default requested)")
    group.add_argument("--predictor-options", metavar="JSON",
                       help='the predictor\'s options as a JSON object, e.g. \'{"search": "bfs", "depth": 1}\' for sbh')
    group.add_argument("--config", "--variant_options_filepath", dest="config", metavar="FILE",
                       help="JSON file of scheduling options (batsched's --variant_options_filepath); flags override it")
    group.add_argument("--variant_options", metavar="JSON",
                       help="scheduling options as a JSON object (batsched's name); flags override it")


def option_overrides(args: argparse.Namespace) -> dict:
    """The scheduling options given as flags (``--variant`` first, explicit flags on top)."""
    overrides = dict(VARIANTS[args.variant]) if args.variant else {}
    flags = {
        "policy": args.policy,
        "backfill_order": args.backfill_order,
        "estimates": args.estimates,
        "starvation_threshold": args.starvation_threshold,
        "classifier": args.classifier,
        "safeguard": args.safeguard,
        "divider": args.divider,
        "classifier_threshold": getattr(args, "classifier_threshold", None),
        "features": args.features,
        "model": args.model,
        "timezone": args.timezone,
        "seed": args.seed,
        "predictor": getattr(args, "predictor", None),
        "correction": getattr(args, "correction", None),
        "predictor_options": _json_object(getattr(args, "predictor_options", None), "--predictor-options"),
    }
    overrides.update({k: v for k, v in flags.items() if v is not None})
    return overrides


def _json_object(text: str | None, what: str) -> dict | None:
    return None if text is None else SchedulerConfig.parse_options(text, what)


def file_options(args: argparse.Namespace) -> dict:
    """The scheduling options of ``--config`` FILE and ``--variant_options`` JSON (the JSON wins)."""
    options = SchedulerConfig.read_options(args.config) if args.config else {}
    if args.variant_options:
        options.update(SchedulerConfig.parse_options(args.variant_options, "--variant_options"))
    return options


def config_from_args(args: argparse.Namespace) -> SchedulerConfig:
    """The config of the option files (if any) with the command-line flags applied on top."""
    options = file_options(args)
    options.update({k: v for k, v in option_overrides(args).items() if v is not None})
    return SchedulerConfig.from_dict(options, "scheduling options")
