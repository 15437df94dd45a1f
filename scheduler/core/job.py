"""The scheduler's view of a job."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(eq=False, slots=True)
class Job:
    """A job as the decision core knows it.

    ``id`` is Batsim's full id (``"w0!12"``). ``walltime`` is the requested time p̃
    (``-1`` when the job has none). ``runtime`` is the actual runtime when the front end
    knows it (from the ``delay`` profile); only clairvoyant knowledge may read it.
    ``extras`` holds the workload's extra fields (``user``, ``group``...).
    """

    id: str
    subtime: float
    res: int
    walltime: float
    profile: str = ""
    runtime: float | None = None
    extras: dict[str, Any] = field(default_factory=dict)

    @property
    def has_walltime(self) -> bool:
        return self.walltime > 0

    @property
    def capped_runtime(self) -> float | None:
        """The runtime capped by the walltime, where Batsim kills the job (the runtime itself without a
        walltime); None when the runtime is unknown."""
        if self.runtime is None:
            return None
        return min(self.runtime, self.walltime) if self.walltime > 0 else self.runtime

    @property
    def workload(self) -> str:
        return self.id.split("!", 1)[0] if "!" in self.id else ""
