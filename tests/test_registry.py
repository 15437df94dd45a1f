"""The one registry of names: every kind of plug-in, its built-in names, and one error that lists them."""

import pytest

from batsim_classifier_scheduler import registry
from batsim_classifier_scheduler.config import SchedulerConfig
from batsim_classifier_scheduler.errors import ConfigError

#: Every kind and its built-in names, as registered beside their definitions.
BUILTINS = {
    "algorithm": ["easy", "easy_bf_fast", "conservative_bf", "fcfs", "filler"],
    "policy": ["fcfs", "spf", "saf", "sqf", "lpf", "wfp", "lcfs", "lqf", "unicef", "f2", "lin", "score"],
    "estimator": ["forest"],
    "predictor": ["requested", "clairvoyant", "constant", "ave2", "easy++", "ruh", "sbh", "sbh-noest", "eloss"],
    "correction": ["requested", "incremental", "doubling"],
    "estimates": ["requested", "clairvoyant"],
}


def test_the_registry_knows_every_kind_and_its_builtin_names():
    assert {kind: registry.builtins(kind) for kind in registry.KINDS} == BUILTINS


@pytest.mark.parametrize("kind", BUILTINS)
def test_an_unknown_name_of_any_kind_is_one_error_listing_the_known_names(kind):
    with pytest.raises(ConfigError) as error:
        registry.canonical(kind, "nonesuch")
    message = str(error.value)
    assert message.startswith(f"unknown {kind} 'nonesuch'; known: {', '.join(registry.names(kind))}; or a plug-in")
    assert registry.KINDS[kind].group in message and "\n" not in message
    assert all(name in message for name in BUILTINS[kind] if name != "score")


@pytest.mark.parametrize("kind, spec, canonical", [
    ("algorithm", "EASY_BF", "easy"), ("algorithm", "fcfs_fast", "fcfs"), ("policy", "asc_walltime", "spf"),
    ("policy", "Score:Theta.json", "score:Theta.json"), ("predictor", "constant:60", "constant:60"),
    ("predictor", "EASY++", "easy++"), ("correction", "Doubling", "doubling"), ("estimates", "clairvoyant", "clairvoyant"),
])
def test_aliases_and_arguments_resolve_to_one_canonical_name(kind, spec, canonical):
    assert registry.canonical(kind, spec) == canonical


@pytest.mark.parametrize("kind, spec, says", [
    ("predictor", "ave2:3", "predictor 'ave2:3': only constant:C takes an argument"),
    ("predictor", "constant:x", "predictor 'constant:x': C must be a number of seconds"),
    ("predictor", "constant:-1", "C must be a positive number of seconds"),
    ("policy", "score:", "policy 'score:': name the θ file (score:FILE)"),
    ("policy", "score", "policy 'score': name its FILE (score:FILE)"),
])
def test_a_bad_argument_names_the_spec(kind, spec, says):
    with pytest.raises(ConfigError, match=says.replace("(", r"\(").replace(")", r"\)")):
        registry.canonical(kind, spec)


def test_every_kind_takes_a_plugin_from_a_file(tmp_path):
    (tmp_path / "mine.py").write_text(
        "from batsim_classifier_scheduler.knowledge.predictors import Predictor\n"
        "from batsim_classifier_scheduler.knowledge.corrections import DoublingCorrection\n"
        "class Twice(Predictor):\n"
        "    name = 'twice'\n"
        "    def predict(self, job, now):\n"
        "        return 2 * job.walltime\n"
        "class Double(DoublingCorrection):\n"
        "    name = 'double'\n")
    config = SchedulerConfig(predictor=f"{tmp_path}/mine.py:Twice", correction=f"{tmp_path}/mine.py:Double")
    assert registry.make("predictor", config.predictor).name == "twice"
    assert registry.make("correction", config.correction).name == "double"
    with pytest.raises(ConfigError, match="no attribute 'Thrice'"):
        SchedulerConfig(predictor=f"{tmp_path}/mine.py:Thrice")


def test_a_name_is_made_with_its_options_and_refuses_options_it_does_not_take():
    assert registry.make("policy", "spf").name == "spf"
    assert registry.make("predictor", "sbh", {"search": "bfs"}).search == "bfs"
    with pytest.raises(ConfigError, match="policy_options: policy 'fcfs' takes no options"):
        registry.options("policy", "fcfs", {"aging": 1})
