"""The scheduler's view of a job."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import Any


@dataclass(eq=False, slots=True)
class Job:
    """A job as the decision core knows it.

    ``id`` is Batsim's full id (``"w0!12"``). ``walltime`` is the requested time p̃
    (``-1`` when the job has none). ``runtime`` is the actual runtime when the front end
    knows it (from the ``delay`` profile); only clairvoyant knowledge may read it.
    ``extras`` holds the workload's extra fields (``user``, ``group``...): a dict, or for a workload's static
    jobs in the embedded engine a read-only :class:`JobFields`.
    """

    id: str
    subtime: float
    res: int
    walltime: float
    profile: str = ""
    runtime: float | None = None
    extras: Mapping[str, Any] = field(default_factory=dict)

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


class JobFields(Mapping[str, Any]):
    """A job's extra fields, read-only, for the jobs of a workload that all have the same ones.

    A dict per job takes 272 bytes for the seven fields of an SWF trace; this takes 48, plus the tuple of
    its values, and the jobs share ``index`` (field name -> position in ``values``).
    """

    __slots__ = ("_index", "_values")

    def __init__(self, index: dict[str, int], values: tuple) -> None:
        self._index = index
        self._values = values

    def __getitem__(self, name: str) -> Any:
        return self._values[self._index[name]]

    def get(self, name: str, default: Any = None) -> Any:
        position = self._index.get(name)
        return default if position is None else self._values[position]

    def __contains__(self, name: object) -> bool:
        return name in self._index

    def __iter__(self) -> Iterator[str]:
        return iter(self._index)

    def __len__(self) -> int:
        return len(self._index)

    def __repr__(self) -> str:
        return repr(dict(self))


class JobClass(Enum):
    """What the classifier says of a submitted job.

    ``SMALL`` jobs go to Q_small; ``UNCERTAIN`` ones (only with a probe threshold) queue after them and
    are watched by the safeguard like small ones; ``LARGE`` ones go to Q. :attr:`rank` is the queue rank.
    """

    SMALL = "small", 0
    UNCERTAIN = "uncertain", 1
    LARGE = "large", 2

    #: The job's queue: 0 (Q_small) before 1 (uncertain) before 2 (Q). A plain attribute, not a property: it is
    #: read for every submitted job.
    rank: int

    def __new__(cls, value: str, rank: int) -> "JobClass":
        member = object.__new__(cls)
        member._value_ = value  # the name the config and the metadata use
        member.rank = rank
        return member
