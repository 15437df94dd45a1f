"""Scheduling options: each declared once (a SchedulerConfig field), read the same way from every source
(flags, --config files, --variant_options, Batsim's sched-config, sweep configs), documented in the README,
and every meaningless value rejected with one line naming the option."""

import json
import re
import pytest

from batsim_classifier_scheduler.batsim.server import config_at_begin
from batsim_classifier_scheduler.cli import PROG, build_parser, main
from batsim_classifier_scheduler.cli.options import config_from_args
from batsim_classifier_scheduler.config import SchedulerConfig
from batsim_classifier_scheduler.core.messages import SimulationBegins
from batsim_classifier_scheduler.errors import ConfigError
from batsim_classifier_scheduler.experiments.grid import parse_config
from batsim_classifier_scheduler.config.option import OPTION_GROUPS, main_flag, options_of

from tests.helpers import REPO

#: The example plug-ins (examples/), by absolute path: an algorithm and a queue order, each with an option.
LOOKAHEAD = f"{REPO / 'examples' / 'lookahead.py'}:LookAhead"
AGED_AREA = f"{REPO / 'examples' / 'aged_area.py'}:AgedArea"

#: Every option with a valid value other than its default: (flag text, JSON value, the canonical value of both).
#: An option added to the config without an entry here fails test_every_option_has_an_example.
EXAMPLES = {
    "algorithm": ("FCFS", "fcfs", "fcfs"),
    "policy": ("asc_walltime", "asc_walltime", "spf"),
    "backfill_order": ("saf", "SAF", "saf"),
    "estimates": ("clairvoyant", "clairvoyant", "clairvoyant"),
    "starvation_threshold": ("3600", 3600, 3600.0),
    "starvation_scope": ("ALL", "all", "all"),
    "classifier": ("oracle", "oracle", "oracle"),
    "safeguard": ("kill", "kill", "kill"),
    "divider": ("600", 600, 600.0),
    "classifier_threshold": ("0.7", 0.7, 0.7),
    "features": ("paper", "paper", "paper"),
    "model": ("saved.model", "saved.model", "saved.model"),
    "train_window": ("8", 8, 8),
    "timezone": ("Europe/Stockholm", "Europe/Stockholm", "Europe/Stockholm"),
    "seed": ("7", 7, 7),
    "predictor": ("constant:5", "constant:5", "constant:5"),
    "correction": ("doubling", "doubling", "doubling"),
    "predictor_options": ('{"search": "bfs"}', {"search": "bfs"}, {"search": "bfs"}),
    "probe_threshold": ("0.05", 0.05, 0.05),
    "divider_estimates": ("running", "running", "running"),
    "order_by": ("Estimate", "estimate", "estimate"),
    "probe_length": ("0.25", 0.25, 0.25),
    "probe_limit": ("400", 400.0, 400.0),
    "partial_oracle": ("no-false-large", "no-false-large", "no-false-large"),
    "kill_on": ("Blocking", "blocking", "blocking"),
    "kill_for": ("order", "order", "order"),
    "head_slack": ("0.2", 0.2, 0.2),
    "promote_after": ("10", 10, 10.0),
    "promote_overdue": ("Killed", "killed", "killed"),
    "promote_scope": ("ahead", "ahead", "ahead"),
    "kill_limit": ("0.1", 0.1, 0.1),
    "waste_limit": ("0.01", 0.01, 0.01),
    "limit_order": ("P-small", "p-small", "p-small"),
    "readmit": ("Waiting", "waiting", "waiting"),
    "algorithm_options": ('{"depth": 3}', {"depth": 3}, {"depth": 3}),
    "policy_options": ('{"aging": 2}', {"aging": 2}, {"aging": 2.0}),
    "estimator": ("sklearn.ensemble:ExtraTreesClassifier", "sklearn.ensemble:ExtraTreesClassifier",
                  "sklearn.ensemble:ExtraTreesClassifier"),
    "estimator_options": ('{"n_estimators": 20}', {"n_estimators": 20}, {"n_estimators": 20}),
}
#: What every example is tried on top of (the safeguard needs a classifier; probing, the safeguard; a
#: starvation scope, a threshold).
BASE = {"classifier": "rf", "safeguard": "kill", "starvation_threshold": 86400}
BASE_FLAGS = ["--classifier", "rf", "--safeguard", "kill", "--starvation-threshold", "86400"]
#: Options an example needs besides BASE.
NEEDS = {name: {"probe_threshold": 0.02} for name in ("probe_length", "probe_limit")}
NEEDS |= {"algorithm_options": {"algorithm": LOOKAHEAD}, "policy_options": {"policy": AGED_AREA},
          "order_by": {"divider_estimates": "all"}, "promote_scope": {"promote_after": 7.0}}
