"""Plug-ins (issue 25, item 3): an algorithm, a queue order or an estimator of the user's, from a file, a module
or an entry point, with its own typed options; the two examples of ``examples/`` do what they say, and the
commands of ``examples/README.md`` run."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
import textwrap
import threading

import pytest

from batsim_classifier_scheduler import registry
from batsim_classifier_scheduler.batsim.server import DecisionServer
from batsim_classifier_scheduler.cli import main
from batsim_classifier_scheduler.compose import build_core, input_files
from batsim_classifier_scheduler.config import SchedulerConfig
from batsim_classifier_scheduler.core.algorithm import Algorithm
from batsim_classifier_scheduler.core.job import Job
from batsim_classifier_scheduler.errors import ConfigError
from batsim_classifier_scheduler.experiments.grid import parse_config
from batsim_classifier_scheduler.sim.engine import SimulationOptions
from batsim_classifier_scheduler.sim.peer import run_peer
from batsim_classifier_scheduler.sim.simulate import simulate
from batsim_classifier_scheduler.workloads import load_workload

from tests.helpers import REPO

EXAMPLES = REPO / "examples"
LOOKAHEAD = f"{EXAMPLES / 'lookahead.py'}:LookAhead"
AGED_AREA = f"{EXAMPLES / 'aged_area.py'}:AgedArea"


@pytest.fixture(scope="module")
def sample():
    return load_workload(REPO / "workloads" / "sample.json")


def run(workload, **options):
    """The jobs table of one in-process run, indexed by job id."""
    result, _ = simulate(workload, SchedulerConfig(**options))
    return result.jobs.set_index("job_id").sort_index()


def waits(jobs):
    return jobs.starting_time - jobs.submission_time


# --- the examples, loaded from their files (outside the package) ------------------------------


def test_each_example_loads_from_its_file_outside_the_package():
    algorithm = registry.target("algorithm", LOOKAHEAD)
    order = registry.target("policy", AGED_AREA)
    for loaded in (algorithm, order):
        module = sys.modules[loaded.__module__]
        assert module.__file__.startswith(str(EXAMPLES)) and not loaded.__module__.startswith("scheduler.")
    assert issubclass(algorithm, Algorithm)
    assert registry.target("algorithm", LOOKAHEAD) is algorithm  # imported once
    assert SchedulerConfig(algorithm=LOOKAHEAD).algorithm_options == {"depth": 5}  # its defaults, filled in


@pytest.mark.slow
def test_lookahead_of_one_is_strict_order_and_beyond_the_queue_is_the_filler(sample):
    strict, filler = run(sample, algorithm="fcfs"), run(sample, algorithm="filler")
    one = run(sample, algorithm=LOOKAHEAD, algorithm_options={"depth": 1})
    unbounded = run(sample, algorithm=LOOKAHEAD, algorithm_options={"depth": 10 ** 6})
    assert one.starting_time.equals(strict.starting_time) and one.allocated_resources.equals(strict.allocated_resources)
    assert unbounded.starting_time.equals(filler.starting_time)
    assert unbounded.allocated_resources.equals(filler.allocated_resources)


@pytest.mark.slow
@pytest.mark.parametrize("depth", [2, 5])
def test_lookahead_never_lets_a_job_overtake_depth_waiting_jobs(sample, depth):
    jobs = run(sample, algorithm=LOOKAHEAD, algorithm_options={"depth": depth}).reset_index()
    assert not jobs.starting_time.equals(run(sample, algorithm="filler").reset_index().starting_time)
    order = sorted(range(len(jobs)), key=lambda i: (jobs.submission_time[i], jobs.job_id[i]))  # the FCFS queue
    submitted, started = jobs.submission_time.tolist(), jobs.starting_time.tolist()
    most = 0
    for position, j in enumerate(order):
        ahead_waiting = sum(1 for i in order[:position] if submitted[i] <= started[j] < started[i])
        most = max(most, ahead_waiting)
    assert most == depth - 1  # the window is used, never exceeded


@pytest.mark.slow
def test_aged_area_with_no_aging_is_saf_and_with_aging_bounds_the_longest_wait(sample):
    saf, fcfs = run(sample, policy="saf"), run(sample, policy="fcfs")
    assert run(sample, policy=AGED_AREA, policy_options={"aging": 0}).starting_time.equals(saf.starting_time)
    aged = waits(run(sample, policy=AGED_AREA, policy_options={"aging": 16}))
    assert aged.max() < 0.8 * waits(saf).max()  # wide, long jobs are no longer postponed for ever
    assert aged.mean() < 0.7 * waits(fcfs).mean()  # and the order still favours small areas


def test_aged_area_puts_a_wide_job_first_once_it_waited_the_area_difference_over_aging():
    key = registry.make("policy", AGED_AREA, {"aging": 2.0}).key
    wide = Job("w0!1", 0.0, 10, 100.0)  # area 1000: a narrow job (area 100) overtakes it for (1000 - 100) / 2 s
    for now in (500.0, 5000.0):  # the order does not change with time
        assert key(Job("w0!2", 400.0, 1, 100.0), 100.0, now) < key(wide, 100.0, now)
        assert key(wide, 100.0, now) < key(Job("w0!3", 500.0, 1, 100.0), 100.0, now)


# --- the README's commands, through the CLI ---------------------------------------------------


def readme_commands() -> list[str]:
    """The commands of examples/README.md's shell blocks (continuation lines joined)."""
    text = (EXAMPLES / "README.md").read_text()
    blocks = re.findall(r"```sh\n(.*?)```", text, re.S)
    lines = "\n".join(blocks).replace("\\\n", " ").splitlines()
    return [line.strip() for line in lines if line.strip().startswith("python -m batsim_classifier_scheduler")]


