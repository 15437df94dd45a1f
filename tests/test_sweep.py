"""``sweep``: the config, the grid, a whole small sweep, resuming, failures, and Dask."""

import contextlib
import io
import json
import shutil
import subprocess
import sys
import time
from dataclasses import replace

import pytest

from batsim_classifier_scheduler.cli import main
from batsim_classifier_scheduler.config import VARIANTS
from batsim_classifier_scheduler.errors import ConfigError
from batsim_classifier_scheduler.experiments.grid import load_config_file, parse_config
from batsim_classifier_scheduler.experiments.sweep import run_sweep
from batsim_classifier_scheduler.experiments.worker import DONE_FILE

from tests.helpers import DATA, REPO

SAMPLE = REPO / "workloads" / "sample.json"
EXPERIMENTS = REPO / "experiments"


def tiny_config(tmp_path, **changes):
    """A fast grid on the first 400 jobs of the sample: 2 policies x 3 variants."""
    data = {
        "name": "tiny",
        "traces": [{"name": "sample", "path": str(SAMPLE), "max_jobs": 400}],
        "policies": ["fcfs", "spf"],
        "variants": ["base", "classification-idempotent", "runtimes-clairvoyant"],
        "seeds": [0],
        "tau": 60,
        **changes,
    }
    path = tmp_path / "tiny.json"
    path.write_text(json.dumps(data))
    return load_config_file(path)


def statuses(outcome):
    return {run.label: run.status for run in outcome.runs}


@pytest.fixture(scope="module")
def ci_sample(tmp_path_factory):
    """The CI sample sweep run by ``sweep`` on the local pool: its results folder and what it printed."""
    results = tmp_path_factory.mktemp("ci-sample") / "results"
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        assert main(["sweep", str(EXPERIMENTS / "ci-sample.json"), "-o", str(results), "--workers", "2"]) == 0
    return results, printed.getvalue()


@pytest.mark.slow
def test_ci_sample_sweep_end_to_end(ci_sample, capsys):
    results, out = ci_sample
    assert "6 runs: 6 done, 0 skipped" in out and "sweep overhead" in out
    run = results / "sample" / "fcfs" / "classification-idempotent" / "seed0"
    for name in ("run_jobs.csv", "run_schedule.csv", "run_summary.json", "run_classifier_weeks.csv",
                 "run_feature_importances.csv", DONE_FILE):
        assert (run / name).is_file(), name
    summary = json.loads((run / "run_summary.json").read_text())
    assert summary["sweep"]["variant"] == "classification-idempotent" and summary["sweep"]["policy"] == "fcfs"
    assert summary["config"]["safeguard"] == "kill" and summary["workload"]["jobs"] == 1200
    assert not (results / "sample" / "fcfs" / "base" / "seed0" / "run_classifier_weeks.csv").exists()
    assert len(list(results.glob("*/*/*/seed0/" + DONE_FILE))) == 6
    assert list((results / ".cache").glob("sample-*.pkl"))
    stats = json.loads((results / "sweep_stats.json").read_text())
    assert stats["done"] == 6 and stats["run_seconds"] > 0 and stats["overhead_ratio"] < 0.5
    assert not (results / "errors.txt").exists()

    # a second invocation skips everything
    assert main(["sweep", str(EXPERIMENTS / "ci-sample.json"), "-o", str(results), "--workers", "2"]) == 0
    assert "0 done, 6 skipped" in capsys.readouterr().out


@pytest.mark.slow
def test_resume_reruns_only_the_affected_runs(tmp_path):
    results = tmp_path / "results"
    first = run_sweep(tiny_config(tmp_path), results, workers=0)
    assert set(statuses(first).values()) == {"done"} and len(first.runs) == 6
    marker = results / "sample" / "spf" / "base" / "seed0" / DONE_FILE
    before = marker.stat().st_mtime_ns

    assert set(statuses(run_sweep(tiny_config(tmp_path), results, workers=0)).values()) == {"skipped"}

    # a classifier option changes the classification runs only
    changed = run_sweep(tiny_config(tmp_path, options={"divider": 1800}), results, workers=0)
    rerun = {label for label, status in statuses(changed).items() if status == "done"}
    assert rerun == {"sample/fcfs/classification-idempotent/seed0", "sample/spf/classification-idempotent/seed0"}
    assert marker.stat().st_mtime_ns == before

    # a new seed adds runs; the old ones are kept
    more = run_sweep(tiny_config(tmp_path, options={"divider": 1800}, seeds=[0, 1]), results, workers=0)
    assert sum(s == "done" for s in statuses(more).values()) == 6
    assert sum(s == "skipped" for s in statuses(more).values()) == 6

    # --force reruns everything
    forced = run_sweep(tiny_config(tmp_path, options={"divider": 1800}), results, workers=0, force=True)
    assert set(statuses(forced).values()) == {"done"}


