"""The scheduler's configuration: one object, from CLI flags, JSON files or Batsim's sched-config.

Each option is declared once, as a field of :class:`SchedulerConfig` that carries an
:class:`~batsim_classifier_scheduler.config.option.Option`: its help, its command-line flags and the check that turns a given value
into the canonical one (or says what is wrong with it). ``batsim_classifier_scheduler.cli.options`` makes the flags from the
fields; every source of options (flags, ``--config`` files, ``--variant_options``, Batsim's ``sched-config``,
sweep configs) is checked by the same checks (:meth:`SchedulerConfig.check_options` names the source); a
test holds the README's option table to the fields. Names of plug-in kinds (algorithm, policy, estimator,
predictor, correction, estimates) are checked by the one registry of names (``batsim_classifier_scheduler.registry``);
which settings go together is ``batsim_classifier_scheduler.config.variants``'.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any, Mapping

from batsim_classifier_scheduler import registry
from batsim_classifier_scheduler.core.overdue import OVERDUE_SCOPES
from batsim_classifier_scheduler.core.queue import STARVATION_SCOPES
from batsim_classifier_scheduler.errors import ConfigError
from batsim_classifier_scheduler.knowledge.choices import CLASSIFIER_METHODS, FEATURE_MODES, PARTIAL_ORACLES
from batsim_classifier_scheduler.config.option import (Option, checked, choice, divider_value, integer_text, json_object, json_text,
                              non_empty_text, non_negative, number_text, option, optional, options_of,
                              positive_integer, positive_seconds, probability_below_one, probability_or_one, registered,
                              seed_value, timezone_value)
from batsim_classifier_scheduler.config.variants import (CLASSIFIER_OPTIONS, DIVIDER_ESTIMATES, KILL_FOR, KILL_OPTIONS, KILL_ON, LIMIT_ORDERS,
                                ORDER_BY, PLANNED_TRIAL_OPTIONS, PROBING_OPTIONS, PROMOTE_SCOPES, READMITS, SAFEGUARDS,
                                VARIANTS, resolve)

__all__ = ["Option", "SchedulerConfig", "VARIANTS"]


# --- the configuration ---------------------------------------------------------------------


@dataclass
class SchedulerConfig:
    """Every option that changes scheduling decisions (each field's :class:`Option` says what it means).

    EASY++ (Tsafrir et al.) is ``predictor="ave2", correction="requested", backfill_order="spf"``
    (:meth:`easy_plus_plus`).
    """

    algorithm: str = option(
        "easy",
        "easy, easy_bf_fast, conservative_bf, fcfs, filler, or a plug-in",
        registered("algorithm"), flags=("--algorithm", "-v"), metavar="NAME",
        details="easy is EASY backfilling (batsched's easy_bf); easy_bf_fast, EASY whose priority job keeps its "
                "first expected start (a job backfills only if it ends by then); conservative_bf, a reservation for "
                "every waiting job; fcfs, strict queue order without backfilling (batsched's fcfs and fcfs_fast); "
                "filler, every job that fits now starts, in queue order. Plug-ins: docs/plugins.md")
    algorithm_options: dict | None = option(
        None, "the algorithm plug-in's options (JSON)",
        optional(json_object), metavar="JSON", parse=json_text, group="plugins",
        details="--algorithm X --help lists them")
    policy: str = option(
        "fcfs", "queue order (or a plug-in: FILE.py:NAME, MODULE:NAME or an entry point's name)", registered("policy"),
        flags=("--policy", "-o", "--queue_order"), metavar="NAME", choices=lambda: registry.names("policy"))
    policy_options: dict | None = option(
        None, "the queue order plug-in's options (JSON)",
        optional(json_object), metavar="JSON", parse=json_text, group="plugins",
        details="--policy X --help lists them")
    backfill_order: str | None = option(
        None, "EASY's order of backfill candidates, a --policy name (default: the queue's)",
        optional(registered("policy")), metavar="NAME",
        details="for easy and easy_bf_fast; a plug-in takes its default options")
    estimates: str = option(
        "requested", "runtime knowledge: requested (p̃ = walltime) or clairvoyant (actual runtime)",
        registered("estimates"), metavar="NAME")
    starvation_threshold: float | None = option(
        None, "seconds of waiting after which a job moves to the head of the queue (default: off)",
        optional(positive_seconds), metavar="S", parse=number_text,
        details="oldest first")
    starvation_scope: str = option(
        "queue",
        "where a starving job moves: queue (its queue's head) or all",
        choice(lambda: STARVATION_SCOPES), metavar="NAME",
        details="with queue, Q_small stays ahead of Q")
    classifier: str = option(
        "none",
        "none, rf (the paper's online Random Forest) or oracle (true classes)",
        choice(lambda: CLASSIFIER_METHODS), metavar="NAME", group="classes",
        details="small jobs go to Q_small, ahead of Q")
    safeguard: str = option(
        "none", "kill: a watched job past its trial is killed, and resubmitted as large",
        choice(lambda: SAFEGUARDS), metavar="NAME", group="classes",
        details="a watched job is one classified small (its trial: the divider) or uncertain")
    divider: str | float = option(
        "median",
        "small/large boundary: median, last-week-median, or seconds",
        divider_value, metavar="D", group="classes")
    classifier_threshold: float = option(
        0.5, "a job is small when the forest's P(small) exceeds P",
        probability_below_one, metavar="P", parse=number_text, group="classes",
        details="higher means fewer false-small jobs and kills")
    probe_threshold: float | None = option(
        None, "a job not small is uncertain when its P(small) exceeds P (default: off)",
        optional(probability_below_one), metavar="P", parse=number_text, group="trials",
        details="it queues after the small jobs, ahead of Q, and the safeguard watches it")
    probe_length: float = option(
        1.0, "an uncertain job's trial, as a fraction of the divider",
        probability_or_one, metavar="F", parse=number_text,
        group="trials",
        details="the safeguard acts after F x divider; small jobs keep the whole divider")
    probe_limit: float | None = option(
        None, "an uncertain job's trial lasts at most S seconds",
        optional(positive_seconds), metavar="S", parse=number_text, group="trials",
        details="with --probe-length, the shorter")
    kill_on: str = option(
        "deadline", "when the safeguard acts on a watched job past its trial: deadline, demand, blocking or patient",
        choice(lambda: KILL_ON), metavar="NAME", group="trials",
        details="deadline: it is killed then (the paper); demand: it runs on until the first waiting job could start "
                "now with its processors; blocking: it is killed at the deadline only if running on to its request "
                "would delay the first waiting job's start, else it runs on, planned with its request; patient: as "
                "blocking, but a job in the way runs on until that waiting job could start now with its processors")
    kill_for: str = option(
        "requeued",
        "--kill-on blocking...: which first waiting job a trial is killed for",
        choice(lambda: KILL_FOR), metavar="NAME", group="trials",
        details="requeued: one it would wait behind once killed; policy: one classified small, or before it in the "
                "policy's order (the job counts as uncertain); order: one classified small, or before it in the "
                "policy's order, whatever its queue")
    head_slack: float = option(
        0.0, "--kill-on blocking: a trial delaying a large head by at most F x its request runs on",
        non_negative, metavar="F", parse=number_text, group="trials",
        details="unless killing it would let that job start now")
    promote_after: float = option(
        0.0, "a job of Q moves ahead of it once it has waited F x its request (0: never)",
        non_negative, metavar="F", parse=number_text, group="trials",
        details="counted from its submission (a retry after a kill: from the original's); it goes in the policy's "
                "order")
    promote_scope: str = option(
        "job", "--promote-after: what a promotion moves out of Q: job, ahead or head",
        choice(lambda: PROMOTE_SCOPES), metavar="NAME", group="trials",
        details="job: the job alone; ahead: the job and every job of Q before it in the policy's order, so that no "
                "job of Q is overtaken by a promotion; head: the job and the first job of Q, one for one "
                "(classification-ordered). Measured: head cuts LANL-CM5 FCFS's longest wait from 8.2-9.1x to "
                "1.24-1.63x base's; ahead keeps 0.86-0.88 of class-clairvoyant's reduction on HPC2N and SDSC-SP2 "
                "FCFS (docs/notebook/2026-12-05-results.md)")
    promote_overdue: str = option(
        "none",
        "which jobs of Q go ahead of all once their wait is the longest first wait",
        choice(lambda: OVERDUE_SCOPES),
        metavar="SCOPE", group="trials",
        details="oldest first, no head slack. killed: the safeguard's retries, from the original's submission (a "
                "killed job waits at most that plus EASY's bound as the first waiting job); killed-one: the same, "
                "one at a time (the oldest due retry moves once the one moved before it has started); "
                "killed-planned: the same as killed, or as soon as the start EASY plans for it now would make it wait "
                "longer; queue: every job of Q; queue-user: every job of Q, one at a time per user, the next once the "
                "previous has ended (a burst of one user's jobs takes one lane, not the machine), the longest wait "
                "counting the first attempts started unpromoted (classification-guaranteed); queue-user-ahead: "
                "queue-user, and a job due takes along the older waiting jobs ahead of it, whatever their queue (a "
                "move overtakes no older job; CEA-Curie's longest wait 1.26x base's, 6 pairs of 10 meeting every bar "
                "on the typical runs against guaranteed's 8: docs/notebook/2026-12-06-guaranteed.md)")
    kill_limit: float | None = option(
        None, "the site's limit on the jobs killed, a share: a trial is granted only within it (default: none)",
        optional(probability_or_one), metavar="F", parse=number_text, group="trials",
        details="a watched job (classified small or uncertain) gets a trial only if the jobs killed plus the open "
                "trials stay at most F x the jobs submitted, were it killed too; a job given none is large (Q, never "
                "killed). No kill is refused: a run kills at most F of its jobs, at every moment, on any workload "
                "(classification-guaranteed: 0.10); it needs --kill-on blocking, demand or patient")
    waste_limit: float | None = option(
        None, "the site's limit on the work wasted, a share of the useful work done (default: none)",
        optional(probability_or_one), metavar="F", parse=number_text, group="trials",
        details="a watched job gets a trial only if the work the killed attempts wasted plus what every open trial "
                "may waste (processors x its length; past its trial, x the time run, else it is released: never "
                "killed) stay at most F x the work of the jobs completed so far. No kill is refused: a run wastes at "
                "most F of its useful work, at every moment, on any workload (classification-guaranteed: 0.01)")
    limit_order: str = option(
        "arrival", "whom the limits' scarce trials go to: arrival, p-small or value",
        choice(lambda: LIMIT_ORDERS), metavar="NAME", group="trials",
        details="arrival: first come, first served; p-small: a job refused a trial takes the place of the trial not "
                "started yet with the lowest probability of being small, by the forest, if lower than its own and the "
                "limits hold with the swap (that job waits in Q as large); value: the same, by the probability over "
                "the processors x trial length a failed trial would waste")
    readmit: str = option(
        "none", "whether a job refused a trial gets one later while it waits: none or waiting",
        choice(lambda: READMITS), metavar="NAME", group="trials",
        details="waiting: while it still waits in Q, it is granted one as soon as the limits allow it, in "
                "--limit-order's order, or oldest first")
    divider_estimates: str = option(
        "none",
        "which watched jobs the algorithm plans with their trial: none, running or all",
        choice(lambda: DIVIDER_ESTIMATES),
        metavar="NAME", group="classes",
        details="running: a watched job, once started, is planned to end within its trial (the safeguard acts then); "
                "all: waiting watched jobs are planned with min(p̃, trial) too, so they backfill as short jobs")
    order_by: str = option(
        "planned",
        "--divider-estimates all: a watched job's order: planned or estimate",
        choice(lambda: ORDER_BY),
        metavar="NAME", group="classes",
        details="planned: the estimate it is planned with, min(p̃, its trial) (under SPF every job asking more than "
                "its trial ties, broken by job id); estimate: p̃, as class-clairvoyant orders")
    partial_oracle: str = option(
        "none",
        "a measurement aid: the true class corrects some answers",
        choice(lambda: PARTIAL_ORACLES), metavar="NAME", group="classes",
        details="no-false-large or no-false-small: that kind of error; no-blind-week: the answers of the first, "
                "model-less week")
    features: str = option(
        "live",
        "history features: live, or paper (previous weeks only)",
        choice(lambda: FEATURE_MODES), metavar="NAME", group="classes")
    train_window: int | None = option(
        None, "the rf classifier trains on the jobs completed in the last WEEKS weeks only (default: all)",
        optional(positive_integer), metavar="WEEKS",
        parse=integer_text, group="classes",
        details="the paper trains on every previous week; the divider is unchanged")
    model: str | None = option(
        None, "start from a classifier saved by --save-model", optional(non_empty_text), metavar="FILE",
        group="classes")
    estimator: str = option(
        "forest",
        "the classifier rf trains: forest (ours), or a plug-in",
        registered("estimator"), metavar="NAME", group="plugins",
        details="a plug-in is FILE.py:NAME, MODULE:NAME or an entry point's name")
    estimator_options: dict | None = option(
        None, "the estimator's options (JSON)",
        optional(json_object), metavar="JSON", parse=json_text,
        group="plugins",
        details="its Options, else its scikit-learn parameters")
    timezone: str | float | None = option(
        None, "the trace's time zone for temporal features (default: the SWF header's)",
        optional(timezone_value), metavar="TZ", group="classes", details="an IANA name")
    seed: int = option(0, "seeds every random choice (runs are reproducible)", seed_value, metavar="N",
                       parse=integer_text, group="run")
    predictor: str = option(
        "requested", "runtime predictor for ordering and backfilling (requested: --estimates decides)",
        registered("predictor"),
        metavar="NAME", choices=lambda: registry.names("predictor"), group="predictors")
    correction: str = option(
        "requested",
        "what a job that outlives its prediction is predicted next",
        registered("correction"), metavar="NAME", group="predictors",
        details="requested (p̃), incremental (Tsafrir), doubling")
    predictor_options: dict | None = option(
        None, "the predictor's options (JSON)",
        optional(json_object), metavar="JSON", parse=json_text, group="predictors",
        details="e.g. '{\"search\": \"bfs\", \"depth\": 1}' for sbh")

    def __post_init__(self) -> None:
        self.validate()

    def validate(self) -> None:
        """Check every option (making its value canonical), then the options together."""
        for name, spec in options_of(type(self)).items():
            setattr(self, name, checked(spec, getattr(self, name), name))
        if self.safeguard == "kill" and self.classifier == "none":
            raise ConfigError("safeguard 'kill' needs a classifier (rf or oracle): without one no job is small")
        if self.probe_threshold is not None:
            if self.classifier != "rf" or self.safeguard != "kill":
                raise ConfigError("probe_threshold: uncertain jobs run early under the safeguard: it needs classifier "
                                  "'rf' and safeguard 'kill'")
            if self.probe_threshold >= self.classifier_threshold:
                raise ConfigError(f"probe_threshold: must be below classifier_threshold ({self.classifier_threshold}), "
                                  f"got {self.probe_threshold}")
        changed = {f.name for f in fields(self) if getattr(self, f.name) != f.default}
        for name in PLANNED_TRIAL_OPTIONS:
            if name in changed and self.divider_estimates != "all":
                raise ConfigError(f"{name}: a waiting job is planned with its own estimate unless divider_estimates "
                                  "is 'all': set divider_estimates all too")
        for name in PROBING_OPTIONS:
            if name in changed and self.probe_threshold is None:
                raise ConfigError(f"{name}: it concerns uncertain jobs: set probe_threshold too")
        for name in KILL_OPTIONS:
            if name in changed and self.safeguard != "kill":
                raise ConfigError(f"{name}: only the kill safeguard kills jobs; it needs safeguard 'kill'")
        for name, reason in CLASSIFIER_OPTIONS.items():
            if name in changed and self.classifier == "none":
                raise ConfigError(f"{name}: {reason}: it needs a classifier")
        if self.train_window is not None and (self.classifier != "rf" or self.model is not None):
            raise ConfigError("train_window: it bounds what the rf classifier trains on: it needs classifier 'rf' "
                              "and no model (a saved classifier keeps its own training)")
        if self.model is not None and self.classifier != "rf":
            raise ConfigError("model: a saved classifier is the paper's Random Forest: it needs classifier 'rf' "
                              f"(got {self.classifier!r})")
        if self.partial_oracle != "none" and self.classifier != "rf":
            raise ConfigError("partial_oracle: it corrects the forest's answers: it needs classifier 'rf'")
        if self.divider_estimates != "none" and self.safeguard != "kill":
            raise ConfigError("divider_estimates: only the kill safeguard bounds a job by the divider; "
                              "it needs safeguard 'kill'")
        if self.predictor != "requested" and self.estimates != "requested":
            raise ConfigError(f"predictor {self.predictor!r} replaces the estimates: leave estimates 'requested' "
                              "(or use predictor 'clairvoyant')")
        if "promote_scope" in changed and not self.promote_after:
            raise ConfigError("promote_scope: it says which jobs a promotion moves: set promote_after too")
        for name in ("limit_order", "readmit"):
            if name in changed and self.kill_limit is None and self.waste_limit is None:
                raise ConfigError(f"{name}: it concerns the trials the limits grant: set kill_limit or waste_limit too")
        if (self.kill_limit is not None or self.waste_limit is not None) and self.kill_on == "deadline":
            raise ConfigError("kill_limit, waste_limit: a trial is covered up to each kill the decision core decides; "
                              "set kill_on blocking, demand or patient too")
        if self.starvation_scope != "queue" and self.starvation_threshold is None:
            raise ConfigError(f"starvation_scope {self.starvation_scope!r}: it places starving jobs; set "
                              "starvation_threshold too")
        if self.backfill_order is not None and not registry.target("algorithm", self.algorithm).backfills:
            raise ConfigError(f"backfill_order: algorithm {self.algorithm!r} takes its jobs in queue order only")
        self.algorithm_options = registry.options("algorithm", self.algorithm, self.algorithm_options)
        self.policy_options = registry.options("policy", self.policy, self.policy_options)
        if self.estimator != "forest" or self.estimator_options is not None:
            if self.classifier != "rf":
                raise ConfigError(f"estimator: it is what the rf classifier trains: it needs classifier 'rf' "
                                  f"(got {self.classifier!r})")
            if self.model is not None:
                raise ConfigError("estimator: a saved classifier (model) brings its own forest")
            self.estimator_options = registry.options("estimator", self.estimator, self.estimator_options)

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
        """The config of a variant (or a preset ``FILE.json:NAME``, :func:`batsim_classifier_scheduler.config.variants.resolve`), with
        ``options`` on top."""
        return cls.from_dict({**resolve(name), **options}, f"variant {name}")

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    # --- readers ---------------------------------------------------------------------------

    @classmethod
    def known_options(cls, options: Mapping[str, Any], source: str) -> dict[str, Any]:
        """``options`` by field name (given with ``-`` or ``_``); an unknown one is an error naming ``source``."""
        if not isinstance(options, Mapping):
            raise ConfigError(f"{source}: expected a JSON object, got {type(options).__name__}")
        known = options_of(cls)
        normalized = {str(key).replace("-", "_"): value for key, value in options.items()}
        unknown = sorted(set(normalized) - set(known))
        if unknown:
            hint = " (tau is not a scheduling option: simulate takes --tau, a sweep config its own 'tau')" \
                if "tau" in unknown else ""
            raise ConfigError(f"{source}: unknown option(s) {', '.join(unknown)}{hint}; "
                              f"known: {', '.join(sorted(known))}")
        return normalized

    @classmethod
    def check_options(cls, options: Mapping[str, Any], source: str | None,
                      labels: Mapping[str, str] | None = None) -> dict[str, Any]:
        """The canonical values of ``options``, each checked alone (before they are merged with other
        sources); errors name the ``source`` (if any) and the option (by its ``labels`` entry, else its name),
        and keep their type."""
        specs, labels, options = options_of(cls), labels or {}, cls.known_options(options, source or "options")
        try:
            return {name: checked(specs[name], value, labels.get(name, name)) for name, value in options.items()}
        except ConfigError as exc:
            raise type(exc)(f"{source}: {exc}" if source else str(exc)) from None

    @classmethod
    def from_dict(cls, options: Mapping[str, Any], source: str = "options") -> "SchedulerConfig":
        """Build a config from a mapping; errors (unknown keys too) name the source."""
        options = cls.known_options(options, source)
        try:
            return cls(**options)
        except ConfigError as exc:
            raise type(exc)(f"{source}: {exc}") from None

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
        """The options of a JSON config file, checked."""
        path = Path(path)
        try:
            text = path.read_text()
        except OSError as exc:
            raise ConfigError(f"{path}: cannot read config file ({exc.strerror})") from None
        return SchedulerConfig.check_options(SchedulerConfig.parse_options(text, str(path)), str(path))

    @classmethod
    def from_file(cls, path: str | Path) -> "SchedulerConfig":
        return cls.from_dict(cls.read_options(path), str(path))
