"""``serve`` driven by ``batsim-peer`` over real ZeroMQ sockets, and the whole protocol path in-process."""

import socket
import threading

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from batsim_classifier_scheduler.batsim import BatsimCodec, SchedulerCodec
from batsim_classifier_scheduler.batsim.server import DecisionServer
from batsim_classifier_scheduler.cli import main
from batsim_classifier_scheduler.compose import build_core
from batsim_classifier_scheduler.config import SchedulerConfig
from batsim_classifier_scheduler.errors import ProtocolError
from batsim_classifier_scheduler.sim.engine import BatsimEngine
from batsim_classifier_scheduler.sim.peer import run_peer, workload_profiles
from batsim_classifier_scheduler.sim.simulate import simulate
from batsim_classifier_scheduler.workloads import load_workload
from batsim_classifier_scheduler.workloads.synthetic import generate

from tests.helpers import REPO, make_workload


def free_endpoint() -> str:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return f"tcp://127.0.0.1:{probe.getsockname()[1]}"


def serve_in_thread(endpoint, options=None):
    result = {}

    def target():
        try:
            result["stats"] = DecisionServer(endpoint, options or {}, timeout=60).run()
        except Exception as exc:  # reported by the test
            result["error"] = exc

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    return thread, result


@pytest.fixture(scope="module")
def sample():
    return load_workload(REPO / "workloads" / "sample.json")


@pytest.mark.slow
@pytest.mark.parametrize("policy", ["fcfs", "saf"])
def test_served_run_equals_the_in_process_run(sample, policy):
    endpoint = free_endpoint()
    thread, served = serve_in_thread(endpoint, {"policy": policy})
    remote = run_peer(sample, endpoint, timeout=60)
    thread.join(timeout=60)
    assert "error" not in served, served.get("error")
    local, _ = simulate(sample, SchedulerConfig(policy=policy))
    assert remote.jobs.equals(local.jobs)
    assert served["stats"].messages == remote.nb_messages
    assert served["stats"].config.policy == policy


@pytest.mark.slow
def test_sched_config_from_batsim_sets_the_policy():
    from batsim_classifier_scheduler.sim.engine import SimulationOptions

    workload = generate(200, weeks=0.5, nb_res=16, seed=3)
    endpoint = free_endpoint()
    thread, served = serve_in_thread(endpoint)
    run_peer(workload, endpoint, options=SimulationOptions(sched_config='{"policy": "spf"}'), timeout=60)
    thread.join(timeout=60)
    assert served["stats"].config.policy == "spf"


@pytest.mark.slow
def test_a_scheduler_that_disappears_gives_a_clear_error():
    endpoint = free_endpoint()  # nobody listens there
    with pytest.raises(ProtocolError, match=r"no reply from the scheduler at .* within 0\.5 s \(message 1\): is a "
                                            r"scheduler listening there\? \(--timeout S; 0 waits forever\)"):
        run_peer(make_workload([(0, 1, 10, 5)], nb_res=1), endpoint, timeout=0.5)


@pytest.mark.slow
def test_a_batsim_that_never_comes_gives_a_clear_error():
    with pytest.raises(ProtocolError, match=r"no Batsim connected to tcp://.* within 0\.3 s"):
        DecisionServer(free_endpoint(), timeout=0.3).run()


def test_both_sides_of_the_socket_wait_600_s_by_default():
    """Issue 23: batsim-peer with no scheduler listening, and serve with no Batsim, waited forever."""
    from batsim_classifier_scheduler.cli import build_parser

    for argv in (["serve"], ["batsim-peer", "-p", "p.xml", "-w", "w.json"]):
        assert build_parser(argv[0]).parse_args(argv).timeout == 600
        assert build_parser(argv[0]).parse_args([*argv, "--timeout", "0"]).timeout is None  # forever, on demand


def protocol_path(workload, config):
    """Engine -> Batsim JSON -> our scheduler -> JSON -> engine, in-process."""
    engine = BatsimEngine(workload)
    batsim = BatsimCodec(workloads={"w0": "w.json"}, profiles={"w0": workload_profiles(workload)},
                         alloc_of=lambda job_id: engine.jobs[job_id].mask)
    ours = SchedulerCodec()
    core = build_core(config)

    def decide(now, events):
        received_now, received = ours.decode(batsim.encode(now, events))
        return batsim.decode(ours.encode(received_now, core.decide(received_now, received)))[1]

    return engine.run(decide)


