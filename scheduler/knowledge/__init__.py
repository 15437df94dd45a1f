"""What the scheduler believes about job runtimes. Policies and EASY read only this."""

from scheduler.knowledge.estimates import (
    ESTIMATES,
    ClairvoyantEstimates,
    RequestedEstimates,
    RuntimeKnowledge,
    get_estimates,
)

__all__ = ["ESTIMATES", "ClairvoyantEstimates", "RequestedEstimates", "RuntimeKnowledge", "get_estimates"]
