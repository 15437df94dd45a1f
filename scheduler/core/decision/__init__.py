"""The decision core (:class:`DecisionCore`) and the parts it is made of (:mod:`.parts`)."""

from scheduler.core.decision.core import DecisionCore, Outcome
from scheduler.core.decision.parts import Classifier, Parts

__all__ = ["Classifier", "DecisionCore", "Outcome", "Parts"]