@st.composite
def workloads(draw):
    jobs = [(draw(st.integers(0, 50)), draw(st.integers(1, 5)), draw(st.integers(1, 40)), draw(st.integers(1, 45)))
            for _ in range(draw(st.integers(1, 12)))]
    return make_workload(jobs, nb_res=5)


@pytest.mark.slow
@settings(max_examples=60, deadline=None)
@given(workloads(), st.sampled_from(["fcfs", "spf", "wfp"]))
def test_replies_through_the_protocol_are_always_valid(workload, policy):
    # the engine checks every decoded decision: allocations of exactly `res` free machines,
    # known queued jobs only, kills of running jobs only; any violation raises.
    result = protocol_path(workload, SchedulerConfig(policy=policy))
    assert not result.unfinished
    local, _ = simulate(workload, SchedulerConfig(policy=policy))
    assert result.jobs.equals(local.jobs)


IDEMPOTENT = {"classifier": "rf", "safeguard": "kill", "policy": "spf"}
PROBING = {"classifier": "rf", "safeguard": "kill", "probe_threshold": 0.02, "divider_estimates": "all"}


@pytest.mark.slow
@pytest.mark.parametrize("profile_reuse, options", [(True, IDEMPOTENT), (False, IDEMPOTENT), (True, PROBING)])
def test_served_run_with_the_safeguard_equals_the_in_process_run(profile_reuse, options):
    from batsim_classifier_scheduler.sim.engine import SimulationOptions

    workload = generate(900, weeks=3, nb_res=32, seed=5)
    endpoint = free_endpoint()
    thread, served = serve_in_thread(endpoint, options)
    batsim_flags = SimulationOptions(enable_dynamic_jobs=True, acknowledge_dynamic_jobs=True,
                                     enable_profile_reuse=profile_reuse)
    remote = run_peer(workload, endpoint, options=batsim_flags, timeout=60)
    thread.join(timeout=60)
    assert "error" not in served, served.get("error")
    local, core = simulate(workload, SchedulerConfig(**options))
    assert core.outcome().classifier["kills"] > 0  # the scenario exercises kills and resubmissions
    columns = ["job_id", "starting_time", "finish_time", "final_state", "allocated_resources", "metadata"]
    assert remote.jobs[columns].equals(local.jobs[columns])
    resubmitted = remote.jobs[remote.jobs.job_id.str.contains("#")]
    if profile_reuse:
        assert (resubmitted.profile.str.startswith("delay_")).all()
    else:  # Batsim would have garbage-collected the original profile: a copy was registered
        assert resubmitted.profile.str.contains("_resubmit_").all()


@pytest.mark.slow
def test_the_safeguard_without_dynamic_jobs_fails_at_simulation_begins():
    workload = generate(50, weeks=0.2, nb_res=8, seed=1)
    endpoint = free_endpoint()
    thread, served = serve_in_thread(endpoint, {"classifier": "rf", "safeguard": "kill"})
    with pytest.raises(ProtocolError):
        run_peer(workload, endpoint, timeout=2)
    thread.join(timeout=10)
    assert "--enable-dynamic-jobs" in str(served["error"])


@pytest.mark.slow
def test_serve_exports_what_it_learnt(tmp_path):
    """``serve -e PREFIX`` writes the classifier's and the predictor's reports beside Batsim's output."""
    workload = generate(400, weeks=2, nb_res=16, seed=4)
    endpoint = free_endpoint()
    prefix = tmp_path / "out" / "run"
    outcome = {}
    thread = threading.Thread(target=lambda: outcome.setdefault("code", main(
        ["serve", "-s", endpoint, "--classifier", "rf", "--predictor", "ave2", "--correction", "incremental",
         "--timeout", "60", "-e", str(prefix)])), daemon=True)
    thread.start()
    run_peer(workload, endpoint, timeout=60)
    thread.join(timeout=60)
    assert outcome["code"] == 0
    for name in ("classifier_weeks", "feature_importances", "predictions"):
        assert (tmp_path / "out" / f"run_{name}.csv").stat().st_size > 0
    _, core = simulate(workload, SchedulerConfig(classifier="rf", predictor="ave2", correction="incremental"))
    served = pd.read_csv(tmp_path / "out" / "run_predictions.csv", dtype={"job_id": str})
    pd.testing.assert_frame_equal(served, core.outcome().reports["predictions"], check_dtype=False)
