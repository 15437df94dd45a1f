"""The settings that go together: the value sets of the choice options, the paper's variants and ours
(:data:`VARIANTS`), and the options that act only beside another setting."""

from __future__ import annotations

from typing import Any

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
#: Which jobs a promotion out of Q (promote_after) moves: the job alone, with every job of Q before it in the
#: policy's order (no job of Q is overtaken by a promotion), or with the first of them (one for one).
PROMOTE_SCOPES = ("job", "ahead", "head")
#: --kill-limit, --waste-limit: which watched jobs get the trials the limits allow: first come; the likelier small
#: first; or the likelier small per processor-second a failed trial would waste first.
LIMIT_ORDERS = ("arrival", "p-small", "value")
#: --kill-limit, --waste-limit: whether a job refused a trial may get one later, while it still waits.
READMITS = ("none", "waiting")
#: Where uncertain jobs wait for their trial: ahead of Q, or in Q in the policy's order.
UNCERTAIN_QUEUES = ("ahead", "with-large")
#: Options that act only with probing (a probe_threshold), and only with the kill safeguard.
PROBING_OPTIONS = ("probe_length", "probe_limit", "probe_width", "probe_max_width", "trial_gate", "uncertain_queue",
                   "trial_history")
#: Which uncertain jobs are tried: all; those whose P(small) is at least the share of the machine they ask; those
#: whose user's (user-history, user-pause) or user and request's (request-history) last trials did not all fail.
TRIAL_GATES = ("none", "machine-share", "user-history", "request-history", "user-pause")
#: The trial gates that read the outcomes of past trials (trial_history says how many), by whose trials they read.
HISTORY_GATES = {"user-history": "user", "request-history": "request", "user-pause": "user"}
#: The history gates under which a job given no trial counts, once ended, as a trial that paid (the gate pauses the
#: user's trials until then); under the others, only if it ran within the trial it would have had.
PAUSE_GATES = ("user-pause",)
KILL_OPTIONS = ("siblings", "retry_queue", "kill_on", "kill_for", "head_slack", "kill_slack", "promote_overdue",
                "spare_within", "overdue_ahead_of", "overdue_bound", "overdue_after", "kill_limit", "waste_limit", "limit_order", "readmit", "kill_budget", "waste_budget", "budget_window")
#: Options that act only when waiting watched jobs are planned with their trial (divider_estimates all).
PLANNED_TRIAL_OPTIONS = ("order_by",)
#: Options that act only with a classifier, and why.
CLASSIFIER_OPTIONS = {"running_siblings": "it overrides the classifier's answer",
                      "promote_scope": "it moves jobs out of Q, the queue of the jobs classified large",
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
    # tolerant, but no killed job waits past the longest first-attempt wait so far by more than EASY's bound for the
    # first waiting job: one at a time, the oldest due retry moves ahead of every queue (docs/results.md, "The promise
    # where it was not tuned")
    "classification-guarded": {"classifier": "rf", "safeguard": "kill", "estimates": "requested",
                               "probe_threshold": 0.02, "divider_estimates": "all", "probe_length": 1.0,
                               "probe_limit": 300, "kill_on": "blocking", "kill_for": "order", "head_slack": 0.3,
                               "promote_after": 7.0, "order_by": "estimate", "promote_overdue": "killed-one"},
    # tolerant, but each job promoted out of Q takes the first job of Q with it (one for one), so that jobs promoted
    # after seven of their short requests do not overtake a killed job without end (docs/results.md, "Order-preserving
    # promotion")
    "classification-ordered": {"classifier": "rf", "safeguard": "kill", "estimates": "requested",
                               "probe_threshold": 0.02, "divider_estimates": "all", "probe_length": 1.0,
                               "probe_limit": 300, "kill_on": "blocking", "kill_for": "order", "head_slack": 0.3,
                               "promote_after": 7.0, "order_by": "estimate", "promote_scope": "head"},
    # issue 48: ordered, whose limits hold by construction on any workload: a trial is granted only if the run stays
    # within 10% of its jobs killed and 1% of its useful work wasted were every open trial killed (a kill is never
    # refused; a job past its trial the limits no longer cover is released, never killed); when they are scarce, the
    # trials go to the jobs likeliest small per processor-second risked, and a job refused one gets it later while it
    # still waits, as soon as the limits allow (docs/variants.md)
    "classification-limited": {"classifier": "rf", "safeguard": "kill", "estimates": "requested",
                               "probe_threshold": 0.02, "divider_estimates": "all", "probe_length": 1.0,
                               "probe_limit": 300, "kill_on": "blocking", "kill_for": "order", "head_slack": 0.3,
                               "promote_after": 7.0, "order_by": "estimate", "promote_scope": "head",
                               "kill_limit": 0.10, "waste_limit": 0.01, "limit_order": "value",
                               "readmit": "waiting"},
}
