"""classification-probing (docs/results.md): jobs the forest cannot call large run early under the safeguard,
planned with the divider. On the shipped sample it must beat the paper's classification-idempotent."""

import pytest

from scheduler.config import SchedulerConfig
from scheduler.metrics import summarize
from scheduler.sim.simulate import simulate
from scheduler.workloads import load_workload

from tests.helpers import REPO


@pytest.fixture(scope="module")
def sample():
    return load_workload(REPO / "workloads" / "sample.json")


def run_summary(workload, variant):
    result, _ = simulate(workload, SchedulerConfig.variant(variant))
    return summarize(result.jobs, nb_machines=workload.nb_res)


@pytest.mark.slow
def test_probing_beats_classification_idempotent_on_the_sample(sample):
    idempotent = run_summary(sample, "classification-idempotent")
    probing = run_summary(sample, "classification-probing")
    assert probing["mean_bsld"] < 0.8 * idempotent["mean_bsld"]
    # it probes: more kills, all folded back into their jobs, every job accounted for
    assert probing["nb_kills"] > idempotent["nb_kills"] > 0
    assert probing["nb_jobs"] == idempotent["nb_jobs"] == len(sample)