NEEDS |= {name: {"kill_on": "blocking"} for name in ("kill_limit", "waste_limit")}
NEEDS |= {name: {"kill_on": "blocking", "kill_limit": 0.1} for name in ("limit_order", "readmit")}

#: Meaningless values, each with what the error must say besides the option's name.
BAD = [
    ("algorithm", "conservative", "unknown algorithm"),
    ("policy", "nope", "unknown policy"),
    ("backfill_order", "nope", "unknown policy"),
    ("estimates", "oracle", "unknown estimates"),
    ("starvation_threshold", -5, "positive"),
    ("starvation_threshold", 0, "positive"),
    ("starvation_scope", "global", "unknown value"),
    ("classifier", "svm", "unknown value"),
    ("safeguard", "stop", "unknown value"),
    ("divider", -3, "positive"),
    ("divider", 0, "positive"),
    ("divider", "mean", "median"),
    ("classifier_threshold", -0.1, "probability"),
    ("classifier_threshold", 1.5, "probability"),
    ("features", "all", "unknown value"),
    ("timezone", "Mars/Olympus", "time zone"),
    ("seed", -1, "integer"),
    ("predictor", "psychic", "unknown predictor"),
    ("predictor", "constant:-5", "positive"),
    ("correction", "tripling", "unknown correction"),
    ("predictor_options", [1], "JSON object"),
    ("model", "", "non-empty"),
    ("train_window", 0, "positive integer"),
    ("train_window", -3, "positive integer"),
    ("kill_limit", 0, "number in"),
    ("waste_limit", 1.5, "number in"),
    ("probe_threshold", 1.0, "probability"),
    ("probe_threshold", -0.5, "probability"),
    ("divider_estimates", "waiting", "unknown value"),
    ("probe_length", 0, "number in"),
    ("probe_length", 1.5, "number in"),
    ("partial_oracle", "all-knowing", "unknown value"),
    ("algorithm_options", [1], "JSON object"),
    ("policy_options", [1], "JSON object"),
    ("estimator", "nope", "unknown estimator"),
    ("estimator_options", [1], "JSON object"),
]


def flag_text(value):
    return json.dumps(value) if isinstance(value, (dict, list)) else str(value)


def test_every_option_has_an_example():
    assert set(EXAMPLES) == set(options_of(SchedulerConfig))


@pytest.mark.parametrize("name", list(EXAMPLES))
def test_each_option_reads_the_same_from_every_source(name, tmp_path):
    text, value, canonical = EXAMPLES[name]
    base = {**BASE, **NEEDS.get(name, {})}
    base_flags = BASE_FLAGS + [f"--{key.replace('_', '-')}={v}" for key, v in NEEDS.get(name, {}).items()]
    assert getattr(SchedulerConfig.from_dict({**base, name: value}), name) == canonical
    flag = main_flag(name, options_of(SchedulerConfig)[name])
    path = tmp_path / "options.json"
    path.write_text(json.dumps({**base, name: value}))
    for args in ([*base_flags, flag, text], ["--config", str(path)],
                 ["--variant_options", json.dumps({**base, name.replace("_", "-"): value})]):
        assert getattr(config_from_args(build_parser().parse_args(["simulate", "w.json", *args])), name) == canonical
    begins = SimulationBegins(0.0, 4, {"sched-config": json.dumps({**base, name: value})})
    assert getattr(config_at_begin(begins, {}, {}), name) == canonical


