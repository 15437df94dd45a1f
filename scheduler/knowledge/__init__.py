"""What the scheduler believes about job runtimes. Policies and EASY read only this."""

from scheduler.core.decision.parts import RuntimeKnowledge
from scheduler.knowledge.estimates import Estimates

__all__ = ["Estimates", "JobClassifier", "RuntimeKnowledge"]


def __getattr__(name: str):
    # the classifier pulls in scikit-learn: import it only when asked for
    if name == "JobClassifier":
        from scheduler.knowledge.classifier import JobClassifier

        return JobClassifier
    raise AttributeError(name)
