"""The decision core (:class:`DecisionCore`) and the parts it is made of (:mod:`.parts`)."""

from batsim_classifier_scheduler.core.decision.core import DecisionCore, Outcome
from batsim_classifier_scheduler.core.decision.parts import Classifier, Parts

__all__ = ["Classifier", "DecisionCore", "Outcome", "Parts"]
