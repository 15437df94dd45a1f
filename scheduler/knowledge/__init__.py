"""What the scheduler believes about job runtimes. Policies and EASY read only this."""

from scheduler.knowledge.estimates import (
    ESTIMATES,
    ClairvoyantEstimates,
    RequestedEstimates,
    RuntimeKnowledge,
    get_estimates,
)

__all__ = ["ESTIMATES", "JobClassifier", "ClairvoyantEstimates", "RequestedEstimates", "RuntimeKnowledge", "get_estimates"]


def __getattr__(name: str):
    # the classifier pulls in scikit-learn: import it only when asked for
    if name == "JobClassifier":
        from scheduler.knowledge.classifier import JobClassifier

        return JobClassifier
    raise AttributeError(name)
