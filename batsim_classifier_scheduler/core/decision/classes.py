"""The classes part: the classifier's answer for each submitted job, and the trial of each job the safeguard
watches (classified small, or uncertain): how long it may run, and what the algorithm plans it with."""

from __future__ import annotations

import math
from typing import Any

from batsim_classifier_scheduler.core.decision.parts import Classifier, TrialRules
from batsim_classifier_scheduler.core.job import Job, JobClass

#: The metadata a classified job is tagged with, by class.
CLASS_METADATA = {job_class: f"class={job_class.value}" for job_class in JobClass}


class Classes:
    """The classifier and the watched jobs' trials. The tag of a job's class is ``CLASS_METADATA[its class]``."""

    def __init__(self, classifier: Classifier, rules: TrialRules, labels: dict[str, Any]) -> None:
        self.classifier = classifier
        self.rules = rules
        self.labels = labels
        # jobs classified small or uncertain (ahead of Q, watched by the safeguard) -> their trial
        self.trial: dict[str, float] = {}
        self.waiting: set[str] = set()  # those not started yet

    def classify(self, job: Job, now: float) -> JobClass:
        """The classifier's answer for ``job``, submitted now."""
        return self.classifier.classify(job, now)

    def trial_length(self, job_class: JobClass, now: float) -> float:
        """How long the safeguard lets a job classified small or uncertain at ``now`` run: the divider then in force;
        for an uncertain job, ``probe_length`` x it, at most ``probe_limit``."""
        limit = self.classifier.divider_at(now)
        if job_class is JobClass.UNCERTAIN:
            limit = min(limit * self.rules.probe_length, self.rules.probe_limit or math.inf)
        return limit

    def watch(self, job_id: str, trial: float) -> None:
        """The safeguard watches ``job_id``, on a trial of ``trial`` seconds; it waits."""
        self.trial[job_id] = trial
        self.waiting.add(job_id)

    def unwatch(self, job_id: str) -> None:
        """``job_id``, waiting, gives its trial up: it is large."""
        self.waiting.discard(job_id)
        del self.trial[job_id]

    def p_small(self, job_id: str) -> float | None:
        """The forest's probability that ``job_id`` is small; None from a classifier without probabilities."""
        p_small = getattr(self.classifier, "p_small", None)
        return p_small(job_id) if p_small is not None else None

    def planned(self, job_id: str, estimate: float) -> float:
        """What a job is planned with: ``estimate``, bounded by its trial if watched and ``divider_estimates`` all."""
        if self.rules.divider_estimates == "all" and job_id in self.trial:
            return min(estimate, self.trial[job_id])
        return estimate

    def started(self, job_id: str) -> None:
        self.waiting.discard(job_id)

    def completed(self, job: Job, runtime: float, now: float) -> None:
        """``job`` (an original) completed after running ``runtime`` seconds: the classifier learns it."""
        self.classifier.completed(job, runtime, now)

    def summary(self, kills: int, limits: dict[str, int]) -> dict[str, Any]:
        return {**self.labels, "nb_small": len(self.trial), "kills": kills, **limits, **self.classifier.summary()}
