"""What the scheduler believes about job runtimes. Policies and EASY read only this."""

from batsim_classifier_scheduler.core.decision.parts import RuntimeKnowledge
from batsim_classifier_scheduler.knowledge.runtime_estimates import Estimates

__all__ = ["Estimates", "JobClassifier", "RuntimeKnowledge"]


def __getattr__(name: str):
    # the classifier pulls in scikit-learn: import it only when asked for
    if name == "JobClassifier":
        from batsim_classifier_scheduler.knowledge.classifier import JobClassifier

        return JobClassifier
    raise AttributeError(name)