@pytest.mark.slow
def test_failing_runs_are_reported_and_the_others_finish(tmp_path, capsys):
    config = {
        "name": "broken",
        "traces": [{"name": "sample", "path": str(SAMPLE), "max_jobs": 300},
                   {"name": "missing", "path": str(tmp_path / "no-such-trace.swf")}],
        "policies": ["fcfs"],
        "variants": ["base", {"name": "bad-model", "variant": "classification", "model": str(tmp_path / "bad.model")}],
    }
    (tmp_path / "bad.model").write_bytes(b"not a model\n")  # read, and refused, by the run's worker
    path = tmp_path / "broken.json"
    path.write_text(json.dumps(config))
    results = tmp_path / "results"
    assert main(["sweep", str(path), "-o", str(results), "--workers", "2"]) == 1
    out = capsys.readouterr().out
    failed = [line for line in out.splitlines() if line.startswith("FAILED ")]
    assert len(failed) == 2  # issue 23: the two runs of the missing trace share one line
    assert any(line.startswith("FAILED 2 runs (missing/fcfs/base/seed0, ...): ") and "no-such-trace.swf" in line
               for line in failed)
    assert any("sample/fcfs/bad-model/seed0" in line for line in failed)
    assert (results / "sample" / "fcfs" / "base" / "seed0" / DONE_FILE).is_file()
    errors = (results / "errors.txt").read_text().splitlines()
    assert len(errors) == 3 and all(": " in line for line in errors)
    assert "Traceback" in (results / "sample" / "fcfs" / "bad-model" / "seed0" / "run_error.txt").read_text()

    # the finished run is kept and skipped; the failed ones are tried again
    assert main(["sweep", str(path), "-o", str(results), "--workers", "0"]) == 1
    assert "0 done, 1 skipped (already done), 3 failed" in capsys.readouterr().out


def test_config_validation(tmp_path):
    with pytest.raises(ConfigError, match="unknown variant"):
        parse_config({"traces": ["KTH-SP2"], "variants": ["nope"]})
    with pytest.raises(ConfigError, match="unknown policy"):
        parse_config({"traces": ["KTH-SP2"], "policies": ["fifo"]})
    for key in ("variants", "policies", "seeds"):
        with pytest.raises(ConfigError, match=f"'{key}' is empty"):
            parse_config({"traces": ["KTH-SP2"], key: []})
    with pytest.raises(ConfigError, match="unknown key"):
        parse_config({"traces": ["KTH-SP2"], "polices": ["fcfs"]})
    with pytest.raises(ConfigError, match="unknown trace"):
        parse_config({"traces": [{"archive": "NOPE"}]})
    with pytest.raises(ConfigError, match="seeds"):
        parse_config({"traces": ["KTH-SP2"], "options": {"seed": 3}})
    with pytest.raises(ConfigError, match="divider"):
        parse_config({"traces": ["KTH-SP2"], "options": {"divider": "mean"}})
    config = parse_config({"traces": ["kth-sp2", "data/x.swf.gz"], "policies": "all", "variants": "all",
                           "seeds": [0, 1]}, base_dir=tmp_path)
    assert [t.name for t in config.traces] == ["KTH-SP2", "x"]
    assert config.traces[0].archive == "KTH-SP2" and config.traces[1].path == str(tmp_path / "data" / "x.swf.gz")
    assert len(config.runs()) == 2 * 6 * len(VARIANTS) * 2
    assert main(["sweep", str(tmp_path / "absent.json")]) == 1


def test_the_presets_are_listed_in_the_order_they_were_made():
    from batsim_classifier_scheduler.config.variants import PRESETS

    assert tuple(json.loads((EXPERIMENTS / "presets" / "variants.json").read_text())) == PRESETS


def test_example_configs_parse():
    dev = load_config_file(EXPERIMENTS / "dev-traces.json")
    assert [t.archive for t in dev.traces] == ["KTH-SP2", "SDSC-SP2"] and len(dev.runs()) == 2 * 4 * 13
    local = load_config_file(EXPERIMENTS / "dev-traces-local.json")
    assert all(t.path and t.archive for t in local.traces)
    paper = load_config_file(EXPERIMENTS / "paper-traces.json")
    assert [t.name for t in paper.traces] == ["CTC-SP2", "HPC2N", "KTH-SP2", "SDSC-BLUE", "SDSC-SP2", "KIT-FH2",
                                              "MetaCentrum2-zegox"]
    assert load_config_file(EXPERIMENTS / "ci-sample.json").traces[0].path == str(SAMPLE)
    for other in sorted(EXPERIMENTS.glob("*.json")):  # every example config is valid
        assert load_config_file(other).runs(), other.name


