"""classification-probing (docs/notebook/2026-12-05-results.md): jobs the forest cannot call large run early under the safeguard,
planned with the divider. On the shipped sample it must beat the paper's classification-idempotent."""

import pytest

from batsim_classifier_scheduler.config import SchedulerConfig
from batsim_classifier_scheduler.metrics import summarize
from batsim_classifier_scheduler.sim.simulate import simulate
from batsim_classifier_scheduler.workloads import load_workload

from tests.helpers import REPO, named


@pytest.fixture(scope="module")
def sample():
    return load_workload(REPO / "workloads" / "sample.json")


def run_summary(workload, variant):
    result, _ = simulate(workload, SchedulerConfig.variant(named(variant)))
    return summarize(result.jobs, nb_machines=workload.nb_res)


@pytest.mark.slow
def test_probing_beats_classification_idempotent_on_the_sample(sample):
    idempotent = run_summary(sample, "classification-idempotent")
    probing = run_summary(sample, "classification-probing")
    assert probing["mean_bsld"] < 0.8 * idempotent["mean_bsld"]
    # it probes: more kills, all folded back into their jobs, every job accounted for
    assert probing["nb_kills"] > idempotent["nb_kills"] > 0
    assert probing["nb_jobs"] == idempotent["nb_jobs"] == len(sample)


def long_jobs(workload, factor):
    """``workload`` with every job ``factor`` times longer and submitted ``factor`` times further apart (same load)."""
    from batsim_classifier_scheduler.workloads.batsim_json import delay_profile_names
    from batsim_classifier_scheduler.workloads.model import Workload

    table = workload.jobs.copy()
    for column in ("subtime", "walltime", "runtime"):
        table[column] = table[column] * factor
    table["profile"] = delay_profile_names(table["runtime"])
    return Workload(jobs=table, nb_res=workload.nb_res, name=workload.name, source=workload.source,
                    header=workload.header)


@pytest.mark.slow
def test_bounded_trials_waste_less_than_probing_for_about_the_same_gain_when_jobs_are_long():
    # a seeded synthetic trace whose median runtime is 2.6 hours: probing's failed trials last that long
    from batsim_classifier_scheduler.workloads.synthetic import generate

    workload = long_jobs(generate(1200, weeks=3, nb_res=32, seed=3), 2)
    assert workload.jobs.runtime.median() > 2 * 3600
    base, probing, bounded = (run_summary(workload, variant)
                              for variant in ("base", "classification-probing", "classification-bounded"))
    wasted = {name: summary["wasted_core_seconds"] / summary["useful_core_seconds"]
              for name, summary in (("probing", probing), ("bounded", bounded))}
    assert wasted["bounded"] < 0.6 * wasted["probing"]
    reduction = {name: 1 - summary["mean_bsld"] / base["mean_bsld"]
                 for name, summary in (("probing", probing), ("bounded", bounded))}
    assert reduction["bounded"] > reduction["probing"] - 0.05 and reduction["bounded"] > 0.2