def test_flags_have_aliases_of_batsched():
    parse = build_parser().parse_args
    assert config_from_args(parse(["serve", "-v", "easy_bf", "-o", "desc_walltime"])).policy == "lpf"
    assert config_from_args(parse(["serve", "--queue_order", "asc_size"])).policy == "sqf"


def readme_option_rows() -> dict[str, list[str]]:
    """The option reference's tables (docs/options.md): main flag -> cells, then the title of the group (the
    section, as --help spells it) the row is under."""
    titles = {title.lower(): title for title, _ in OPTION_GROUPS.values()}
    rows, group = {}, None
    for line in (REPO / "docs" / "options.md").read_text().splitlines():
        if line.startswith("## "):
            group = titles.get(line[3:].strip().lower(), line[3:].strip())
            continue
        if not line.startswith("|"):
            continue
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        flag = re.match(r"`(--[a-z_-]+)", cells[0])
        if flag:
            rows[flag.group(1)] = [*cells, group]
    return rows


def test_the_readme_documents_every_option_with_its_default():
    rows = readme_option_rows()
    for name, spec in options_of(SchedulerConfig).items():
        flag = main_flag(name, spec)
        assert flag in rows, f"docs/options.md: no row for {flag}"
        default = SchedulerConfig.__dataclass_fields__[name].default
        if default is not None:
            assert str(default) in rows[flag][-2], f"docs/options.md: {flag}'s default is {default}"
        for alias in spec.flags[1:]:
            assert f"`{alias}" in rows[flag][0], f"docs/options.md: {flag}'s alias {alias}"
    simulate = build_parser("simulate")._subparsers._group_actions[0].choices["simulate"]
    flags = {action.option_strings[0] for action in simulate._actions if action.option_strings} - {"-h"}
    assert set(rows) == flags


def help_groups(command: str) -> dict[str, list[str]]:
    """``command --help``'s groups, in order: title -> the main flags it lists."""
    parser = build_parser(command)._subparsers._group_actions[0].choices[command]
    return {group.title: [(action.option_strings or [action.dest])[0] for action in group._group_actions]
            for group in parser._action_groups if group._group_actions}


def test_options_are_grouped_as_a_reader_meets_them_in_help_and_readme():
    """Issue 31: 40 options in one flat list. Each option's group is data (Option.group); --help and the README's
    table (docs/options.md) show the groups in OPTION_GROUPS' order, and each option in its group."""
    titles = [title for title, _ in OPTION_GROUPS.values()]
    assert {spec.group for spec in options_of(SchedulerConfig).values()} <= set(OPTION_GROUPS)
    for command in ("simulate", "serve"):
        groups = help_groups(command)
        assert [title for title in groups if title in titles] == titles
        for name, spec in options_of(SchedulerConfig).items():
            assert main_flag(name, spec) in groups[OPTION_GROUPS[spec.group][0]]
    rows = readme_option_rows()
    readme_order = list(dict.fromkeys(row[-1] for row in rows.values()))
    assert readme_order == titles
    for flag, row in rows.items():
        assert flag in help_groups("simulate")[row[-1]], f"docs/options.md: {flag} is under {row[-1]!r}"


def test_no_option_measured_worse_is_on_the_main_surface():
    """Issue 47: the options measured worse left the surface (docs/notebook/ keeps their measurements); --help says
    which variant to pick."""
    for name, spec in options_of(SchedulerConfig).items():
        assert "measured worse" not in spec.help.lower(), name
    assert "experimental" not in OPTION_GROUPS