def test_trace_dir_is_searched_before_the_cache(tmp_path, monkeypatch):
    from batsim_classifier_scheduler.experiments.grid import TraceSpec
    from batsim_classifier_scheduler.experiments.traces import resolve_trace_file

    monkeypatch.setenv("BATSIM_CLASSIFIER_SCHEDULER_CACHE", str(tmp_path / "cache"))
    folder = tmp_path / "traces"
    folder.mkdir()
    (folder / "KTH-SP2-1996-2.1-cln.swf.gz").write_bytes(b"")
    trace = TraceSpec(name="KTH-SP2", archive="KTH-SP2")
    assert resolve_trace_file(trace, [folder]) == folder / "KTH-SP2-1996-2.1-cln.swf.gz"
    with pytest.raises(Exception, match="not downloaded"):
        resolve_trace_file(trace, [], download=False)


@pytest.fixture
def dask_cluster(tmp_path):
    """A Dask scheduler and two workers started with the ``dask`` command line, each its own process on
    loopback; yields the scheduler's address, and stops every process it started."""
    distributed = pytest.importorskip("distributed")
    logs = tmp_path / "dask-logs"
    logs.mkdir()
    processes: list[subprocess.Popen] = []

    def start(name: str, *argv: str) -> subprocess.Popen:
        with open(logs / f"{name}.log", "wb") as log:
            processes.append(subprocess.Popen([sys.executable, "-m", "dask", *argv], cwd=tmp_path,
                                              stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL))
        return processes[-1]

    def failure(what: str) -> str:
        return f"{what}\n" + "\n".join(f"--- {log.name}\n{log.read_text()[-2000:]}" for log in sorted(logs.iterdir()))

    scheduler_file = tmp_path / "scheduler.json"
    try:
        # port 0: the scheduler takes a free port and writes its address into the scheduler file, where the
        # workers, started at the same time, find it; the idle and death timeouts stop the processes even if
        # this test process is killed
        scheduler = start("scheduler", "scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
                          "--scheduler-file", str(scheduler_file), "--idle-timeout", "300s")
        for i in (1, 2):
            start(f"worker{i}", "worker", "--scheduler-file", str(scheduler_file), "--host", "127.0.0.1",
                  "--nthreads", "1", "--no-nanny", "--no-dashboard", "--local-directory", str(tmp_path / f"worker{i}"),
                  "--death-timeout", "60s")
        deadline, address = time.monotonic() + 60, None
        while address is None:
            assert scheduler.poll() is None and time.monotonic() < deadline, failure("the Dask scheduler did not start")
            try:
                address = json.loads(scheduler_file.read_text())["address"]
            except (OSError, ValueError, KeyError):  # not written yet, or not whole yet
                time.sleep(0.1)
        assert address.startswith("tcp://127.0.0.1:")
        with distributed.Client(address, timeout="30s") as client:
            try:
                client.wait_for_workers(2, timeout=60)
            except TimeoutError:
                pytest.fail(failure("the two Dask workers did not register"))
        yield address
    finally:
        for group in (processes[1:], processes[:1]):  # the workers first: they close faster with the scheduler up
            for process in group:
                process.terminate()
            for process in group:
                try:
                    process.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()


