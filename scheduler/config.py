"""The scheduler's configuration: one object, from CLI flags, JSON files or Batsim's sched-config.

Each option is declared once, as a field of :class:`SchedulerConfig` that carries an
:class:`~scheduler.option.Option`: its help, its command-line flags and the check that turns a given value
into the canonical one (or says what is wrong with it). ``scheduler.cli.options`` makes the flags from the
fields; every source of options (flags, ``--config`` files, ``--variant_options``, Batsim's ``sched-config``,
sweep configs) is checked by the same checks (:meth:`SchedulerConfig.check_options` names the source); a
test holds the README's option table to the fields. Names of plug-in kinds (algorithm, policy, estimator,
predictor, correction, estimates) are checked by the one registry of names (``scheduler.registry``);
which settings go together is ``scheduler.variants``'.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any, Mapping

from scheduler import registry
from scheduler.core.overdue import OVERDUE_AHEAD_OF, OVERDUE_BOUNDS, OVERDUE_SCOPES
from scheduler.core.queue import STARVATION_SCOPES
from scheduler.errors import ConfigError
from scheduler.knowledge.choices import CLASSIFIER_METHODS, FEATURE_MODES, PARTIAL_ORACLES
from scheduler.option import (Option, checked, choice, divider_value, integer_text, json_object, json_text,
                              non_empty_text, non_negative, number_text, option, optional, options_of,
                              positive_integer, positive_seconds, probability_below_one, probability_or_one, registered,
                              seed_value, timezone_value)
from scheduler.variants import (LIMIT_ORDERS, READMITS, CLASSIFIER_OPTIONS, DIVIDER_ESTIMATES, KILL_FOR, KILL_OPTIONS, KILL_ON, ORDER_BY,
                                PLANNED_TRIAL_OPTIONS, PROBING_OPTIONS, RETRY_QUEUES, RUNNING_SIBLINGS, SAFEGUARDS,
                                PROMOTE_SCOPES, SIBLINGS, SPARE_WITHIN, TRIAL_GATES, UNCERTAIN_QUEUES,
                                HISTORY_GATES, VARIANTS)

__all__ = ["Option", "SchedulerConfig", "VARIANTS"]


def positive_factor(value: Any) -> float:
    """A factor of at least 1 (a bound may not be tighter than what it is stated in)."""
    if not isinstance(value, (int, float)) or isinstance(value, bool) or not 1 <= value < float("inf"):
        raise ValueError(f"expected a number of at least 1, got {value!r}")
    return float(value)


# --- the configuration ---------------------------------------------------------------------


@dataclass
class SchedulerConfig:
    """Every option that changes scheduling decisions (each field's :class:`Option` says what it means).

    EASY++ (Tsafrir et al.) is ``predictor="ave2", correction="requested", backfill_order="spf"``
    (:meth:`easy_plus_plus`).
    """

    algorithm: str = option(
        "easy", "scheduling algorithm: easy (EASY backfilling, batsched's easy_bf), easy_bf_fast (EASY whose "
                "priority job keeps its first expected start: a job backfills only if it ends by then), "
                "conservative_bf (a reservation for every waiting job), fcfs (strict queue order, no backfilling; batsched's fcfs and "
                "fcfs_fast) or filler (every job that fits now starts, in queue order); or a plug-in: FILE.py:CLASS, "
                "MODULE:CLASS or an entry point's name (docs/plugins.md)",
        registered("algorithm"), flags=("--algorithm", "-v"), metavar="NAME")
    algorithm_options: dict | None = option(
        None, "the algorithm plug-in's options as a JSON object (--algorithm X --help lists them)",
        optional(json_object), metavar="JSON", parse=json_text, group="plugins")
    policy: str = option(
        "fcfs", "queue order (or a plug-in: FILE.py:NAME, MODULE:NAME or an entry point's name)", registered("policy"),
        flags=("--policy", "-o", "--queue_order"), metavar="NAME", choices=lambda: registry.names("policy"))
    policy_options: dict | None = option(
        None, "the queue order plug-in's options as a JSON object (--policy X --help lists them)",
        optional(json_object), metavar="JSON", parse=json_text, group="plugins")
    backfill_order: str | None = option(
        None, "the order in which EASY (easy, easy_bf_fast) tries backfill candidates, a --policy name (default: the "
              "queue order; a plug-in takes its default options)",
        optional(registered("policy")), metavar="NAME")
    estimates: str = option(
        "requested", "runtime knowledge: requested (p̃ = walltime) or clairvoyant (actual runtime)",
        registered("estimates"), metavar="NAME")
    starvation_threshold: float | None = option(
        None, "seconds of waiting after which a job moves to the head of the queue, oldest first (default: off)",
        optional(positive_seconds), metavar="S", parse=number_text)
    starvation_scope: str = option(
        "queue", "where a starving job moves: queue (to the head of its own queue: Q_small stays ahead of Q) or all "
                 "(ahead of every queue)", choice(lambda: STARVATION_SCOPES), metavar="NAME")
    classifier: str = option(
        "none", "job size classifier: none (every job is large), rf (the paper's online Random Forest) or oracle "
                "(true classes); small jobs go to Q_small, ahead of Q",
        choice(lambda: CLASSIFIER_METHODS), metavar="NAME", group="classes")
    safeguard: str = option(
        "none", "kill: kill a small-classified job that outlives the divider and resubmit it as large",
        choice(lambda: SAFEGUARDS), metavar="NAME", group="classes")
    divider: str | float = option(
        "median", "small/large boundary: median (of the runtimes of every job completed so far), last-week-median, or seconds",
        divider_value, metavar="D", group="classes")
    classifier_threshold: float = option(
        0.5, "a job is small when the forest's probability of small exceeds P; higher means fewer false-small "
             "jobs and kills", probability_below_one, metavar="P", parse=number_text, group="classes")
    probe_threshold: float | None = option(
        None, "a job that is not small is uncertain when the forest's probability of small exceeds P: it queues "
              "after the small jobs, ahead of Q, and the safeguard watches it (default: off)",
        optional(probability_below_one), metavar="P", parse=number_text, group="trials")
    probe_length: float = option(
        1.0, "an uncertain job's trial run, as a fraction of the divider: the safeguard kills it after "
             "F x divider (small jobs keep the whole divider)", probability_or_one, metavar="F", parse=number_text,
        group="trials")
    probe_limit: float | None = option(
        None, "an uncertain job's trial run lasts at most S seconds (with --probe-length, the shorter)",
        optional(positive_seconds), metavar="S", parse=number_text, group="trials")
    probe_width: float | None = option(
        None, "an uncertain job wider than S x the machine gets a trial run shortened by sqrt(S x machine / "
              "processors): a failed trial wastes processors in proportion to its width (default: off). Measured "
              "worse: the waste falls to 0.5% only where the reduction falls to 0.64-0.76 of class-clairvoyant's",
        optional(probability_or_one), metavar="S", parse=number_text, group="experimental")
    probe_max_width: float | None = option(
        None, "a job that would be uncertain but needs more than F x the machine's processors is large (no trial run). "
              "Measured worse: it trades kills for gain, most on SDSC-SP2 (docs/results.md, 'Know, don't kill')",
        optional(probability_or_one), metavar="F", parse=number_text, group="experimental")
    siblings: str = option(
        "keep", "when the safeguard kills a job, the same user's waiting watched jobs with the same request "
                "(processors and p̃): keep (still watched) or demote (large: Q, no trial run). Measured worse: "
                "demote costs HPC2N 29 points of class-clairvoyant's reduction, SDSC-SP2 8, and gains KTH-SP2 5",
        choice(lambda: SIBLINGS), metavar="NAME", group="experimental")
    running_siblings: str = option(
        "ignore", "a submitted job whose user has a job with the same request (processors and p̃) running for the "
                  "divider already: ignore (the classifier decides) or large (Q, no trial run). Measured "
                  "worse: it trades kills for gain (docs/results.md, 'Know, don't kill')",
        choice(lambda: RUNNING_SIBLINGS), metavar="NAME", group="experimental")
    kill_on: str = option(
        "deadline", "when the kill safeguard kills a watched job that outlives its deadline: deadline (then); demand "
                    "(it goes on running until the first waiting job could start now with its processors); blocking "
                    "(at the deadline, only if running on to its request would delay the first waiting job's start; "
                    "otherwise it runs on, planned with its request); patient (as blocking, but a job in the way runs "
                    "on until that waiting job could start now with its processors)",
        choice(lambda: KILL_ON), metavar="NAME", group="trials")
    kill_for: str = option(
        "requeued", "--kill-on blocking, demand or patient: for which first waiting job a job past its trial is killed: "
                    "requeued (one it would wait behind once killed) or policy (one classified small, or before it in "
                    "the policy's order: the job counts as uncertain) or order (one classified small, or before it in "
                    "the policy's order, whatever its queue)",
        choice(lambda: KILL_FOR), metavar="NAME", group="trials")
    head_slack: float = option(
        0.0, "--kill-on blocking: a job past its trial that would delay a first waiting job not classified small by at "
             "most F x that job's request is spared, unless killing it would let that job start now",
        non_negative, metavar="F", parse=number_text, group="trials")
    promote_after: float = option(
        0.0, "a job waiting in Q moves ahead of it, with the uncertain jobs (in the policy's order), once it has "
             "waited F x its request since its submission (a retry after a kill: since the original's); 0: never",
        non_negative, metavar="F", parse=number_text, group="trials")
    promote_scope: str = option(
        "job", "--promote-after: which jobs a promotion moves out of Q: job (the job alone); ahead (the job and every "
               "job of Q before it in the policy's order, so that no job of Q is overtaken by a promotion); head (the "
               "job and the first job of Q, one for one: classification-ordered). Measured: head cuts LANL-CM5 FCFS's "
               "longest wait from 8.2-9.1x to 1.24-1.63x base's and meets every bar on 33 runs of 50 (tolerant 38), "
               "on all five traces with its median over seeds 0-4 (tolerant on three); "
               "ahead keeps 0.86-0.88 of class-clairvoyant's reduction on HPC2N and SDSC-SP2 FCFS",
        choice(lambda: PROMOTE_SCOPES), metavar="NAME", group="trials")
    trial_gate: str = option(
        "none", "which uncertain jobs get a trial (the others wait in Q as large): none (all of them); machine-share "
                "(those whose probability of being small, by the forest, is at least the share of the machine they "
                "ask); user-history (those whose user's last --trial-history uncertain jobs did not all fail their "
                "trial, as seen online; a job given no trial counts as failed if it ran past the trial it would have "
                "had); request-history (the same, among the user's jobs with the same request); user-pause (as "
                "user-history, but a job given no trial counts as paid once it ends: the user's trials resume then). "
                "Measured worse: machine-share keeps 0.76 and 0.52 of class-clairvoyant's reduction on SDSC-SP2; "
                "user-history and request-history cut the kills by 15-33% but keep 0.80-0.84 on HPC2N and SDSC-SP2 FCFS "
                "(their gate stays shut: a gated job that asks long runs long); user-pause meets every bar on 3 of 10 "
                "runs with --trial-history 2 (seed 0) and on 30 of 50 with 3 (seeds 0-4; tolerant 8 and 38), HPC2N "
                "FCFS keeping 0.83-0.92; none reaches LANL-CM5 FCFS's starving jobs, which the forest calls small",
        choice(lambda: TRIAL_GATES), metavar="NAME", group="trials")
    trial_history: int = option(
        2, "--trial-gate user-history, request-history or user-pause: how many of the last uncertain jobs of the user "
           "(or of the user with the same request: processors and p̃) must all have failed their trial (killed by the "
           "safeguard) for a new uncertain job of theirs to get none (it waits in Q as large)",
        positive_integer, metavar="K", parse=integer_text, group="trials")
    uncertain_queue: str = option(
        "ahead", "where uncertain jobs wait for their trial: ahead (ahead of Q, behind Q_small) or with-large (in Q, in "
                 "the policy's order: a trial then overtakes Q's jobs only as a backfill, planned with its bound). "
                 "Measured worse: with-large keeps 0.78 of class-clairvoyant's reduction on HPC2N FCFS, and "
                 "LANL-CM5 FCFS's longest wait stays 8.2x base's",
        choice(lambda: UNCERTAIN_QUEUES), metavar="NAME", group="trials")
    promote_overdue: str = option(
        "none", "which jobs of Q move ahead of every queue (oldest first, no head slack) once their total wait reaches "
                "the longest wait of any job started so far on its first attempt: none; killed (the safeguard's "
                "retries, from the original's submission: a killed job waits at most that plus EASY's bound as the "
                "first waiting job); killed-one (the same, one at a time: the oldest due retry moves once the one "
                "moved before it has started); killed-planned (the same, or as soon as the start EASY plans for it "
                "now would make it wait longer); queue (every job of Q)", choice(lambda: OVERDUE_SCOPES),
        metavar="SCOPE", group="trials")
    overdue_ahead_of: str = option(
        "all", "--promote-overdue: which queues an overdue job goes ahead of: all (every queue, Q_small included) or "
               "uncertain (the uncertain jobs and Q: it waits behind the jobs classified small). Measured worse: "
               "uncertain keeps 0.84 of class-clairvoyant's reduction on HPC2N FCFS, and LANL-CM5 FCFS's longest wait "
               "is 1.59x base's",
        choice(lambda: OVERDUE_AHEAD_OF), metavar="NAME", group="trials")
    overdue_bound: str = option(
        "longest-started", "--promote-overdue killed or killed-one: the wait past which a retry is overdue: "
                           "longest-started (the longest wait of any first attempt started so far) or longest-any (the "
                           "same, and the retry waits longer than every first attempt still waiting: none submitted "
                           "before it waits; a killed job then waits at most as long as a job never killed, plus EASY's "
                           "bound, and overdue retries overtake only jobs that have waited less: "
                           "classification-limited)", choice(lambda: OVERDUE_BOUNDS), metavar="NAME", group="trials")
    overdue_after: float = option(
        1.0, "--promote-overdue killed or killed-one: a retry is overdue once its total wait reaches F x the bound "
             "(--overdue-bound): a limit the site states, a killed job waiting at most F x as long as a job never "
             "killed, plus EASY's bound (classification-limited: 1.5, the longest wait's bar against base)",
        positive_factor, metavar="F", parse=number_text, group="trials")
    spare_within: str = option(
        "none", "--kill-on blocking: a job past its trial in the way of a first waiting job neither classified small "
                "nor overdue is spared if, running on to its request, that job would still start within the longest "
                "wait of any job started so far on its first attempt (from its submission), unless killing it would "
                "let that job start now: none or longest-wait. Measured worse: longest-wait costs SDSC-SP2 7-8 points "
                "of class-clairvoyant's reduction", choice(lambda: SPARE_WITHIN), metavar="NAME", group="trials")
    kill_limit: float | None = option(
        None, "--kill-on blocking, demand or patient: a watched job (classified small or uncertain) gets a trial only if "
              "the jobs killed plus the open trials stay at most F x the jobs submitted, were it killed too; a job given "
              "none is large (Q, never killed). No kill is refused: a run kills at most F of its jobs, at every "
              "moment, on any workload (classification-limited: 0.10)",
        optional(probability_or_one), metavar="F", parse=number_text, group="trials")
    waste_limit: float | None = option(
        None, "--kill-on blocking, demand or patient: a watched job gets a trial only if the work the killed attempts "
              "wasted plus what every open trial may waste (processors x its length; past its trial, x the time run, "
              "else it is released: never killed) stay at most F x the work of the jobs completed so far. No kill is "
              "refused: a run wastes at most F of its useful work, at every moment, on any workload "
              "(classification-limited: 0.01)",
        optional(probability_or_one), metavar="F", parse=number_text, group="trials")
    limit_order: str = option(
        "arrival", "--kill-limit, --waste-limit: which watched jobs the limits spend their trials on: arrival (first "
                   "come, first served); p-small (a job refused a trial takes the place of the trial not started yet "
                   "with the lowest probability of being small, by the forest, if lower than its own and the limits "
                   "hold with the swap: that job waits in Q as large); value (the same, by the probability over the "
                   "processors x trial length a failed trial would waste). No constant",
        choice(lambda: LIMIT_ORDERS), metavar="NAME", group="trials")
    readmit: str = option(
        "none", "--kill-limit, --waste-limit: a watched job refused a trial at its submission: none (it stays large) or "
                "waiting (while it still waits in Q, it is granted one as soon as the limits allow it, in "
                "--limit-order's order, or oldest first)", choice(lambda: READMITS), metavar="NAME", group="trials")
    kill_budget: float | None = option(
        None, "--kill-on blocking: a kill by the safeguard is refused (the job runs on) if it would make the jobs "
              "killed more than F x the jobs submitted (over --budget-window, or the whole run), and while that "
              "budget is spent no uncertain job gets a trial: a run then kills at most F of its jobs, on any trace. "
              "Measured worse: with 0.09 (and --waste-budget 0.009) RICC's kills fall from 13.9% to 8.9%, and its "
              "reduction from 0.98 to 0.38 of class-clairvoyant's (refused kills leave long jobs running ahead); on "
              "five traces 30 runs of 50 meet every bar (tolerant 38)",
        optional(probability_or_one), metavar="F", parse=number_text, group="trials")
    waste_budget: float | None = option(
        None, "--kill-on blocking: a kill by the safeguard is refused (the job runs on) if it would make the work lost "
              "to kills (processors x time run) more than F x the work of the jobs completed (over --budget-window, "
              "or the whole run): a run then wastes at most F of its useful work, on any trace. Measured worse, "
              "with --kill-budget (see it)",
        optional(probability_or_one), metavar="F", parse=number_text, group="trials")
    budget_window: float | None = option(
        None, "--kill-budget, --waste-budget: count kills, submissions and work over the last S seconds only (a "
              "burst of kills cannot spend what quiet weeks saved; default: the whole run)",
        optional(positive_seconds), metavar="S", parse=number_text, group="trials")
    kill_slack: float = option(
        0.0, "--kill-on blocking or patient: a job past its trial that would delay the first waiting job by at most F x "
             "its trial is spared. Measured worse: it costs HPC2N 8-16 points of class-clairvoyant's reduction",
        non_negative, metavar="F", parse=number_text, group="experimental")
    retry_queue: str = option(
        "large", "where the attempt that follows a kill by the safeguard waits: large (in Q, as the paper) or "
                 "ahead (ahead of Q, with the uncertain jobs: the killed attempt has already waited once) or fresh "
                 "(ahead of Q, with the uncertain jobs, ordered as if submitted at the kill). Measured worse: ahead "
                 "keeps 0.82 of class-clairvoyant's reduction on KTH-SP2 and 0.81 on HPC2N, and the longest wait on "
                 "KTH-SP2 is 4.5x base's; ahead and fresh starve the jobs called large on SDSC-SP2 (10-16x base's)",
        choice(lambda: RETRY_QUEUES), metavar="NAME", group="experimental")
    divider_estimates: str = option(
        "none", "what the kill safeguard's bound plans: none; running (a watched job, once started, is planned to "
                "end within the divider: the safeguard kills it then); all (waiting watched jobs are planned with "
                "min(p̃, divider) too, so they backfill as short jobs)", choice(lambda: DIVIDER_ESTIMATES),
        metavar="NAME", group="classes")
    order_by: str = option(
        "planned", "--divider-estimates all: what the policy orders a waiting watched job by: planned (the estimate it "
                   "is planned with, min(p̃, its trial): under SPF, every job asking more than its trial ties, broken "
                   "by job id) or estimate (p̃, as class-clairvoyant orders)", choice(lambda: ORDER_BY),
        metavar="NAME", group="classes")
    partial_oracle: str = option(
        "none", "a measurement aid, not a method: the true class corrects the forest's false-large (no-false-large) "
                "or false-small (no-false-small) answers, or answers during the first, model-less week "
                "(no-blind-week)", choice(lambda: PARTIAL_ORACLES), metavar="NAME", group="classes")
    features: str = option(
        "live", "classifier history features: live (every job completed before the submission) or paper "
                "(previous weeks only)", choice(lambda: FEATURE_MODES), metavar="NAME", group="classes")
    train_window: int | None = option(
        None, "the rf classifier trains on the jobs completed during the last WEEKS weeks only (default: every "
              "previous week, as the paper); the divider is unchanged", optional(positive_integer), metavar="WEEKS",
        parse=integer_text, group="classes")
    model: str | None = option(
        None, "start from a classifier saved with simulate --save-model FILE", optional(non_empty_text), metavar="FILE",
        group="classes")
    estimator: str = option(
        "forest", "the scikit-learn classifier the rf classifier trains: forest (our Random Forest), or a plug-in: "
                  "FILE.py:NAME, MODULE:NAME (e.g. sklearn.ensemble:ExtraTreesClassifier) or an entry point's name",
        registered("estimator"), metavar="NAME", group="plugins")
    estimator_options: dict | None = option(
        None, "the estimator's options as a JSON object: its Options, else its scikit-learn parameters "
              "(--estimator X --help lists them)", optional(json_object), metavar="JSON", parse=json_text,
        group="plugins")
    timezone: str | float | None = option(
        None, "the trace's time zone (IANA name) for temporal features (simulate takes it from the SWF header)",
        optional(timezone_value), metavar="TZ", group="classes")
    seed: int = option(0, "seeds every random choice, so that runs are reproducible", seed_value, metavar="N",
                       parse=integer_text, group="run")
    predictor: str = option(
        "requested", "runtime predictor for ordering and backfilling (requested: --estimates decides)",
        registered("predictor"),
        metavar="NAME", choices=lambda: registry.names("predictor"), group="predictors")
    correction: str = option(
        "requested", "what a job that outlives its prediction is predicted next: requested (p̃), incremental "
                     "(Tsafrir), doubling", registered("correction"), metavar="NAME", group="predictors")
    predictor_options: dict | None = option(
        None, 'the predictor\'s options as a JSON object, e.g. \'{"search": "bfs", "depth": 1}\' for sbh',
        optional(json_object), metavar="JSON", parse=json_text, group="predictors")

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
        if "trial_history" in changed and self.trial_gate not in HISTORY_GATES:
            raise ConfigError("trial_history: it counts past trials for a history gate: set trial_gate "
                              f"{' or '.join(HISTORY_GATES)} too")
        if (self.kill_budget is not None or self.waste_budget is not None) and self.kill_on != "blocking":
            raise ConfigError("kill_budget, waste_budget: a refused kill leaves the job running, spared, which only "
                              "kill_on 'blocking' plans: set kill_on blocking too")
        if self.budget_window is not None and self.kill_budget is None and self.waste_budget is None:
            raise ConfigError("budget_window: it is the window of a budget: set kill_budget or waste_budget too")
        if "overdue_ahead_of" in changed and self.promote_overdue == "none":
            raise ConfigError("overdue_ahead_of: it places overdue jobs: set promote_overdue too")
        for name in ("overdue_bound", "overdue_after"):
            if name in changed and self.promote_overdue not in ("killed", "killed-one"):
                raise ConfigError(f"{name}: it says when a retry is overdue: set promote_overdue killed or "
                                  "killed-one too")
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
