"""One in-process simulation: a workload, a scheduler config, the embedded Batsim engine."""

from __future__ import annotations

from typing import Callable

from scheduler.config import SchedulerConfig
from scheduler.core.scheduler import DecisionCore
from scheduler.errors import SimulationError
from scheduler.sim.engine import BatsimEngine, SimulationOptions, SimulationResult
from scheduler.workloads.model import Workload


def simulate(
    workload: Workload,
    config: SchedulerConfig | None = None,
    nb_machines: int | None = None,
    options: SimulationOptions | None = None,
    progress: Callable[[int], None] | None = None,
) -> tuple[SimulationResult, DecisionCore]:
    """Run ``workload`` through our decision core on the embedded engine.

    Raises :class:`SimulationError` if any job is left unaccounted for.
    """
    config = config or SchedulerConfig()
    nb_machines = nb_machines or workload.nb_res
    core = DecisionCore(config)
    result = BatsimEngine(workload, nb_machines, options).run(core.decide, progress)
    if result.unfinished:
        shown = ", ".join(result.unfinished[:5])
        raise SimulationError(f"{len(result.unfinished)} job(s) never finished (first: {shown})")
    return result, core
