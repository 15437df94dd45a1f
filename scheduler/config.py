"""The scheduler's configuration: one object, from CLI flags, a JSON file or Batsim's sched-config."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

from scheduler.core.policies import get_policy
from scheduler.errors import ConfigError
from scheduler.knowledge import ESTIMATES


CLASSIFIERS = ("none", "rf", "oracle")
SAFEGUARDS = ("none", "kill")
FEATURE_MODES = ("live", "paper")
DIVIDERS = ("median", "last-week-median")

#: The paper's variants (Figure 9): classifier, safeguard and runtime estimates.
VARIANTS: dict[str, dict[str, str]] = {
    "base": {"classifier": "none", "safeguard": "none", "estimates": "requested"},
    "classification": {"classifier": "rf", "safeguard": "none", "estimates": "requested"},
    "classification-idempotent": {"classifier": "rf", "safeguard": "kill", "estimates": "requested"},
    "class-clairvoyant": {"classifier": "oracle", "safeguard": "none", "estimates": "requested"},
    "runtimes-clairvoyant": {"classifier": "none", "safeguard": "none", "estimates": "clairvoyant"},
}


def _choice(name: str, value: str, known: tuple[str, ...]) -> None:
    if value not in known:
        raise ConfigError(f"{name}: unknown value {value!r}; known: {', '.join(known)}")


@dataclass
class SchedulerConfig:
    """Every option that changes scheduling decisions.

    - ``policy``: queue order (fcfs, spf, saf, sqf, lpf, wfp; batsched's names accepted).
    - ``backfill_order``: the order in which EASY tries to backfill; None = the queue order.
    - ``estimates``: runtime knowledge for ordering and reservations (requested, clairvoyant).
    - ``starvation_threshold``: seconds after which a waiting job jumps to the head of the
      queue; None (the default) disables it, as in the paper and in batsched.
    - ``classifier``: labels each submitted job small or large: ``none`` (every job is
      large), ``rf`` (the paper's online Random Forest) or ``oracle`` (the true class).
      Small jobs go to Q_small, ahead of Q.
    - ``safeguard``: ``kill`` kills a small-classified job that outlives the divider and
      resubmits it as large (``<id>#1``); ``none`` lets it run.
    - ``divider``: the small/large boundary: ``median`` (of the training data),
      ``last-week-median``, or a number of seconds.
    - ``classifier_threshold``: a job is small when the forest's probability of "small"
      exceeds it (default 0.5, scikit-learn's ``predict``); higher values trade recall for
      fewer false-small jobs, hence fewer safeguard kills.
    - ``features``: ``live`` (history features from every job completed before the
      submission) or ``paper`` (only from previous weeks).
    - ``model``: a saved classifier to start from (``serve --model FILE``).
    - ``timezone``: the trace's time zone (IANA name) for the classifier's temporal
      features; ``simulate`` takes it from the SWF header when there is one.
    - ``seed``: seeds every random choice, so runs are reproducible.
    - ``predictor``: runtime predictor (``scheduler.knowledge.predictors``): ``requested`` (the
      default: the ``estimates`` option decides, today's behaviour), ``clairvoyant``,
      ``constant`` (``constant:C``), ``ave2``, ``ruh``, ``sbh``, ``sbh-noest``, ``eloss``.
    - ``correction``: what a running job that outlives its prediction is predicted next
      (``scheduler.knowledge.corrections``): ``requested`` (p̃), ``incremental``, ``doubling``.
    - ``predictor_options``: keyword options of the predictor (e.g. ``{"search": "bfs"}`` for sbh).

    EASY++ (Tsafrir et al.) is ``predictor="ave2", correction="requested", backfill_order="spf"``
    (:meth:`easy_plus_plus`).
    """

    policy: str = "fcfs"
    backfill_order: str | None = None
    estimates: str = "requested"
    starvation_threshold: float | None = None
    classifier: str = "none"
    safeguard: str = "none"
    divider: str | float = "median"
    classifier_threshold: float = 0.5
    features: str = "live"
    model: str | None = None
    timezone: str | float | None = None
    seed: int = 0
    predictor: str = "requested"
    correction: str = "requested"
    predictor_options: dict | None = None

    def __post_init__(self) -> None:
        self.validate()

    def validate(self) -> None:
        self.policy = get_policy(self.policy).name
        if self.backfill_order is not None:
            self.backfill_order = get_policy(self.backfill_order).name
        if self.estimates not in ESTIMATES:
            raise ConfigError(f"estimates: unknown value {self.estimates!r}; known: {', '.join(ESTIMATES)}")
        if self.starvation_threshold is not None:
            if not isinstance(self.starvation_threshold, (int, float)) or self.starvation_threshold <= 0:
                raise ConfigError(
                    f"starvation_threshold: expected a positive number of seconds, got {self.starvation_threshold!r}"
                )
            self.starvation_threshold = float(self.starvation_threshold)
        _choice("classifier", self.classifier, CLASSIFIERS)
        _choice("safeguard", self.safeguard, SAFEGUARDS)
        _choice("features", self.features, FEATURE_MODES)
        if isinstance(self.divider, str) and self.divider not in DIVIDERS:
            try:
                self.divider = float(self.divider)
            except ValueError:
                raise ConfigError(f"divider: expected {' or '.join(DIVIDERS)} or seconds, got {self.divider!r}") from None
        if not isinstance(self.divider, str) and not (isinstance(self.divider, (int, float)) and self.divider > 0):
            raise ConfigError(f"divider: expected a positive number of seconds, got {self.divider!r}")
        if isinstance(self.classifier_threshold, bool) or not isinstance(self.classifier_threshold, (int, float)) \
                or not 0 <= self.classifier_threshold < 1:
            raise ConfigError(f"classifier_threshold: expected a probability in [0, 1), got {self.classifier_threshold!r}")
        self.classifier_threshold = float(self.classifier_threshold)
        if self.safeguard == "kill" and self.classifier == "none":
            raise ConfigError("safeguard 'kill' needs a classifier (rf or oracle): without one no job is small")
        if not isinstance(self.seed, int):
            raise ConfigError(f"seed: expected an integer, got {self.seed!r}")
        from scheduler.knowledge.corrections import CORRECTIONS
        from scheduler.knowledge.predictors import check_predictor_name

        self.predictor = check_predictor_name(str(self.predictor))
        self.correction = str(self.correction).lower()
        _choice("correction", self.correction, tuple(CORRECTIONS))
        if self.predictor_options is not None and not isinstance(self.predictor_options, dict):
            raise ConfigError(f"predictor_options: expected a JSON object, got {self.predictor_options!r}")
        if self.predictor != "requested" and self.estimates != "requested":
            raise ConfigError(f"predictor {self.predictor!r} replaces the estimates: leave estimates 'requested' "
                              "(or use predictor 'clairvoyant')")

    @property
    def uses_predictor(self) -> bool:
        """Whether runtime knowledge comes from a predictor with a correction rule."""
        return self.predictor != "requested"

    @classmethod
    def easy_plus_plus(cls, **options: Any) -> "SchedulerConfig":
        """EASY++ (Tsafrir et al. 2007): ave2 predictions, an expired prediction corrected to p̃, SJBF
        backfilling."""
        return cls.from_dict({"predictor": "ave2", "correction": "requested", "backfill_order": "spf", **options},
                             "EASY++")

    @classmethod
    def variant(cls, name: str, **options: Any) -> "SchedulerConfig":
        """The config of one of the paper's variants (Figure 9), with ``options`` on top."""
        try:
            settings = VARIANTS[name]
        except KeyError:
            raise ConfigError(f"unknown variant {name!r}; known: {', '.join(VARIANTS)}") from None
        return cls.from_dict({**settings, **options}, f"variant {name}")

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, options: dict[str, Any], source: str = "options") -> "SchedulerConfig":
        """Build a config from a mapping; unknown keys are errors that name the source."""
        if not isinstance(options, dict):
            raise ConfigError(f"{source}: expected a JSON object, got {type(options).__name__}")
        known = {f.name for f in fields(cls)}
        normalized = {key.replace("-", "_"): value for key, value in options.items()}
        unknown = sorted(set(normalized) - known)
        if unknown:
            raise ConfigError(f"{source}: unknown option(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}")
        try:
            return cls(**normalized)
        except ConfigError as exc:
            raise ConfigError(f"{source}: {exc}") from None

    @staticmethod
    def parse_options(text: str, source: str = "JSON options") -> dict[str, Any]:
        """The options of a JSON object given as text."""
        try:
            options = json.loads(text) if text.strip() else {}
        except json.JSONDecodeError as exc:
            raise ConfigError(f"{source}: invalid JSON ({exc})") from None
        if not isinstance(options, dict):
            raise ConfigError(f"{source}: expected a JSON object, got {type(options).__name__}")
        return options

    @staticmethod
    def read_options(path: str | Path) -> dict[str, Any]:
        """The options of a JSON config file."""
        path = Path(path)
        try:
            text = path.read_text()
        except OSError as exc:
            raise ConfigError(f"{path}: cannot read config file ({exc.strerror})") from None
        return SchedulerConfig.parse_options(text, str(path))

    @classmethod
    def from_file(cls, path: str | Path) -> "SchedulerConfig":
        return cls.from_dict(cls.read_options(path), str(path))