def test_the_readme_shows_both_examples():
    commands = readme_commands()
    assert any("examples/lookahead.py:LookAhead" in c for c in commands)
    assert any("examples/aged_area.py:AgedArea" in c for c in commands)


@pytest.mark.slow
@pytest.mark.parametrize("command", readme_commands())
def test_each_readme_command_runs_from_the_checkout(command, tmp_path):
    argv = [sys.executable if word == "python" else word.replace("out/", f"{tmp_path}/")
            for word in shlex.split(command)]
    done = subprocess.run(argv, cwd=REPO, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    if "--help" not in argv:
        assert "mean bsld" in done.stdout
    else:
        assert "options of" in done.stdout


# --- options: validated once, shown by --help, accepted wherever options are ---------------------


@pytest.mark.parametrize("argv, says", [
    (["--algorithm", LOOKAHEAD, "--help"], ["options of algorithm", "depth (int >= 1, default 5): how many waiting"]),
    (["-o", AGED_AREA, "--help"], ["options of policy", "aging (float >= 0, default 16.0)", "--policy-options JSON"]),
    (["--help", "--classifier", "rf", "--estimator", "forest"], ["options of estimator forest",
                                                                 "n_estimators (scikit-learn parameter, default 12)"]),
])
@pytest.mark.parametrize("command", [["simulate", "w.json"], ["serve"]])
def test_help_lists_the_options_of_the_plugins_the_command_line_names(command, argv, says, capsys):
    with pytest.raises(SystemExit) as stop:
        main([*command, *argv])
    assert stop.value.code == 0
    shown = capsys.readouterr().out
    for text in says:
        assert text in shown


def test_help_without_a_plugin_adds_nothing(capsys):
    with pytest.raises(SystemExit):
        main(["simulate", "w.json", "--help"])
    assert "options of" not in capsys.readouterr().out


def test_options_from_every_source_reach_the_plugin(tmp_path, sample):
    options = {"algorithm": LOOKAHEAD, "algorithm_options": {"depth": 3}, "policy": AGED_AREA,
               "policy_options": {"aging": 4}}
    path = tmp_path / "options.json"
    path.write_text(json.dumps(options))
    config = SchedulerConfig.from_file(path)
    assert (config.algorithm_options, config.policy_options) == ({"depth": 3}, {"aging": 4.0})
    core = build_core(config)
    assert core.parts.policy.key(Job("w0!1", 10.0, 2, 5.0), 5.0, 0.0) == (10.0 + 40.0, "w0!1")
    assert core.parts.algorithm.keywords["options"].depth == 3
    # a sweep config: a plug-in policy on the policies axis, its options in 'options'
    with pytest.raises(ConfigError, match="trace x, variant base: policy_options: policy 'fcfs' takes no options"):
        parse_config({"traces": ["x.swf"], "policies": ["fcfs", AGED_AREA], "options": {"policy_options": {"aging": 4}}})
    runs = parse_config({"traces": ["x.swf"], "policies": [AGED_AREA], "options": {"policy_options": {"aging": 4},
                                                                               "algorithm": LOOKAHEAD}}).runs()
    assert runs[0].config["algorithm_options"] == {"depth": 5} and runs[0].config["policy_options"] == {"aging": 4.0}
    assert input_files(SchedulerConfig(**runs[0].config)) == [str(EXAMPLES / "lookahead.py"),
                                                              str(EXAMPLES / "aged_area.py")]


@pytest.mark.slow
def test_serve_takes_plugins_and_their_options_from_batsims_sched_config(sample):
    from tests.test_end_to_end import free_endpoint

    options = {"algorithm": LOOKAHEAD, "algorithm_options": {"depth": 3}, "policy": AGED_AREA}
    endpoint, served = free_endpoint(), {}
    thread = threading.Thread(target=lambda: served.update(stats=DecisionServer(endpoint, {}, timeout=60).run()),
                              daemon=True)
    thread.start()
    remote = run_peer(sample, endpoint, options=SimulationOptions(sched_config=json.dumps(options)), timeout=60)
    thread.join(timeout=60)
    local, _ = simulate(sample, SchedulerConfig(**options))
    assert remote.jobs.equals(local.jobs)
    assert served["stats"].config.policy_options == {"aging": 16.0}


# --- one-line errors naming the spec ---------------------------------------------------------


BROKEN = {
    "syntax.py": "def broken(:\n",
    "fails.py": "raise RuntimeError('no cluster here')\n",
    "shapes.py": textwrap.dedent("""
        from batsim_classifier_scheduler.core.algorithm import Algorithm

        class Half(Algorithm):
            pass

        class NotOptions:
            pass

        class Loose(Algorithm):
            Options = NotOptions

            def schedule(self, now, arrived, released, replan=False):
                return []

        number = 3
        """),
}


#: Plug-ins that cannot be loaded: their file or module is missing or fails (an input problem, exit 1); the
#: other mistakes are the command line's (exit 2).
UNLOADABLE = {"nowhere.py:X", "no_such_package.sched:X", "{tmp}/syntax.py:X", "{tmp}/fails.py:X"}


@pytest.mark.parametrize("flags, says", [
    (["--algorithm", "nowhere.py:X"], "argument --algorithm: algorithm 'nowhere.py:X': file nowhere.py not found"),
    (["--algorithm", f"{LOOKAHEAD}x"], "has no attribute 'LookAheadx'"),
    (["--algorithm", AGED_AREA], "not an Algorithm subclass (batsim_classifier_scheduler.core.algorithm.Algorithm); got class AgedArea"),
    (["--policy", LOOKAHEAD], "LookAhead is a scheduling algorithm: give it to --algorithm"),
    (["--algorithm", "no_such_package.sched:X"], "algorithm 'no_such_package.sched:X': no module named 'no_such_package'"),
    (["--algorithm", "lookahead"], "unknown algorithm 'lookahead'; known: easy, "),
    (["--algorithm", "{tmp}/syntax.py:X"], "syntax.py failed to load (SyntaxError: invalid syntax, line 1)"),
    (["--algorithm", "{tmp}/fails.py:X"], "fails.py failed to load (RuntimeError: no cluster here)"),
    (["--algorithm", "{tmp}/shapes.py:Half"], "Half does not implement schedule"),
    (["--algorithm", "{tmp}/shapes.py:Loose"], "its Options must be a msgspec.Struct class, got class NotOptions"),
    (["--policy", "{tmp}/shapes.py:number"], "not a queue order"),
    (["--algorithm", LOOKAHEAD, "--algorithm-options", '{"deep": 2}'],
     "--algorithm-options: unknown option(s) deep of algorithm"),
    (["--algorithm", LOOKAHEAD, "--algorithm-options", '{"depth": 0}'], "--algorithm-options: depth: Expected `int` >= 1"),
    (["--algorithm", LOOKAHEAD, "--algorithm-options", '{"depth": "5"}'], "depth: Expected `int`, got `str`"),
    (["--policy-options", '{"aging": 1}'], "--policy-options: policy 'fcfs' takes no options"),
    (["--estimator", "sklearn.ensemble:ExtraTreesClassifier"], "estimator: it is what the rf classifier trains"),
    (["--classifier", "rf", "--estimator-options", '{"trees": 3}'], "unknown parameter(s) trees of estimator 'forest'"),
    (["--classifier", "rf", "--estimator-options", '{"n_estimators": 0}'],
     "The 'n_estimators' parameter of RandomForestClassifier must be an int in the range [1, inf). Got 0 instead."),
])
def test_a_broken_plugin_or_option_is_one_line_naming_it(flags, says, tmp_path, capsys):
    for name, text in BROKEN.items():
        (tmp_path / name).write_text(text)
    code = 1 if set(flags) & UNLOADABLE else 2
    flags = [flag.replace("{tmp}", str(tmp_path)) for flag in flags]
    assert main(["simulate", str(REPO / "workloads" / "sample.json"), *flags]) == code
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and error.startswith("error: ") and says in error


# --- estimators, and entry points of installed packages ----------------------------------------


ESTIMATOR = textwrap.dedent('''
    """A single shallow decision tree, as the classifier's estimator."""
    from typing import Annotated

    import msgspec
    from sklearn.tree import DecisionTreeClassifier


    class TreeOptions(msgspec.Struct):
        depth: Annotated[int, msgspec.Meta(ge=1, description="the tree's depth")] = 4


    def shallow_tree(options: TreeOptions) -> DecisionTreeClassifier:
        return DecisionTreeClassifier(max_depth=options.depth)


    shallow_tree.Options = TreeOptions
    ''')


@pytest.fixture(scope="module")
def first_weeks(sample):
    from batsim_classifier_scheduler.workloads.model import Workload

    return Workload(sample.jobs.iloc[:1200].reset_index(drop=True), sample.nb_res, name=sample.name,
                    header=sample.header)


@pytest.mark.slow
def test_an_estimator_plugin_is_trained_by_the_classifier(tmp_path, first_weeks):
    (tmp_path / "tree.py").write_text(ESTIMATOR)
    config = SchedulerConfig(classifier="rf", estimator=f"{tmp_path}/tree.py:shallow_tree",
                             estimator_options={"depth": 3})
    _, core = simulate(first_weeks, config)
    model = core.outcome().model
    assert type(model.estimator).__name__ == "DecisionTreeClassifier" and model.estimator.max_depth == 3
    assert core.outcome().classifier["nb_small"] > 0


@pytest.mark.slow
def test_the_forests_own_parameters_as_options_change_nothing_at_their_defaults(first_weeks):
    default = run(first_weeks, classifier="rf")
    assert run(first_weeks, classifier="rf", estimator="forest",
               estimator_options={"n_estimators": 12, "max_depth": 14}).equals(default)


def install(tmp_path, monkeypatch, entry_points: str, modules: dict[str, str]) -> None:
    """An installed distribution in ``tmp_path`` (a dist-info with ``entry_points``), found on sys.path."""
    info = tmp_path / "demo_plugins-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: demo-plugins\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(textwrap.dedent(entry_points))
    for name, text in modules.items():
        (tmp_path / name).write_text(text)
    monkeypatch.syspath_prepend(str(tmp_path))


@pytest.mark.slow
def test_entry_points_of_an_installed_package_resolve_by_name(tmp_path, monkeypatch, capsys, first_weeks):
    install(tmp_path, monkeypatch, """
        [batsim_classifier_scheduler.algorithms]
        lookahead = demo_lookahead:LookAhead
        easy = demo_lookahead:LookAhead

        [batsim_classifier_scheduler.policies]
        aged-area = demo_orders:AgedArea

        [batsim_classifier_scheduler.estimators]
        shallow-tree = demo_tree:shallow_tree
        """, {"demo_lookahead.py": (EXAMPLES / "lookahead.py").read_text(),
              "demo_orders.py": (EXAMPLES / "aged_area.py").read_text(), "demo_tree.py": ESTIMATOR})
    config = SchedulerConfig(algorithm="lookahead", algorithm_options={"depth": 3}, policy="aged-area",
                             classifier="rf", estimator="shallow-tree")
    assert (config.algorithm_options, config.policy_options, config.estimator_options) == (
        {"depth": 3}, {"aging": 16.0}, {"depth": 4})
    assert registry.target("algorithm", "lookahead").__module__ == "demo_lookahead"
    assert SchedulerConfig(algorithm="easy").algorithm == "easy"  # a built-in name wins
    assert run(first_weeks, algorithm="lookahead", policy="aged-area").equals(
        run(first_weeks, algorithm=LOOKAHEAD, policy=AGED_AREA))
    with pytest.raises(SystemExit):
        main(["serve", "--help", "-v", "lookahead"])
    assert "options of algorithm lookahead" in capsys.readouterr().out
    with pytest.raises(ConfigError, match="unknown algorithm 'lookahed'.*entry point of group "
                                          "batsim_classifier_scheduler.algorithms"):
        SchedulerConfig(algorithm="lookahed")


def test_a_broken_entry_point_is_one_line_naming_it(tmp_path, monkeypatch):
    install(tmp_path, monkeypatch, """
        [batsim_classifier_scheduler.policies]
        gone = demo_missing:Order
        """, {})
    with pytest.raises(ConfigError, match=r"^policy: policy 'gone': entry point demo_missing:Order failed to load "
                                          r"\(ModuleNotFoundError: No module named 'demo_missing'\)$"):
        SchedulerConfig(policy="gone")


@pytest.mark.slow
@pytest.mark.parametrize("name, kind", [("Greedy", "algorithm"), ("shortest_request", "policy"),
                                        ("shallow_tree", "estimator")])
def test_the_plugins_of_docs_plugins_md_run(name, kind, tmp_path, first_weeks):
    blocks = re.findall(r"```python\n(.*?)```", (REPO / "docs" / "plugins.md").read_text(), re.S)
    code = next(block for block in blocks if re.search(rf"^(class|def) {name}\b", block, re.M))
    (tmp_path / "doc_plugin.py").write_text(code)
    spec = f"{tmp_path}/doc_plugin.py:{name}"
    options = {"algorithm": {"algorithm": spec}, "policy": {"policy": spec},
               "estimator": {"classifier": "rf", "estimator": spec}}[kind]
    assert len(run(first_weeks, **options)) == len(first_weeks)
