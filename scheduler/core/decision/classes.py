"""The classes part: the classifier's answer for each submitted job, and the trial of each job the safeguard
watches (classified small, or uncertain): how long it may run, and what the algorithm plans it with."""

from __future__ import annotations

import math
from typing import Any

from scheduler.core.decision.parts import Classifier, TrialRules
from scheduler.core.events import SetMetadata
from scheduler.core.job import Job, JobClass

#: The metadata a classified job is tagged with, by class.
CLASS_METADATA = {job_class: f"class={job_class.value}" for job_class in JobClass}


class Classes:
    """The classifier and the watched jobs' trials."""

    def __init__(self, classifier: Classifier, rules: TrialRules, labels: dict[str, Any]) -> None:
        self.classifier = classifier
        self.rules = rules
        self.labels = labels
        # jobs classified small or uncertain (ahead of Q, watched by the safeguard) -> their trial
        self.trial: dict[str, float] = {}
        self.waiting: set[str] = set()  # those not started yet

    def classify(self, job: Job, now: float) -> tuple[JobClass, SetMetadata]:
        """The class of ``job``, submitted now, and the metadata that tags it; a watched job's trial is set."""
        job_class = self.classifier.classify(job, now)
        if job_class is not JobClass.LARGE:
            self.trial[job.id] = self._trial_length(job_class, now)
            self.waiting.add(job.id)
        return job_class, SetMetadata(job.id, CLASS_METADATA[job_class])

    def _trial_length(self, job_class: JobClass, now: float) -> float:
        """How long the safeguard lets a job classified small or uncertain at ``now`` run: the divider then in force;
        for an uncertain job, ``probe_length`` x it, at most ``probe_limit``."""
        limit = self.classifier.divider_at(now)
        if job_class is JobClass.UNCERTAIN:
            limit = min(limit * self.rules.probe_length, self.rules.probe_limit or math.inf)
        return limit

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

    def summary(self, kills: int) -> dict[str, Any]:
        return {**self.labels, "nb_small": len(self.trial), "kills": kills, **self.classifier.summary()}
