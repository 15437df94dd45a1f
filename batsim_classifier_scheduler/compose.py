"""The composition root: a :class:`SchedulerConfig` made into a decision core.

Every front end (``simulate``, ``serve``, the pybatsim adapter, sweeps) builds its core with
:func:`build_core`; the core builds nothing itself. This is the one place that reads the files a
config names (the θ file of a ``score:FILE`` policy, a classifier saved with ``--save-model``) and
that turns the config's names into objects: the queue and backfill policies, the scheduling
algorithm, the runtime knowledge, the predictions and the classifier's estimator, built-in or plug-in,
each made by the one registry of names (``batsim_classifier_scheduler.registry``) with its options. :func:`input_files`
lists those files and the plug-ins' own (a sweep's resume hash covers their content).
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any, Callable

from batsim_classifier_scheduler import registry
from batsim_classifier_scheduler.config import SchedulerConfig
from batsim_classifier_scheduler.core.policies import Policy
from batsim_classifier_scheduler.core.decision import DecisionCore
from batsim_classifier_scheduler.errors import ConfigError
from batsim_classifier_scheduler.knowledge.predictors import Predictions
from batsim_classifier_scheduler.core.decision.parts import (Classifier, KillRules, LimitRules, Parts, PromotionRules,
                                           QueueRules, TrialRules)

__all__ = ["Classifier", "Parts", "build_core", "build_parts", "classifier_starter", "input_files", "load_policy",
           "warm_up"]


def build_core(config: SchedulerConfig | None = None, classifier: Classifier | None = None) -> DecisionCore:
    """A decision core for one simulation, made of the parts ``config`` asks for (default: EASY-FCFS); a
    ``classifier`` given here replaces the config's."""
    config = config or SchedulerConfig()
    parts = build_parts(config)
    if classifier is not None:
        parts = replace(parts, classifier=lambda start_time: classifier)
    return DecisionCore(parts)


def build_parts(config: SchedulerConfig) -> Parts:
    """The parts ``config`` asks for (reading its θ and model files), each name made by the registry. Runtime
    knowledge: the predictor with its correction rule, unless it is ``requested`` (then: the estimates)."""
    classifier = classifier_starter(config)
    predictions = Predictions(registry.make("predictor", config.predictor, config.predictor_options),
                              registry.make("correction", config.correction)) if config.uses_predictor else None
    return Parts(
        policy=registry.make("policy", config.policy, config.policy_options, read=read_theta),
        backfill_order=registry.make("policy", config.backfill_order, read=read_theta) if config.backfill_order
        else None,
        algorithm=registry.make("algorithm", config.algorithm, config.algorithm_options),
        knowledge=predictions or registry.make("estimates", config.estimates),
        predictions=predictions,
        classifier=classifier,
        safeguard=config.safeguard == "kill",
        queue=QueueRules(config.starvation_threshold, config.starvation_scope, config.order_by),
        trials=TrialRules(config.probe_length, config.probe_limit, config.divider_estimates),
        kills=KillRules(config.kill_on, config.kill_for, config.head_slack),
        promotion=PromotionRules(config.promote_after, config.promote_scope, config.promote_overdue),
        limits=LimitRules(config.kill_limit, config.waste_limit, config.limit_order, config.readmit),
        labels={"classifier": {"method": config.classifier, "features": config.features, "divider": config.divider},
                "predictions": {"predictor": config.predictor, "correction": config.correction}},
    )


def load_policy(name: str, options: dict | None = None) -> Policy:
    """The policy called ``name``, its θ file read for a ``score:FILE`` policy; a plug-in made with ``options``
    (canonical: see :class:`SchedulerConfig`)."""
    return registry.make("policy", name, options, read=read_theta)


def read_theta(path: str) -> Any:
    """The parsed JSON of a θ file."""
    try:
        with open(path) as stream:
            return json.load(stream)
    except (OSError, json.JSONDecodeError) as exc:
        raise ConfigError(f"score policy {path!r}: cannot read θ ({exc})") from None


def classifier_starter(config: SchedulerConfig) -> Callable[[float], Classifier] | None:
    """What starts the config's classifier at a simulation's start time: a new one, or the one saved in
    ``config.model`` (read now), with the config's probability threshold. None without a classifier."""
    if config.classifier == "none":
        return None
    from batsim_classifier_scheduler.knowledge.classifier import JobClassifier

    if config.model:
        saved = JobClassifier.load(config.model)
        saved.set_thresholds(config.classifier_threshold, config.probe_threshold)
        saved.partial_oracle = config.partial_oracle  # a saved classifier is a forest
        return saved.restart
    return lambda start_time: JobClassifier(
        method=config.classifier, divider=config.divider, features=config.features, seed=config.seed,
        train_window=config.train_window,
        start_time=start_time, timezone=config.timezone, threshold=config.classifier_threshold,
        probe_threshold=config.probe_threshold, partial_oracle=config.partial_oracle,
        estimator=registry.make("estimator", config.estimator, config.estimator_options)
        if config.classifier == "rf" else None)


def input_files(config: SchedulerConfig) -> list[str]:
    """The files a run with ``config`` reads besides its workload: θ files, a saved classifier, plug-in files."""
    files = [path for path in (registry.source_file("policy", spec) for spec in (config.policy, config.backfill_order)
                               if spec and registry.is_builtin("policy", spec)) if path]
    if config.classifier != "none" and config.model:
        files.append(config.model)
    named = [("algorithm", config.algorithm), ("policy", config.policy), ("policy", config.backfill_order)]
    if config.classifier == "rf":
        named.append(("estimator", config.estimator))
    if config.predictor != "requested":
        named += [("predictor", config.predictor), ("correction", config.correction)]
    else:
        named.append(("estimates", config.estimates))
    files += [path for kind, spec in named
              if spec and not registry.is_builtin(kind, spec) and (path := registry.source_file(kind, spec))
              and path not in files]
    return files


def warm_up(config: SchedulerConfig) -> None:
    """Pay now the one-time start-up that the first run of ``config``'s kind in a process would otherwise
    charge to its own time: importing the classifier (and scikit-learn) and the estimator's first fit, or
    the predictions' accuracy report. A front end that times each run calls it before the clock starts."""
    if config.classifier != "none":
        import batsim_classifier_scheduler.knowledge.classifier  # noqa: F401
    if config.classifier == "rf":
        from batsim_classifier_scheduler.knowledge.learner import validate_estimator

        validate_estimator(registry.make("estimator", config.estimator, config.estimator_options))  # a fit on a few rows
    if config.predictor != "requested":
        import batsim_classifier_scheduler.knowledge.accuracy  # noqa: F401
