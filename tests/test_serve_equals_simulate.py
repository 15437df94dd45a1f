"""``simulate`` and ``batsim-peer`` + ``serve`` make the same decisions (issue 29).

Which events of one instant reach the scheduler in the same message depends on the exact number of
messages Batsim exchanged before (:mod:`batsim_classifier_scheduler.sim.simgrid`), so the safeguard's decisions must not
depend on Batsim's flags that ``simulate`` cannot know (``--enable-profile-reuse``), and ``simulate`` must
model the flags that add Batsim messages (``--acknowledge-dynamic-jobs``). The workload below is
dense, with whole-second times far from 0, where SimGrid's clock rounding splits same-instant events:
before the fix, 98 of its probing run's 2,262 start times under ``serve`` (without profile reuse)
differed from ``simulate``'s, from 9,203,860 s on.
The whole-trace check is ``benchmarks/check_serve_equals_simulate.py``.
"""

import numpy as np
import pytest

from tests.helpers import preset

from batsim_classifier_scheduler.config import SchedulerConfig
from batsim_classifier_scheduler.sim.engine import SimulationOptions
from batsim_classifier_scheduler.sim.peer import run_peer
from batsim_classifier_scheduler.sim.simulate import simulate
from batsim_classifier_scheduler.workloads.synthetic import generate

from tests.test_end_to_end import free_endpoint, serve_in_thread


@pytest.fixture(scope="module")
def dense():
    workload = generate(1500, weeks=0.75, nb_res=16, seed=0, load=1.0)
    workload.jobs["subtime"] = np.round(workload.jobs["subtime"]) + 9_000_000
    return workload


def test_serve_under_batsims_flags_equals_simulate(dense, acknowledge=False):
    options = SchedulerConfig.variant(preset("classification-probing")).to_dict()
    endpoint = free_endpoint()
    thread, served = serve_in_thread(endpoint, options)
    flags = SimulationOptions(enable_dynamic_jobs=True, acknowledge_dynamic_jobs=acknowledge)  # no profile reuse
    remote = run_peer(dense, endpoint, options=flags, timeout=60)
    thread.join(timeout=60)
    assert "error" not in served, served.get("error")
    local, core = simulate(dense, SchedulerConfig.variant(preset("classification-probing")),
                           options=SimulationOptions(acknowledge_dynamic_jobs=acknowledge))
    assert core.outcome().classifier["kills"] > 100
    assert remote.jobs.equals(local.jobs)
    assert local.batsim_flags == ["--enable-dynamic-jobs"]


def test_simulate_models_batsims_acknowledgements(dense):
    config = SchedulerConfig.variant(preset("classification-probing"))
    local, _ = simulate(dense, config, options=SimulationOptions(acknowledge_dynamic_jobs=True))
    assert local.batsim_flags == ["--enable-dynamic-jobs", "--acknowledge-dynamic-jobs"]
    assert local.nb_messages > simulate(dense, config)[0].nb_messages  # Batsim's JOB_SUBMITTED echoes


def test_the_safeguard_sends_the_same_decisions_with_or_without_profile_reuse(dense):
    config = SchedulerConfig.variant(preset("classification-probing"))
    runs = [simulate(dense, config, options=SimulationOptions(enable_profile_reuse=reuse))[0] for reuse in (False, True)]
    assert runs[0].jobs.equals(runs[1].jobs)
    assert runs[0].jobs.profile.str.contains("_resubmit_").sum() > 100