@pytest.mark.parametrize("name, value, says", BAD)
def test_a_meaningless_value_is_rejected_naming_the_option_from_every_source(name, value, says, tmp_path, capsys):
    flag = main_flag(name, options_of(SchedulerConfig)[name])
    # on the command line (the workload is never read): a command-line mistake, exit 2
    if flag_text(value) == "":  # argparse refuses empty text itself
        with pytest.raises(SystemExit) as stop:
            main(["simulate", "missing.json", "--classifier", "rf", flag, ""])
        assert stop.value.code == 2
        assert capsys.readouterr().err.startswith(f"error: simulate: argument {flag}: expected a value, got ''")
    else:
        assert main(["simulate", "missing.json", "--classifier", "rf", flag, flag_text(value)]) == 2
        error = capsys.readouterr().err.strip()
        assert len(error.splitlines()) == 1 and error.startswith(f"error: simulate: argument {flag}:") and says in error
    # in a --config file and in --variant_options
    path = tmp_path / "options.json"
    path.write_text(json.dumps({name: value}))
    assert main(["simulate", "missing.json", "--config", str(path)]) == 1
    error = capsys.readouterr().err.strip()
    assert f"{path}: {name}:" in error and says in error
    assert main(["simulate", "missing.json", "--variant_options", json.dumps({name: value})]) == 1
    error = capsys.readouterr().err.strip()
    assert f"--variant_options: {name}:" in error and says in error
    # in Batsim's sched-config, and in a sweep config's options
    with pytest.raises(ConfigError, match=f"^Batsim's sched-config: {name}: .*{says}"):
        config_at_begin(SimulationBegins(0.0, 4, {"sched-config": json.dumps({name: value})}), {}, {})
    sweep = {"policies": [value]} if name == "policy" else {"seeds": [value]} if name == "seed" else {
        "options": {name: value}}
    with pytest.raises(ConfigError, match=says) as error:
        parse_config({"traces": ["x.swf"], **sweep})
    assert name in str(error.value)


@pytest.mark.parametrize("argv, accepted", [
    (["simulate", "w.json", "--tau", "-5"], "a positive number of seconds"),
    (["simulate", "w.json", "--tau", "0"], "a positive number of seconds"),
    (["simulate", "w.json", "--nb-res", "0"], "a positive integer"),
    (["report", "r", "-o", "out", "--tau", "-1"], "a positive number of seconds"),
    (["serve", "--timeout", "-2"], "seconds"),
    (["simulate", "w.json", "--seed", "1.5"], "an integer"),
    (["simulate", "w.json", "--starvation-threshold", "soon"], "a number"),
    (["serve", "--variant", "nope"], "unknown variant 'nope'; known: base, classification, "),
    (["generate", "-o", "w.json", "--seed", "-1"], "an integer in [0, 2**32)"),
    (["generate", "-o", "w.json", "--load", "nan"], "a positive number"),
    (["generate", "-o", "w.json", "--load", "inf"], "a positive number"),
    (["generate", "-o", "w.json", "--weeks", "nan"], "a positive number"),
    (["platform", "-o", "p.xml", "--nb-res", "0"], "a positive integer"),
    (["convert", "t.swf", "-o", "w.json", "--walltime-pad", "nan"], "seconds >= 0"),
])
def test_meaningless_command_line_values_stop_the_parser_with_one_line(argv, accepted, capsys):
    """Issue 23: argparse printed 17 lines of usage; every error is now one line naming the option and what it
    accepts (exit code 2, a command-line mistake)."""
    with pytest.raises(SystemExit) as stop:
        build_parser(argv[0]).parse_args(argv)
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"error: {argv[0]}: argument {argv[-2]}") and accepted in err
    assert err.endswith(f"(see python -m batsim_classifier_scheduler {argv[0]} --help)\n")


def test_a_missing_argument_is_one_line_too(capsys):
    with pytest.raises(SystemExit) as stop:
        main(["convert", "t.swf"])
    assert stop.value.code == 2
    assert capsys.readouterr().err == ("error: convert: the following arguments are required: -o/--output "
                                       "(see python -m batsim_classifier_scheduler convert --help)\n")


