"""One in-process simulation: a workload, a scheduler config, the embedded Batsim engine."""

from __future__ import annotations

from dataclasses import replace
from typing import Callable

from batsim_classifier_scheduler.compose import build_core
from batsim_classifier_scheduler.config import SchedulerConfig
from batsim_classifier_scheduler.core.decision import DecisionCore
from batsim_classifier_scheduler.errors import SimulationError
from batsim_classifier_scheduler.sim.engine import BatsimEngine, SimulationOptions, SimulationResult
from batsim_classifier_scheduler.workloads.model import Workload


def simulate(
    workload: Workload,
    config: SchedulerConfig | None = None,
    nb_machines: int | None = None,
    options: SimulationOptions | None = None,
    progress: Callable[[int], None] | None = None,
) -> tuple[SimulationResult, DecisionCore]:
    """Run ``workload`` through our decision core on the embedded engine.

    ``options`` are the Batsim flags the run models. With the kill safeguard, dynamic jobs are enabled, as
    Batsim must be run (``--enable-dynamic-jobs``); ``--acknowledge-dynamic-jobs`` adds Batsim's messages
    that echo each resubmission, which change which events of one instant arrive together, so a run under
    Batsim with that flag is reproduced only with it here. ``--enable-profile-reuse`` changes nothing: the
    safeguard sends the same decisions either way.

    Raises :class:`SimulationError` if any job is left unaccounted for.
    """
    config = config or SchedulerConfig()
    nb_machines = nb_machines or workload.nb_res
    if config.classifier != "none" and config.timezone is None:
        config = replace(config, timezone=workload_timezone(workload))
    if config.safeguard != "none":
        # the safeguard resubmits killed jobs, which needs Batsim's dynamic jobs
        options = replace(options or SimulationOptions(), enable_dynamic_jobs=True)
    core = build_core(config)
    result = BatsimEngine(workload, nb_machines, options).run(core.decide, progress)
    if result.unfinished:
        shown = ", ".join(result.unfinished[:5])
        raise SimulationError(f"{len(result.unfinished)} job(s) never finished (first: {shown})")
    return result, core


def workload_timezone(workload: Workload) -> str | float | None:
    """The trace's time zone from its header (``TimeZoneString``, else the ``TimeZone`` offset)."""
    from batsim_classifier_scheduler.knowledge.features import timezone_from_header

    return timezone_from_header(workload.header)