@pytest.mark.slow
def test_ci_sample_sweep_on_a_dask_cluster_of_processes_equals_the_local_sweep(dask_cluster, ci_sample, tmp_path,
                                                                                capsys, monkeypatch):
    local, _ = ci_sample
    (tmp_path / "head").mkdir()
    monkeypatch.chdir(tmp_path / "head")  # not the workers' working directory: a relative -o must still work
    assert main(["sweep", str(EXPERIMENTS / "ci-sample.json"), "-o", "results",
                 "--dask-scheduler", dask_cluster, "--no-progress"]) == 0
    results = tmp_path / "head" / "results"
    assert "6 runs: 6 done" in capsys.readouterr().out
    stats = json.loads((results / "sweep_stats.json").read_text())
    assert stats["backend"] == f"dask {dask_cluster}, 2 worker(s), 2 thread(s)"
    markers = sorted(results.glob("*/*/*/seed0/" + DONE_FILE))
    assert len(markers) == 6
    assert len({json.loads(marker.read_text())["timings"]["pid"] for marker in markers}) == 2  # both workers ran
    for marker in markers:
        run, twin = marker.parent, local / marker.parent.relative_to(results)
        for name in ("run_jobs.csv", "run_classifier_weeks.csv", "run_feature_importances.csv"):
            assert (run / name).exists() == (twin / name).exists(), name
            if (run / name).exists():
                assert (run / name).read_bytes() == (twin / name).read_bytes(), run / name
        summaries = [json.loads((folder / "run_summary.json").read_text()) for folder in (run, twin)]
        assert summaries[0]["metrics"] == summaries[1]["metrics"]
        assert summaries[0]["classifier"] == summaries[1]["classifier"]
    # the same results folder resumes with the local pool
    again = run_sweep(load_config_file(EXPERIMENTS / "ci-sample.json"), results, workers=0)
    assert set(statuses(again).values()) == {"skipped"}


def test_missing_dask_is_a_clear_error(tmp_path, monkeypatch):
    import builtins

    real_import = builtins.__import__

    def no_dask(name, *args, **kwargs):
        if name == "distributed" or name.startswith("dask"):
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_dask)
    with pytest.raises(ConfigError, match=r"dask\[distributed\]"):
        run_sweep(tiny_config(tmp_path), tmp_path / "results", dask_scheduler="tcp://127.0.0.1:1")


def test_copying_results_keeps_them_resumable(tmp_path):
    results = tmp_path / "results"
    run_sweep(tiny_config(tmp_path, policies=["fcfs"], variants=["base"]), results, workers=0)
    shutil.copytree(results, tmp_path / "copy")
    again = run_sweep(tiny_config(tmp_path, policies=["fcfs"], variants=["base"]), tmp_path / "copy", workers=0)
    assert set(statuses(again).values()) == {"skipped"}


def test_machine_size_per_trace(tmp_path):
    config = parse_config({
        "traces": [{"name": "wide", "path": str(SAMPLE), "max_jobs": 200, "nb_res": 256},
                   {"name": "platform", "path": str(SAMPLE), "max_jobs": 200,
                    "platform": str(REPO / "platforms" / "sdsc_sp2.xml")}],
        "policies": ["fcfs"], "variants": ["base"],
    })
    outcome = run_sweep(config, tmp_path / "results", workers=0)
    assert not outcome.failed
    sizes = {name: json.loads((tmp_path / "results" / name / "fcfs" / "base" / "seed0" / "run_summary.json")
                              .read_text())["nb_machines"] for name in ("wide", "platform")}
    assert sizes == {"wide": 256, "platform": 128}


def test_the_log_reports_each_trace_s_cleaning(tmp_path):
    config = parse_config({"traces": [{"name": "tiny", "path": str(DATA / "tiny.swf")}], "policies": ["fcfs"]})
    lines = []
    assert not run_sweep(config, tmp_path / "results", workers=0, log=lines.append).failed
    (cleaning,) = [line for line in lines if line.startswith("trace tiny: ")]
    assert "10 jobs read, 7 kept, 3 dropped" in cleaning
    for rule in ("runtime<=0", "res<=0", "res>nb_res", "walltime raised to the runtime"):
        assert rule in cleaning, rule
    summary = json.loads((tmp_path / "results" / "tiny" / "fcfs" / "base" / "seed0" / "run_summary.json").read_text())
    assert summary["workload"]["cleaning"]["dropped"]["res>nb_res"] == 1
    # a resumed sweep that reruns from the cached trace says it again
    lines.clear()
    run_sweep(config, tmp_path / "results", workers=0, force=True, log=lines.append)
    assert any(line.startswith("trace tiny: ") and "res>nb_res" in line for line in lines)