@pytest.mark.parametrize("tau", [-5, 0, float("nan"), "60"])
def test_a_sweep_rejects_a_meaningless_tau(tau):
    with pytest.raises(ConfigError, match="'tau'"):
        parse_config({"traces": ["x.swf"], "tau": tau})


@pytest.mark.parametrize("argv, classifier", [([], "none"), (["--classifier", "oracle"], "oracle"),
                                              (["--variant", "class-clairvoyant"], "oracle")])
def test_a_saved_model_without_the_forest_is_refused(argv, classifier, tmp_path, capsys):
    """Issue 23: ``--model FILE`` without ``--classifier rf`` was ignored and base ran."""
    workload = REPO / "workloads" / "sample.json"
    assert main(["simulate", str(workload), "--model", str(tmp_path / "m.clf"), *argv]) == 2
    source = "--variant class-clairvoyant" if "--variant" in argv else "scheduling options"  # flags, and the variant
    assert capsys.readouterr().err == (f"error: simulate: {source}: --model: a saved classifier is the paper's "
                                       f"Random Forest: it needs --classifier 'rf' (got {classifier!r}) "
                                       f"(see {PROG} simulate --help)\n")


def test_a_flag_that_turns_off_what_its_variant_is_is_refused(capsys):
    """``--variant classification --classifier none`` ran base under classification's name."""
    assert main(["simulate", str(REPO / "workloads" / "sample.json"), "--variant", "classification",
                 "--classifier", "none"]) == 2
    assert "--variant classification is defined by --classifier rf: --classifier none" in capsys.readouterr().err


def test_serve_takes_the_trace_time_zone_from_the_workload_file_batsim_names(tmp_path, caplog):
    """As simulate takes it from the workload it reads: the classifier's temporal features are then the same."""
    from batsim_classifier_scheduler.batsim.server import config_at_begin

    workload = tmp_path / "trace.json"
    workload.write_text(json.dumps({"nb_res": 4, "TimeZoneString": "US/Pacific", "jobs": [], "profiles": {}}))
    begins = SimulationBegins(0.0, 4, {}, {"w0": str(workload)})
    assert config_at_begin(begins, {"classifier": "rf"}, {}).timezone == "US/Pacific"
    assert config_at_begin(begins, {"classifier": "rf", "timezone": "Europe/Stockholm"}, {}).timezone == "Europe/Stockholm"
    assert config_at_begin(begins, {}, {}).timezone is None  # no classifier: no temporal features
    elsewhere = SimulationBegins(0.0, 4, {}, {"w0": str(tmp_path / "on-batsim-machine.json")})
    assert config_at_begin(elsewhere, {"classifier": "rf"}, {}).timezone is None
    assert "in UTC (give --timezone)" in caplog.text


def test_the_option_reference_is_rendered_from_the_declarations():
    """docs/options.md is generated from the table --help reads: regenerate it with
    ``python -m batsim_classifier_scheduler.cli.option_reference > docs/options.md`` when an option changes."""
    from batsim_classifier_scheduler.cli.option_reference import render

    reference = (REPO / "docs" / "options.md").read_text()
    assert reference == render(), "docs/options.md is out of date: python -m batsim_classifier_scheduler.cli.option_reference"
    for name, spec in options_of(SchedulerConfig).items():
        assert f"`{main_flag(name, spec)}" in reference, name


def test_simulate_help_fits_on_150_lines_and_names_at_most_seven_variants(monkeypatch, capsys):
    """Issue 47: a surface a newcomer can hold; the details are in docs/options.md."""
    from batsim_classifier_scheduler.config.variants import RECOMMENDED, VARIANTS

    monkeypatch.setenv("COLUMNS", "80")
    with pytest.raises(SystemExit):
        main(["simulate", "--help"])
    out = capsys.readouterr().out
    assert len(out.splitlines()) <= 150
    assert len(VARIANTS) <= 7 and RECOMMENDED in VARIANTS and f"{RECOMMENDED} (ours, recommended)" in " ".join(out.split())
