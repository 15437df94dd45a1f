"""The embedded engine's shared vocabulary: job records, actors, their calls and messages, Batsim's clock."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from typing import TYPE_CHECKING, Any, Callable, Generator, Sequence

from batsim_classifier_scheduler.core.messages import SUCCESS, WALLTIME, Decision, Event
from batsim_classifier_scheduler.core.job import Job
from batsim_classifier_scheduler.jobs_columns import JOBS_COLUMNS
from batsim_classifier_scheduler.sim.jobs_builder import jobs_columns

if TYPE_CHECKING:
    import pandas as pd


@dataclass
class TimedReply:
    """A reply with Batsim's clock: each decision applies at its timestamp (or at once when that
    is past), and the decision process is busy until ``now``."""

    now: float
    decisions: Sequence[tuple[float, Decision]]


DecideFunction = Callable[[float, Sequence[Event]], "Sequence[Decision] | TimedReply"]

#: The state of a running job (a job not submitted yet has None, a waiting one "", an ended one its final state).
RUNNING = "RUNNING"

# SimGrid's blocking calls, as actors yield them, and the reports actors send the server.
SEND, SLEEP = "send", "sleep"
MSG_HELLO, MSG_SUBMITTED, MSG_BYE = "hello", "submitted", "bye"
MSG_COMPLETED, MSG_WAITED, MSG_KILLED = "completed", "waited", "killed"
MSG_DECISION, MSG_READY = "decision", "ready"
#: The reports an actor sends last: an executor, a waiter or a killer ends once its report has arrived.
LAST_MESSAGES = frozenset((MSG_COMPLETED, MSG_WAITED, MSG_KILLED))

Actor = Generator[tuple, Any, None]


@dataclass(slots=True)
class SimJob:
    """What the engine knows of one job."""

    job: Job
    start: float = math.nan
    finish: float = math.nan
    state: str | None = None  # None until submitted, then "" (waiting), RUNNING, or a final state
    mask: int | str = 0  # its machines while it runs; once it ended, as machines.kept_allocation keeps them
    metadata: str = ""

    @property
    def runtime(self) -> float:
        """Its delay (its job's runtime, known to the engine)."""
        return self.job.runtime


@dataclass
class SimulationOptions:
    """Batsim's flags that change the simulation (same names, without dashes)."""

    enable_dynamic_jobs: bool = False
    acknowledge_dynamic_jobs: bool = False
    enable_profile_reuse: bool = False
    sched_config: str = ""

    def flags(self) -> list[str]:
        """The Batsim command-line flags these options stand for (``--sched-cfg`` aside)."""
        names = ("enable_dynamic_jobs", "acknowledge_dynamic_jobs", "enable_profile_reuse")
        return ["--" + name.replace("_", "-") for name in names if getattr(self, name)]


@dataclass
class SimulationResult:
    """The outcome of one run: one row per job attempt, in Batsim's ``_jobs.csv`` schema.

    The metrics and the output files read :attr:`columns`, built from the job records when first read (the
    records are then let go): the caller of a run frees what else holds them first (the decision core), so that
    the records and the table are never both held with everything else of the run. :attr:`jobs` is the same table
    as a DataFrame, built (and pandas imported) when it is first read.
    """

    rows: list[SimJob]  # one per _jobs.csv row, in the order Batsim writes them (emptied once columns is built)
    nb_machines: int
    makespan: float
    nb_messages: int
    unfinished: list[str] = field(default_factory=list)
    scheduling_time: float = 0.0  # wall-clock seconds the decision process took (its replies, waited for)
    batsim_flags: list[str] = field(default_factory=list)  # the Batsim run modelled (SimulationOptions.flags)

    @cached_property
    def columns(self) -> dict[str, list]:
        """JOBS_COLUMNS -> one value per row (:func:`~batsim_classifier_scheduler.sim.jobs_builder.jobs_columns`)."""
        columns, self.rows = jobs_columns(self.rows), []
        return columns

    @cached_property
    def jobs(self) -> pd.DataFrame:
        import pandas as pd

        return pd.DataFrame(self.columns, columns=JOBS_COLUMNS)


class Process:
    """An actor, with the blocking call it made and what answers it."""

    __slots__ = ("actor", "call", "answer", "dead", "sleep")

    def __init__(self, actor: Actor) -> None:
        self.actor = actor
        self.call: tuple | None = None
        self.answer: Any = None
        self.dead = False
        self.sleep = None


@lru_cache(maxsize=1)  # the server stamps its reports and decisions at one clock several times in a row
def stamp(clock: float) -> float:
    """The time Batsim prints for ``clock`` (``%f``: 6 decimals)."""
    whole = round(clock)
    if -5e-7 < clock - whole < 5e-7:  # the common case, an integer time (or one off by SimGrid's rounding)
        return float(whole)
    return round(clock, 6)


def run_duration(sim: SimJob) -> tuple[float, str]:
    """How long a job runs, and how it ends: its delay, or its walltime when the delay reaches it."""
    walltime = sim.job.walltime
    if walltime < 0 or sim.runtime < walltime:
        return sim.runtime, SUCCESS
    return walltime, WALLTIME
