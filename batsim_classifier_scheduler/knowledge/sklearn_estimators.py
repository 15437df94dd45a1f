"""The classifier's scikit-learn estimators ``--estimator`` names, registered with the one registry of names
(``batsim_classifier_scheduler.registry``; ``forest`` by its module path: scikit-learn is imported only when it is used), and what
an estimator plug-in must be: an unfitted scikit-learn classifier, or a class or function making one. One that
declares ``Options`` is called with them; any other takes its scikit-learn parameters as options."""

from __future__ import annotations

import inspect
from typing import Any

from batsim_classifier_scheduler.errors import ConfigError
from batsim_classifier_scheduler.registry import Made, Rules, call, define, describe, error_text, register


def is_estimator(target: Any) -> bool:
    """Whether ``target`` is an estimator (not a class): it fits and has parameters."""
    return not inspect.isclass(target) and hasattr(target, "fit") and hasattr(target, "get_params")


def _check(spec: str, target: Any) -> None:
    if not (callable(target) or is_estimator(target)):
        raise ConfigError(f"estimator {spec!r}: not a classifier estimator (an unfitted scikit-learn classifier, or a "
                          f"class or function making one); got {describe(target)}")


def unconfigured(spec: str, target: Any) -> Any:
    """The estimator an Options-less estimator gives: itself (a copy), or what calling it makes."""
    if is_estimator(target):
        from sklearn.base import clone

        return clone(target)
    try:
        estimator = target()
    except Exception as exc:
        raise ConfigError(f"estimator {spec!r}: calling it failed ({error_text(exc)})") from None
    if not is_estimator(estimator):
        raise ConfigError(f"estimator {spec!r}: it made {describe(estimator)}, not a scikit-learn estimator")
    return estimator


def _parameters(spec: str, target: Any, options: dict) -> dict:
    """The scikit-learn parameters of the estimator ``target`` makes, checked by scikit-learn."""
    from batsim_classifier_scheduler.knowledge.learner import validate_estimator

    estimator = unconfigured(spec, target)
    known = estimator.get_params(deep=False)
    unknown = sorted(set(options) - set(known))
    if unknown:
        raise ConfigError(f"estimator_options: unknown parameter(s) {', '.join(unknown)} of estimator {spec!r} "
                          f"({type(estimator).__name__}); known: {', '.join(sorted(known))}")
    estimator.set_params(**options)
    try:
        validate_estimator(estimator)
    except ConfigError as exc:
        raise ConfigError(f"estimator_options: {str(exc).removeprefix('classifier estimator: ')} "
                          f"(estimator {spec!r})") from None
    return dict(options)


def _describe_parameters(spec: str, target: Any) -> list[str]:
    parameters = unconfigured(spec, target).get_params(deep=False)
    return [f"{name} (scikit-learn parameter, default {value!r})" for name, value in sorted(parameters.items())]


def _make(made: Made) -> Any:
    """A new, unfitted estimator, with its options."""
    if made.instance is not None:
        estimator = call("estimator", made.name, made.target, made.instance)
    else:
        estimator = unconfigured(made.name, made.target)
        if made.options:
            estimator.set_params(**made.options)
    if not is_estimator(estimator):
        raise ConfigError(f"estimator {made.name!r}: it made {describe(estimator)}, not a scikit-learn estimator")
    return estimator


define("estimator", Rules(check=_check, make=_make, loose=_parameters, describe_loose=_describe_parameters))
register("estimator", "forest", "batsim_classifier_scheduler.knowledge.learner:default_forest")
