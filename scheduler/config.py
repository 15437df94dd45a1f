"""The scheduler's configuration: one object, from CLI flags, JSON files or Batsim's sched-config.

Each option is declared once, as a field of :class:`SchedulerConfig` that carries an :class:`Option`:
its help, its command-line flags and the check that turns a given value into the canonical one (or
says what is wrong with it). ``scheduler.cli.options`` makes the flags from the fields; every source
of options (flags, ``--config`` files, ``--variant_options``, Batsim's ``sched-config``, sweep configs)
is checked by the same checks (:meth:`SchedulerConfig.check_options` names the source); a test holds
the README's option table to the fields.
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping

from scheduler.core.names import split_argument
from scheduler.core.overdue import OVERDUE_SCOPES
from scheduler.core.policies import policy_names
from scheduler.core.queue import STARVATION_SCOPES
from scheduler.errors import ConfigError
from scheduler.knowledge.choices import CLASSIFIER_METHODS, DIVIDERS, FEATURE_MODES, PARTIAL_ORACLES
from scheduler.knowledge.corrections import CORRECTIONS
from scheduler.knowledge.estimates import ESTIMATES
from scheduler.plugins import check_options as plugin_options, resolve, target_of
from scheduler.values import is_number

SAFEGUARDS = ("none", "kill")
#: Which jobs the safeguard's bound (the divider) plans: none, running ones, or all watched ones.
DIVIDER_ESTIMATES = ("none", "running", "all")
#: What the queue's policy orders a waiting job by: the estimate it is planned with, or its own estimate.
ORDER_BY = ("planned", "estimate")

#: What a kill by the safeguard does to the killed job's waiting siblings (same user, same request).
SIBLINGS = ("keep", "demote")
#: When the kill safeguard kills a watched job past its deadline: then, or once its processors are needed.
KILL_ON = ("deadline", "demand", "blocking", "patient")
#: What a running look-alike (same user, processors and p̃) that has run for the divider says of a new job.
RUNNING_SIBLINGS = ("ignore", "large")
#: For which waiting job a job past its trial may be killed: one it would wait behind once requeued, or one
#: classified small or before it in the policy's order.
KILL_FOR = ("requeued", "policy", "order")
#: kill_on blocking: whether a job past its trial is spared while the first waiting job would still start within the
#: longest first-attempt wait so far.
SPARE_WITHIN = ("none", "longest-wait")
#: Where a job the safeguard killed waits again: in Q (the paper), or ahead of Q with the uncertain jobs.
RETRY_QUEUES = ("large", "ahead", "fresh")
#: Options that act only with probing (a probe_threshold), and only with the kill safeguard.
PROBING_OPTIONS = ("probe_length", "probe_limit", "probe_width", "probe_max_width", "trial_gate")
#: Which uncertain jobs are tried: all, or those whose P(small) is at least the share of the machine they ask.
TRIAL_GATES = ("none", "machine-share")
KILL_OPTIONS = ("siblings", "retry_queue", "kill_on", "kill_for", "head_slack", "kill_slack", "promote_overdue",
                "spare_within")
#: Options that act only when waiting watched jobs are planned with their trial (divider_estimates all).
PLANNED_TRIAL_OPTIONS = ("order_by",)
#: Options that act only with a classifier, and why.
CLASSIFIER_OPTIONS = {"running_siblings": "it overrides the classifier's answer",
                      "promote_after": "it moves jobs out of Q, the queue of the jobs classified large"}

#: The paper's variants (Figure 9): classifier, safeguard and runtime estimates; then ours.
VARIANTS: dict[str, dict[str, Any]] = {
    "base": {"classifier": "none", "safeguard": "none", "estimates": "requested"},
    "classification": {"classifier": "rf", "safeguard": "none", "estimates": "requested"},
    "classification-idempotent": {"classifier": "rf", "safeguard": "kill", "estimates": "requested"},
    "class-clairvoyant": {"classifier": "oracle", "safeguard": "none", "estimates": "requested"},
    "runtimes-clairvoyant": {"classifier": "none", "safeguard": "none", "estimates": "clairvoyant"},
    # beyond the paper (docs/results.md): jobs the forest cannot call large are probed under the safeguard
    "classification-probing": {"classifier": "rf", "safeguard": "kill", "estimates": "requested",
                               "probe_threshold": 0.02, "divider_estimates": "all"},
    # issue 22: probing whose failed trials cost at most half a divider and 300 s (docs/results.md)
    "classification-bounded": {"classifier": "rf", "safeguard": "kill", "estimates": "requested",
                               "probe_threshold": 0.02, "divider_estimates": "all", "probe_length": 0.5,
                               "probe_limit": 300},
    # issue 32: bounded's trials, but one past its end is killed only if it is in the way of the first waiting job,
    # and that job goes before it (classified small, or before it in the policy's order); else it runs on
    "classification-blocking": {"classifier": "rf", "safeguard": "kill", "estimates": "requested",
                                "probe_threshold": 0.02, "divider_estimates": "all", "probe_length": 0.5,
                                "probe_limit": 300, "kill_on": "blocking", "kill_for": "order"},
    # issue 32: blocking, but a job past its trial is spared a delay of up to 0.3 x the request of a first waiting job
    # not classified small that could not start now anyway; a job that waited seven times its request leaves Q; the
    # policy orders waiting jobs by their request, not by their trial; and a trial lasts a whole divider (300 s at most)
    "classification-tolerant": {"classifier": "rf", "safeguard": "kill", "estimates": "requested",
                                "probe_threshold": 0.02, "divider_estimates": "all", "probe_length": 1.0,
                                "probe_limit": 300, "kill_on": "blocking", "kill_for": "order", "head_slack": 0.3,
                                "promote_after": 7.0, "order_by": "estimate"},
    # issue 41: tolerant, but no killed job waits past the longest first-attempt wait so far by more than EASY's bound
    # for the first waiting job: one at a time, the oldest due retry moves ahead of every queue (docs/results.md,
    # "The promise where it was not tuned")
    "classification-guarded": {"classifier": "rf", "safeguard": "kill", "estimates": "requested",
                               "probe_threshold": 0.02, "divider_estimates": "all", "probe_length": 1.0,
                               "probe_limit": 300, "kill_on": "blocking", "kill_for": "order", "head_slack": 0.3,
                               "promote_after": 7.0, "order_by": "estimate", "promote_overdue": "killed-one"},
}


# --- how an option is declared -------------------------------------------------------------

#: The groups of options, in the order a reader meets them (``--help``, the README's option table): title and
#: description. Each option's :attr:`Option.group` is one of these keys.
OPTION_GROUPS: dict[str, tuple[str, str | None]] = {
    "run": ("the run and its outputs", None),
    "scheduling": ("scheduling", "the algorithm, the queue order, the runtime knowledge, starvation"),
    "classes": ("the paper's classes and safeguard", "the online classifier's small/large classes (Q_small "
                "ahead of Q) and the kill safeguard"),
    "trials": ("trials", "beyond the paper (classification-probing, -bounded, -blocking, -tolerant): uncertain "
               "jobs run early, on a trial the safeguard bounds"),
    "predictors": ("runtime predictors", "a predicted runtime, corrected when a job outlives it, instead of the "
                   "requested time"),
    "plugins": ("plug-ins", "your own algorithm, queue order or estimator: their options (docs/plugins.md)"),
    "experimental": ("experimental", "measured and dropped as worse; kept to reproduce the measurement "
                     "(docs/results.md, 'The gain without the harm: classification-bounded', 'Tried and dropped', and "
                     "'Know, don't kill: classification-tolerant')"),
}


@dataclass(frozen=True)
class Option:
    """What a :class:`SchedulerConfig` field is as an option.

    ``check`` turns a given value (from JSON, or from a flag's text through ``parse``) into the
    canonical one, or raises ``ValueError``/``ConfigError`` saying what is wrong. ``flags`` are the
    command-line flags, the main one first (default: ``--<name-with-dashes>``); ``choices`` lists
    the accepted names for the help; ``group`` is where ``--help`` and the README show it (a key of
    :data:`OPTION_GROUPS`).
    """

    help: str
    check: Callable[[Any], Any]
    flags: tuple[str, ...] = ()
    metavar: str | None = None
    parse: Callable[[str], Any] = str
    choices: Callable[[], Iterable[str]] | None = None
    group: str = "scheduling"


def option(default: Any, help: str, check: Callable[[Any], Any], **details: Any) -> Any:
    """A :class:`SchedulerConfig` field declared as an option (see :class:`Option`)."""
    return field(default=default, metadata={"option": Option(help, check, **details)})


def options_of(cls: type) -> dict[str, Option]:
    """Every option of a config class, by field name, in declaration order."""
    return {f.name: f.metadata["option"] for f in fields(cls)}


def flags_of(name: str, spec: Option) -> tuple[str, ...]:
    """The command-line flags of option ``name``, the main one first."""
    return spec.flags or ("--" + name.replace("_", "-"),)


def main_flag(name: str, spec: Option) -> str:
    return flags_of(name, spec)[0]


# --- checks of values (and of flags' texts) -------------------------------------------------


def _text(value: Any) -> str:
    if not isinstance(value, str) or not value:
        raise ValueError(f"expected a non-empty string, got {value!r}")
    return value


def _choice(names: Callable[[], Iterable[str]]) -> Callable[[Any], str]:
    def check(value: Any) -> str:
        known = tuple(names())
        if not isinstance(value, str) or value.lower() not in known:
            raise ValueError(f"unknown value {value!r}; known: {', '.join(known)}")
        return value.lower()
    return check


def _optional(check: Callable[[Any], Any]) -> Callable[[Any], Any]:
    return lambda value: None if value is None else check(value)


def positive_seconds(value: Any) -> float:
    """A positive, finite number of seconds."""
    if not is_number(value) or not math.isfinite(value) or value <= 0:
        raise ValueError(f"expected a positive number of seconds, got {value!r}")
    return float(value)


def positive_integer(value: Any) -> int:
    """A positive integer."""
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ValueError(f"expected a positive integer, got {value!r}")
    return value


def _divider(value: Any) -> str | float:
    if isinstance(value, str) and value in DIVIDERS:
        return value
    if isinstance(value, str):
        try:
            value = float(value)
        except ValueError:
            raise ValueError(f"expected {' or '.join(DIVIDERS)} or seconds, got {value!r}") from None
    return positive_seconds(value)


def _probability_below_one(value: Any) -> float:
    if not is_number(value) or not 0 <= value < 1:
        raise ValueError(f"expected a probability in [0, 1), got {value!r}")
    return float(value)


def _probability_or_one(value: Any) -> float:
    if not is_number(value) or not 0 < value <= 1:
        raise ValueError(f"must be a number in (0, 1], got {value!r}")
    return float(value)


def _non_negative(value: Any) -> float:
    if not is_number(value) or not 0 <= value < math.inf:
        raise ValueError(f"expected a non-negative number, got {value!r}")
    return float(value)


def _seed(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < 2 ** 32:
        raise ValueError(f"expected an integer in [0, 2**32), got {value!r}")
    return value


def _timezone(value: Any) -> str | float:
    from scheduler.knowledge.features import resolve_timezone

    resolve_timezone(value)  # raises ConfigError for an unknown name or a bad offset
    return float(value) if is_number(value) else value


def _predictor(value: Any) -> str:
    from scheduler.knowledge.predictors import check_predictor_name

    try:
        name = check_predictor_name(_text(value))
    except ConfigError as exc:
        raise ValueError(str(exc).removeprefix("predictor: ")) from None
    base, constant = split_argument(name)
    if constant and not 0 < float(constant) < math.inf:
        raise ValueError(f"{base}:C needs a positive number of seconds C, got {value!r}")
    return name


def _json_object(value: Any) -> dict:
    if not isinstance(value, dict):
        raise ValueError(f"expected a JSON object, got {value!r}")
    return value


def number_text(text: str) -> float:
    """A flag's text as a number."""
    try:
        return float(text)
    except ValueError:
        raise ValueError(f"expected a number, got {text!r}") from None


def integer_text(text: str) -> int:
    """A flag's text as an integer."""
    try:
        return int(text)
    except ValueError:
        raise ValueError(f"expected an integer, got {text!r}") from None


def json_text(text: str) -> Any:
    """A flag's text as JSON."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"invalid JSON ({exc})") from None


def _plugin(kind: str) -> Callable[[Any], str]:
    """The check of a built-in name or plug-in spec of ``kind`` (``scheduler.plugins``; loads a plug-in)."""
    return lambda value: resolve(kind, _text(value))


def _predictor_names() -> list[str]:
    from scheduler.knowledge.predictors import PREDICTORS

    return [*PREDICTORS, "constant:C"]


# --- the configuration ---------------------------------------------------------------------


@dataclass
class SchedulerConfig:
    """Every option that changes scheduling decisions (each field's :class:`Option` says what it means).

    EASY++ (Tsafrir et al.) is ``predictor="ave2", correction="requested", backfill_order="spf"``
    (:meth:`easy_plus_plus`).
    """

    algorithm: str = option(
        "easy", "scheduling algorithm: easy (EASY backfilling, batsched's easy_bf), easy_bf_fast (EASY whose "
                "priority job keeps its first expected start, no backfilling beside it), conservative_bf (a "
                "reservation for every waiting job), fcfs (strict queue order, no backfilling; batsched's fcfs and "
                "fcfs_fast) or filler (every job that fits now starts, in queue order); or a plug-in: FILE.py:CLASS, "
                "MODULE:CLASS or an entry point's name (docs/plugins.md)",
        _plugin("algorithm"), flags=("--algorithm", "-v"), metavar="NAME")
    algorithm_options: dict | None = option(
        None, "the algorithm plug-in's options as a JSON object (--algorithm X --help lists them)",
        _optional(_json_object), metavar="JSON", parse=json_text, group="plugins")
    policy: str = option(
        "fcfs", "queue order (or a plug-in: FILE.py:NAME, MODULE:NAME or an entry point's name)", _plugin("policy"),
        flags=("--policy", "-o", "--queue_order"), metavar="NAME", choices=policy_names)
    policy_options: dict | None = option(
        None, "the queue order plug-in's options as a JSON object (--policy X --help lists them)",
        _optional(_json_object), metavar="JSON", parse=json_text, group="plugins")
    backfill_order: str | None = option(
        None, "the order in which EASY (easy, easy_bf_fast) tries backfill candidates, a --policy name (default: the "
              "queue order; a plug-in takes its default options)",
        _optional(_plugin("policy")), metavar="NAME")
    estimates: str = option(
        "requested", "runtime knowledge: requested (p̃ = walltime) or clairvoyant (actual runtime)",
        _choice(lambda: ESTIMATES), metavar="NAME")
    starvation_threshold: float | None = option(
        None, "seconds of waiting after which a job moves to the head of the queue, oldest first (default: off)",
        _optional(positive_seconds), metavar="S", parse=number_text)
    starvation_scope: str = option(
        "queue", "where a starving job moves: queue (to the head of its own queue: Q_small stays ahead of Q) or all "
                 "(ahead of every queue)", _choice(lambda: STARVATION_SCOPES), metavar="NAME")
    classifier: str = option(
        "none", "job size classifier: none (every job is large), rf (the paper's online Random Forest) or oracle "
                "(true classes); small jobs go to Q_small, ahead of Q",
        _choice(lambda: CLASSIFIER_METHODS), metavar="NAME", group="classes")
    safeguard: str = option(
        "none", "kill: kill a small-classified job that outlives the divider and resubmit it as large",
        _choice(lambda: SAFEGUARDS), metavar="NAME", group="classes")
    divider: str | float = option(
        "median", "small/large boundary: median (of the runtimes of every job completed so far), last-week-median, or seconds",
        _divider, metavar="D", group="classes")
    classifier_threshold: float = option(
        0.5, "a job is small when the forest's probability of small exceeds P; higher means fewer false-small "
             "jobs and kills", _probability_below_one, metavar="P", parse=number_text, group="classes")
    probe_threshold: float | None = option(
        None, "a job that is not small is uncertain when the forest's probability of small exceeds P: it queues "
              "after the small jobs, ahead of Q, and the safeguard watches it (default: off)",
        _optional(_probability_below_one), metavar="P", parse=number_text, group="trials")
    probe_length: float = option(
        1.0, "an uncertain job's trial run, as a fraction of the divider: the safeguard kills it after "
             "F x divider (small jobs keep the whole divider)", _probability_or_one, metavar="F", parse=number_text,
        group="trials")
    probe_limit: float | None = option(
        None, "an uncertain job's trial run lasts at most S seconds (with --probe-length, the shorter)",
        _optional(positive_seconds), metavar="S", parse=number_text, group="trials")
    probe_width: float | None = option(
        None, "an uncertain job wider than S x the machine gets a trial run shortened by sqrt(S x machine / "
              "processors): a failed trial wastes processors in proportion to its width (default: off). Measured "
              "worse: the waste falls to 0.5% only where the reduction falls to 0.64-0.76 of class-clairvoyant's",
        _optional(_probability_or_one), metavar="S", parse=number_text, group="experimental")
    probe_max_width: float | None = option(
        None, "a job that would be uncertain but needs more than F x the machine's processors is large (no trial run). "
              "Measured worse: it trades kills for gain, most on SDSC-SP2 (docs/results.md, 'Know, don't kill')",
        _optional(_probability_or_one), metavar="F", parse=number_text, group="experimental")
    siblings: str = option(
        "keep", "when the safeguard kills a job, the same user's waiting watched jobs with the same request "
                "(processors and p̃): keep (still watched) or demote (large: Q, no trial run). Measured worse: "
                "demote costs HPC2N 29 points of class-clairvoyant's reduction, SDSC-SP2 8, and gains KTH-SP2 5",
        _choice(lambda: SIBLINGS), metavar="NAME", group="experimental")
    running_siblings: str = option(
        "ignore", "a submitted job whose user has a job with the same request (processors and p̃) running for the "
                  "divider already: ignore (the classifier decides) or large (Q, no trial run). Measured "
                  "worse: it trades kills for gain (docs/results.md, 'Know, don't kill')",
        _choice(lambda: RUNNING_SIBLINGS), metavar="NAME", group="experimental")
    kill_on: str = option(
        "deadline", "when the kill safeguard kills a watched job that outlives its deadline: deadline (then); demand "
                    "(it goes on running until the first waiting job could start now with its processors); blocking "
                    "(at the deadline, only if running on to its request would delay the first waiting job's start; "
                    "otherwise it runs on, planned with its request); patient (as blocking, but a job in the way runs "
                    "on until that waiting job could start now with its processors)",
        _choice(lambda: KILL_ON), metavar="NAME", group="trials")
    kill_for: str = option(
        "requeued", "kill_on blocking, demand or patient: for which first waiting job a job past its trial is killed: "
                    "requeued (one it would wait behind once killed) or policy (one classified small, or before it in "
                    "the policy's order: the job counts as uncertain) or order (one classified small, or before it in "
                    "the policy's order, whatever its queue)",
        _choice(lambda: KILL_FOR), metavar="NAME", group="trials")
    head_slack: float = option(
        0.0, "kill_on blocking: a job past its trial that would delay a first waiting job not classified small by at "
             "most F x that job's request is spared, unless killing it would let that job start now",
        _non_negative, metavar="F", parse=number_text, group="trials")
    promote_after: float = option(
        0.0, "a job waiting in Q moves ahead of it, with the uncertain jobs (in the policy's order), once it has "
             "waited F x its request since its submission (a retry after a kill: since the original's); 0: never",
        _non_negative, metavar="F", parse=number_text, group="trials")
    trial_gate: str = option(
        "none", "which uncertain jobs get a trial: none (all of them) or machine-share (those whose probability of "
                "being small, by the forest, is at least the share of the machine they ask; the others wait in Q as "
                "large). Measured worse: machine-share keeps 0.76 and 0.52 of class-clairvoyant's reduction on SDSC-SP2",
        _choice(lambda: TRIAL_GATES), metavar="NAME", group="trials")
    promote_overdue: str = option(
        "none", "which jobs of Q move ahead of every queue (oldest first, no head slack) once their total wait reaches "
                "the longest wait of any job started so far on its first attempt: none; killed (the safeguard's "
                "retries, from the original's submission: a killed job waits at most that plus EASY's bound as the "
                "first waiting job); killed-one (the same, one at a time: the oldest due retry moves once the one "
                "moved before it has started); killed-planned (the same, or as soon as the start EASY plans for it now would "
                "make it wait longer); queue (every job of Q)", _choice(lambda: OVERDUE_SCOPES), metavar="SCOPE",
        group="trials")
    spare_within: str = option(
        "none", "kill_on blocking: a job past its trial in the way of a first waiting job neither classified small nor "
                "overdue is spared if, running on to its request, that job would still start within the longest wait "
                "of any job started so far on its first attempt (from its submission), unless killing it would let "
                "that job start now: none or longest-wait. Measured worse: longest-wait costs SDSC-SP2 7-8 points of "
                "class-clairvoyant's reduction", _choice(lambda: SPARE_WITHIN), metavar="NAME", group="trials")
    kill_slack: float = option(
        0.0, "kill_on blocking or patient: a job past its trial that would delay the first waiting job by at most F x "
             "its trial is spared. Measured worse: it costs HPC2N 8-16 points of class-clairvoyant's reduction",
        _non_negative, metavar="F", parse=number_text, group="experimental")
    retry_queue: str = option(
        "large", "where the attempt that follows a kill by the safeguard waits: large (in Q, as the paper) or "
                 "ahead (ahead of Q, with the uncertain jobs: the killed attempt has already waited once) or fresh "
                 "(ahead of Q, with the uncertain jobs, ordered as if submitted at the kill). Measured worse: ahead "
                 "keeps 0.82 of class-clairvoyant's reduction on KTH-SP2 and 0.81 on HPC2N, and the longest wait on "
                 "KTH-SP2 is 4.5x base's; ahead and fresh starve the jobs called large on SDSC-SP2 (10-16x base's)",
        _choice(lambda: RETRY_QUEUES), metavar="NAME", group="experimental")
    divider_estimates: str = option(
        "none", "what the kill safeguard's bound plans: none; running (a watched job, once started, is planned to "
                "end within the divider: the safeguard kills it then); all (waiting watched jobs are planned with "
                "min(p̃, divider) too, so they backfill as short jobs)", _choice(lambda: DIVIDER_ESTIMATES),
        metavar="NAME", group="classes")
    order_by: str = option(
        "planned", "divider_estimates all: what the policy orders a waiting watched job by: planned (the estimate it "
                   "is planned with, min(p̃, its trial): under SPF, every job asking more than its trial ties, broken "
                   "by job id) or estimate (p̃, as class-clairvoyant orders)", _choice(lambda: ORDER_BY),
        metavar="NAME", group="classes")
    partial_oracle: str = option(
        "none", "a measurement aid, not a method: the true class corrects the forest's false-large (no-false-large) "
                "or false-small (no-false-small) answers, or answers during the first, model-less week "
                "(no-blind-week)", _choice(lambda: PARTIAL_ORACLES), metavar="NAME", group="classes")
    features: str = option(
        "live", "classifier history features: live (every job completed before the submission) or paper "
                "(previous weeks only)", _choice(lambda: FEATURE_MODES), metavar="NAME", group="classes")
    model: str | None = option(
        None, "start from a classifier saved with simulate --save-model FILE", _optional(_text), metavar="FILE",
        group="classes")
    estimator: str = option(
        "forest", "the scikit-learn classifier the rf classifier trains: forest (our Random Forest), or a plug-in: "
                  "FILE.py:NAME, MODULE:NAME (e.g. sklearn.ensemble:ExtraTreesClassifier) or an entry point's name",
        _plugin("estimator"), metavar="NAME", group="plugins")
    estimator_options: dict | None = option(
        None, "the estimator's options as a JSON object: its Options, else its scikit-learn parameters "
              "(--estimator X --help lists them)", _optional(_json_object), metavar="JSON", parse=json_text,
        group="plugins")
    timezone: str | float | None = option(
        None, "the trace's time zone (IANA name) for temporal features (simulate takes it from the SWF header)",
        _optional(_timezone), metavar="TZ", group="classes")
    seed: int = option(0, "seeds every random choice, so that runs are reproducible", _seed, metavar="N",
                       parse=integer_text, group="run")
    predictor: str = option(
        "requested", "runtime predictor for ordering and backfilling (requested: --estimates decides)", _predictor,
        metavar="NAME", choices=_predictor_names, group="predictors")
    correction: str = option(
        "requested", "what a job that outlives its prediction is predicted next: requested (p̃), incremental "
                     "(Tsafrir), doubling", _choice(lambda: CORRECTIONS), metavar="NAME", group="predictors")
    predictor_options: dict | None = option(
        None, 'the predictor\'s options as a JSON object, e.g. \'{"search": "bfs", "depth": 1}\' for sbh',
        _optional(_json_object), metavar="JSON", parse=json_text, group="predictors")

    def __post_init__(self) -> None:
        self.validate()

    def validate(self) -> None:
        """Check every option (making its value canonical), then the options together."""
        for name, spec in options_of(type(self)).items():
            setattr(self, name, _checked(spec, getattr(self, name), name))
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
        if self.starvation_scope != "queue" and self.starvation_threshold is None:
            raise ConfigError(f"starvation_scope {self.starvation_scope!r}: it places starving jobs; set "
                              "starvation_threshold too")
        if self.backfill_order is not None and not target_of("algorithm", self.algorithm).backfills:
            raise ConfigError(f"backfill_order: algorithm {self.algorithm!r} takes its jobs in queue order only")
        self.algorithm_options = plugin_options("algorithm", self.algorithm, self.algorithm_options)
        self.policy_options = plugin_options("policy", self.policy, self.policy_options)
        if self.estimator != "forest" or self.estimator_options is not None:
            if self.classifier != "rf":
                raise ConfigError(f"estimator: it is what the rf classifier trains: it needs classifier 'rf' "
                                  f"(got {self.classifier!r})")
            if self.model is not None:
                raise ConfigError("estimator: a saved classifier (model) brings its own forest")
            self.estimator_options = plugin_options("estimator", self.estimator, self.estimator_options)

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
            return {name: _checked(specs[name], value, labels.get(name, name)) for name, value in options.items()}
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


def _checked(spec: Option, value: Any, label: str) -> Any:
    """``spec.check(value)``, its complaint as a ConfigError (of the same kind) naming the option by ``label``."""
    try:
        return spec.check(value)
    except (ValueError, ConfigError) as exc:
        raise (type(exc) if isinstance(exc, ConfigError) else ConfigError)(f"{label}: {exc}") from None