@pytest.mark.slow
def test_changing_the_content_of_a_theta_or_model_file_reruns_its_runs(tmp_path):
    from batsim_classifier_scheduler.knowledge.classifier import JobClassifier

    theta, model = tmp_path / "theta.json", tmp_path / "warm.model"
    theta.write_text(json.dumps({"p": 1.0}))
    JobClassifier(method="rf", seed=0).save(model)
    config = tiny_config(tmp_path, policies=[f"score:{theta}"], traces=[{"name": "sample", "path": str(SAMPLE),
                                                                           "max_jobs": 100}],
                         variants=["base", {"name": "warm", "variant": "classification", "model": str(model)}])
    results = tmp_path / "results"
    base, warm = (f"sample/score:{theta}/{variant}/seed0" for variant in ("base", "warm"))

    assert set(statuses(run_sweep(config, results, workers=0)).values()) == {"done"}
    assert set(statuses(run_sweep(config, results, workers=0)).values()) == {"skipped"}
    JobClassifier(method="rf", seed=1).save(model)  # same path, other content
    assert statuses(run_sweep(config, results, workers=0)) == {base: "skipped", warm: "done"}
    theta.write_text(json.dumps({"p": 2.0}))
    assert statuses(run_sweep(config, results, workers=0)) == {base: "done", warm: "done"}
    summary = json.loads(next(results.glob("sample/*/warm/seed0/run_summary.json")).read_text())
    assert set(summary["inputs"]) == {str(theta), str(model)}


def test_runs_made_before_the_algorithm_option_keep_their_hash(tmp_path):
    run = tiny_config(tmp_path).runs()[0]
    older = {k: v for k, v in run.config.items() if k != "algorithm"}  # a config written before --algorithm
    assert run.config["algorithm"] == "easy"
    assert run.config_hash == replace(run, config=older).config_hash
    assert run.config_hash != replace(run, config={**run.config, "algorithm": "fcfs"}).config_hash
    plugin_options = ("algorithm_options", "policy_options", "estimator", "estimator_options")
    before_plugins = {k: v for k, v in run.config.items() if k not in plugin_options}  # before plug-ins
    assert run.config_hash == replace(run, config=before_plugins).config_hash


# --- the algorithms axis -----------------------------------------------------------------------

def test_an_algorithms_axis_runs_every_algorithm_under_every_policy_and_labels_the_others(tmp_path):
    config = tiny_config(tmp_path, algorithms=["easy", "conservative_bf"], variants=["base"])
    runs = config.runs()
    assert [(run.policy, run.config["algorithm"], run.config["policy"]) for run in runs] == [
        ("fcfs", "easy", "fcfs"), ("spf", "easy", "spf"),
        ("conservative_bf fcfs", "conservative_bf", "fcfs"), ("conservative_bf spf", "conservative_bf", "spf")]
    assert len({run.relative_dir for run in runs}) == 4
    # without the axis, the algorithm comes from the options and labels name the policy only
    plain = tiny_config(tmp_path, options={"algorithm": "conservative_bf"}, variants=["base"]).runs()
    assert [(run.policy, run.config["algorithm"]) for run in plain] == [("fcfs", "conservative_bf"),
                                                                       ("spf", "conservative_bf")]


@pytest.mark.parametrize("changes, says", [
    (dict(algorithms=["easy", "nope"]), "unknown algorithm"),
    (dict(algorithms=[]), "'algorithms' is empty"),
    (dict(algorithms=["easy", "easy_bf"]), "'algorithms' lists a value twice"),  # batsched's name of EASY
    (dict(algorithms=["easy"], options={"algorithm": "fcfs"}), "set algorithm with 'algorithms'"),
    (dict(algorithms=["easy"], variants=[{"name": "x", "algorithm": "fcfs"}]), "variant x: set the algorithm"),
])
def test_a_bad_algorithms_axis_is_a_clear_error(tmp_path, changes, says):
    with pytest.raises(ConfigError, match=says):
        tiny_config(tmp_path, **changes)


def test_reports_name_the_algorithm_of_each_scheduler():
    from batsim_classifier_scheduler.experiments.labels import policy_label, scheduler_name, split_label

    assert scheduler_name("spf") == "EASY-SPF"
    assert scheduler_name(policy_label("conservative_bf", "fcfs")) == "CONSERVATIVE-FCFS"
    assert scheduler_name(policy_label("examples/lookahead.py:Lookahead", "saf")) == "LOOKAHEAD-SAF"
    assert split_label(policy_label("filler", "wfp")) == ("filler", "wfp")


@pytest.mark.slow
def test_a_sweep_over_two_algorithms_reports_both(tmp_path):
    from batsim_classifier_scheduler.experiments.report import write_report

    config = tiny_config(tmp_path, algorithms=["easy", "conservative_bf"], policies=["fcfs"], variants=["base"])
    outcome = run_sweep(config, tmp_path / "results", workers=0)
    assert set(statuses(outcome).values()) == {"done"}
    write_report(tmp_path / "results", tmp_path / "report", plots=False)
    table = (tmp_path / "report" / "REPORT.md").read_text()
    assert "| sample | EASY-FCFS | 0% |" in table and "| sample | CONSERVATIVE-FCFS |" in table
