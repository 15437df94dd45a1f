"""Issue 41: ``--trial-gate machine-share``: an uncertain job is tried only if the forest's P(small) is at least the
share of the machine it asks; decided in-process with a stub classifier that gives probabilities."""

import pytest

from scheduler.compose import build_core
from scheduler.config import SchedulerConfig
from scheduler.sim.engine import BatsimEngine, SimulationOptions

from tests.helpers import make_workload
from tests.test_safeguard import StubClassifier


class ProbabilityStub(StubClassifier):
    """The stub's classes, and a probability of being small per job id."""

    def __init__(self, p_small, **kwargs):
        super().__init__(set(), 100.0, set(p_small), **kwargs)
        self.probabilities = p_small

    def p_small(self, job_id):
        return self.probabilities[job_id]


@pytest.mark.parametrize("res, p_small, tried", [(1, 0.3, True), (3, 0.3, False), (3, 0.75, True), (2, 0.5, True)])
def test_an_uncertain_job_is_tried_only_if_its_chance_covers_its_share_of_the_machine(res, p_small, tried):
    config = SchedulerConfig(classifier="rf", safeguard="kill", probe_threshold=0.02, trial_gate="machine-share")
    core = build_core(config, classifier=ProbabilityStub({"w0!0": p_small}))
    options = SimulationOptions(enable_dynamic_jobs=True, acknowledge_dynamic_jobs=True, enable_profile_reuse=True)
    result = BatsimEngine(make_workload([(0, res, 1000, 300)], 4), options=options).run(core.decide)
    assert ("w0!0" in core.small) is tried  # watched by the safeguard, on a trial
    assert result.jobs.set_index("job_id").loc["0", "metadata"] == ("class=uncertain" if tried else "class=large")


def test_without_probabilities_every_uncertain_job_is_tried():
    config = SchedulerConfig(classifier="rf", safeguard="kill", probe_threshold=0.02, trial_gate="machine-share")
    core = build_core(config, classifier=StubClassifier(set(), 100.0, {"w0!0"}))
    options = SimulationOptions(enable_dynamic_jobs=True, acknowledge_dynamic_jobs=True, enable_profile_reuse=True)
    BatsimEngine(make_workload([(0, 4, 1000, 300)], 4), options=options).run(core.decide)
    assert "w0!0" in core.small
