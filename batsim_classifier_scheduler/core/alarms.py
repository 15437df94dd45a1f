"""CALL_ME_LATER bookkeeping: Batsim wakes the scheduler up at the times it asks for."""

from __future__ import annotations

from batsim_classifier_scheduler.core.messages import CallMeLater, Decision


class Alarms:
    """One CALL_ME_LATER per distinct future time, however many parts of the core want it.

    Batsim's REQUESTED_CALL carries no data, so each part keeps its own deadlines and checks
    them at every decision; this only avoids asking twice for the same time, and never asks
    for a time that is not strictly in the future (Batsim aborts on those).
    """

    def __init__(self) -> None:
        self._pending: set[float] = set()

    def at(self, time: float, now: float) -> list[Decision]:
        """The decision to send to be woken up at ``time`` (none if already asked, or not in the future)."""
        if time <= now or time in self._pending:
            return []
        self._pending.add(time)
        return [CallMeLater(time)]

    def passed(self, now: float) -> None:
        """Forget the times that have come."""
        if self._pending:
            self._pending = {t for t in self._pending if t > now}
