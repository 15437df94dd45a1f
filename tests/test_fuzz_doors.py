"""Property-based fuzzing of the three input doors with generated inputs (issue 23): SWF traces, Batsim JSON
workloads and ``serve``'s message streams. Whatever comes in, a command ends with a valid result or with one
clear line and a non-zero exit: never a traceback, never a hang, never exit 0 with corrupt output.

Values are drawn from what breaks programs: huge, negative, NaN and infinite numbers, text where numbers are
expected, missing and extra fields, wrong types; mostly around valid inputs, so that the runs go deep.

``SCHEDULER_FUZZ_EXAMPLES`` sets the examples per door (80 by default, as in CI: the suite stays under 90 s on 2 cores); for a longer search::

    SCHEDULER_FUZZ_EXAMPLES=20000 .venv/bin/python -m pytest tests/test_fuzz_doors.py -p no:randomly
"""

from __future__ import annotations

import contextlib
import copy
import gzip
import itertools
import json
import math
import os
import re
import signal
from pathlib import Path

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from batsim_classifier_scheduler.batsim import BatsimCodec
from batsim_classifier_scheduler.batsim.server import error_text
from batsim_classifier_scheduler.cli import main
from batsim_classifier_scheduler.errors import SchedulerError
from batsim_classifier_scheduler.sim.batsim_files import read_jobs_csv
from batsim_classifier_scheduler.util.values import MAX_SECONDS
from batsim_classifier_scheduler.workloads import read_batsim_json

from tests.helpers import serve_in_process

EXAMPLES = int(os.environ.get("SCHEDULER_FUZZ_EXAMPLES", "80"))
FUZZ = settings(max_examples=EXAMPLES, deadline=None, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                       HealthCheck.function_scoped_fixture])
#: Seconds one example may take before it counts as a hang.
HANG = 20


@contextlib.contextmanager
def no_hang(seconds: int = HANG):
    """Fail (rather than wait forever) when the body takes more than ``seconds``."""
    def stop(signum, frame):
        raise AssertionError(f"hung for more than {seconds} s")

    previous = signal.signal(signal.SIGALRM, stop)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def run_command(argv: list[str], capsys) -> tuple[int, str]:
    """``python -m batsim_classifier_scheduler ARGV`` in process: its exit code and standard error. Anything but a
    SchedulerError (shown as one line) escapes as a traceback would, and fails the test."""
    capsys.readouterr()
    with no_hang():
        code = main(argv)
    return code, capsys.readouterr().err


def assert_one_line(code: int, err: str) -> None:
    assert code != 0
    assert err.startswith("error: ") and err.count("\n") == 1, err
    event("refused: " + re.sub(r"\S*/\S*|\d+", "_", err.removeprefix("error: "))[:50])


# --- values ---------------------------------------------------------------------------------

HUGE = st.sampled_from([2 ** 53 + 1, 10 ** 20, 10 ** 30, 99999999999999999999999999, 2 ** 63, 2 ** 64])
TEXT = st.sampled_from(["nan", "NaN", "inf", "-inf", "Infinity", "1e400", "-1e400", "12x", "0x10", "--1", "1e",
                        ".", "+", "1,5", "١٢"])


ANY_TOKEN = st.one_of(
    st.integers(-5, 10 ** 6).map(str), HUGE.map(str), HUGE.map(lambda v: f"-{v}"), TEXT,
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.sampled_from(["1e300", "-1e300", "1e17", "8589934593", "8589934592", "16777217", "-1", "-2", "0", "0.5",
                     "-0.0", ""]))
#: A plausible value of each of the 18 SWF fields.
SWF_FIELDS = [
    st.integers(1, 50), st.integers(0, 5000), st.integers(-1, 100), st.integers(-1, 4000), st.integers(-1, 8),
    st.just(-1), st.just(-1), st.integers(-1, 8), st.integers(-1, 5000), st.just(-1), st.integers(-1, 1),
    st.integers(1, 5), st.integers(1, 3), st.integers(-1, 4), st.integers(1, 2), st.integers(1, 2), st.just(-1),
    st.just(-1),
]
HEADERS = {"MaxProcs": st.integers(4, 32).map(str), "UnixStartTime": st.integers(0, 2 ** 31).map(str),
           "TimeZone": st.integers(-36000, 36000).map(str),
           "TimeZoneString": st.sampled_from(["Europe/Stockholm", "UTC", "America/Los_Angeles"])}
BAD_HEADERS = st.one_of(HUGE.map(str), TEXT, st.sampled_from(["0", "-3", "Mars/Olympus", "../etc", ""]))


def corruptions(draw) -> int:
    """How many values an example spoils: none in a third of the examples, so that runs go deep."""
    return draw(st.sampled_from([0, 0, 1, 1, 2, 3]))


@st.composite
def swf_texts(draw) -> str:
    """A valid SWF trace (header and job lines), then a few of its values spoilt."""
    header = {key: draw(value) for key, value in HEADERS.items() if draw(st.booleans())}
    lines = [[str(draw(field)) for field in SWF_FIELDS] for _ in range(draw(st.integers(1, 8)))]
    for _ in range(corruptions(draw)):
        where = draw(st.sampled_from(["field", "field", "field", "header", "length"]))
        if where == "header":
            header[draw(st.sampled_from(sorted(HEADERS)))] = draw(BAD_HEADERS)
        elif where == "length":
            line = draw(st.sampled_from(lines))
            if draw(st.booleans()):
                del line[draw(st.integers(0, len(line) - 1))]
            else:
                line.append("1")
        else:
            line = draw(st.sampled_from(lines))
            line[draw(st.integers(0, len(line) - 1))] = draw(ANY_TOKEN)
    text = [f"; {key}: {value}" for key, value in header.items()] + [" ".join(line) for line in lines]
    return "\n".join(text) + "\n"


def check_workload_file(path: Path) -> None:
    """A workload a command wrote must read back, with times and sizes in range."""
    workload = read_batsim_json(path)
    for column in ("subtime", "runtime"):
        assert all(0 <= value <= MAX_SECONDS for value in workload.column(column)), column
    assert all(value == -1 or 0 < value <= MAX_SECONDS for value in workload.column("walltime"))
    assert all(1 <= value <= workload.nb_res for value in workload.column("res"))


def check_run(prefix: Path, jobs: int) -> None:
    """A run a command finished must have left readable, finite, complete results."""
    table = read_jobs_csv(f"{prefix}_jobs.csv")
    assert len(set(table["job_id"].str.partition("#")[0])) == jobs
    ran = table[table["final_state"] != "REJECTED"]
    for column in ("submission_time", "starting_time", "finish_time", "execution_time"):
        assert ran[column].map(math.isfinite).all(), column
        assert (ran[column] >= 0).all() and (ran[column] <= 4 * MAX_SECONDS).all(), column
    summary = json.loads(Path(f"{prefix}_summary.json").read_text())
    assert summary["workload"]["jobs"] == jobs
    metrics = summary["metrics"]
    assert all(value is None or math.isfinite(value) for value in metrics.values() if isinstance(value, float))


# --- door 1: SWF traces -----------------------------------------------------------------------

@pytest.mark.slow
@FUZZ
@given(text=swf_texts(), packing=st.sampled_from(["plain"] * 6 + ["gzip"] * 2 + ["gzip name, plain data", "truncated gzip"]),
       command=st.sampled_from(["simulate", "simulate", "convert", "simulate --skip-bad-lines",
                                "simulate --variant class-clairvoyant"]))
@pytest.mark.filterwarnings("error::RuntimeWarning")
def test_any_swf_trace_gives_a_result_or_one_line(text, packing, command, tmp_path, capsys):
    name = "t.swf" if packing == "plain" else "t.swf.gz"
    data = text.encode("latin-1", errors="replace")
    if packing in ("gzip", "truncated gzip"):
        data = gzip.compress(data)
        data = data[: len(data) // 2] if packing == "truncated gzip" else data
    folder = tmp_path / f"case{next(CASES)}"
    folder.mkdir()
    trace = folder / name
    trace.write_bytes(data)
    verb, *options = command.split()
    target = folder / ("w.json" if verb == "convert" else "run")
    argv = [verb, str(trace), "-o" if verb == "convert" else "-e", str(target), *options]
    code, err = run_command(argv + ([] if verb == "convert" else ["--no-progress"]), capsys)
    if code:
        assert_one_line(code, err)
        return
    event(f"{verb}: done")
    if verb == "convert":
        check_workload_file(target)
    else:
        check_run(target, json.loads(Path(f"{target}_summary.json").read_text())["workload"]["jobs"])


CASES = itertools.count()


# --- door 2: Batsim JSON workloads ------------------------------------------------------------

JSON_ANYTHING = st.one_of(
    st.none(), st.booleans(), st.integers(-10, 10), HUGE, HUGE.map(lambda v: -v),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([0, -1, 1e300, 8589934593, "10", "", "a,b", 'q"t', "w0!1", "x\ny", "delay", "-1", "spf"]),
    st.builds(list), st.builds(dict), st.builds(lambda: [1, 2]))  # a new container each time: no cycles


def slots(value, found: list) -> list:
    """Every (container, key) inside a JSON value: the places a value can be spoilt."""
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, child in items:
        found.append((value, key))
        slots(child, found)
    return found


def spoil(draw, document) -> None:
    """Replace, delete or add a few values anywhere in ``document`` (a JSON value, changed in place)."""
    for _ in range(corruptions(draw)):
        places = slots(document, [])
        if not places:
            return
        container, key = draw(st.sampled_from(places))
        action = draw(st.sampled_from(["replace", "replace", "delete", "add"]))
        if action == "delete" and isinstance(container, dict):
            del container[key]
        elif action == "add" and isinstance(container, dict):
            container[draw(st.sampled_from(["extra", "id", "type", "res", "now", "nb_res", "delay", "user",
                                            "unix_submit_time", "requested_procs"]))] = \
                draw(JSON_ANYTHING)
        else:
            container[key] = draw(JSON_ANYTHING)


@st.composite
def json_workloads(draw) -> str:
    """A valid Batsim workload, then a few of its values spoilt (sometimes the text cut short)."""
    nb_res = draw(st.integers(1, 16))
    delays = draw(st.lists(st.integers(0, 3000), min_size=1, max_size=3, unique=True))
    jobs = [{"id": draw(st.sampled_from([index, f"j{index}"])), "subtime": draw(st.integers(0, 20000)),
             "res": draw(st.integers(1, nb_res)), "walltime": draw(st.sampled_from([-1, 60, 600, 5000])),
             "profile": f"delay_{draw(st.sampled_from(delays))}", "user": draw(st.integers(1, 4))}
            for index in range(draw(st.integers(1, 8)))]
    document = {"nb_res": nb_res, "jobs": jobs,
                "profiles": {f"delay_{d}": {"type": "delay", "delay": d} for d in delays}}
    if draw(st.booleans()):
        document["UnixStartTime"] = draw(st.integers(0, 2 ** 31))
    spoil(draw, document)
    text = json.dumps(document)  # NaN and Infinity as Python writes them
    if draw(st.integers(0, 19)) == 0:
        text = text[: draw(st.integers(0, len(text)))]
    return text


@pytest.mark.slow
@FUZZ
@given(text=json_workloads(), options=st.sampled_from([[], [], ["--policy", "spf"], ["--variant", "class-clairvoyant"],
                                                      ["--nb-res", "4"], ["--algorithm", "fcfs"]]))
@pytest.mark.filterwarnings("error::RuntimeWarning")
def test_any_json_workload_gives_a_result_or_one_line(text, options, tmp_path, capsys):
    folder = tmp_path / f"case{next(CASES)}"
    folder.mkdir()
    path = folder / "w.json"
    path.write_text(text)
    code, err = run_command(["simulate", str(path), "-e", str(folder / "run"), "--no-progress", *options], capsys)
    if code:
        assert_one_line(code, err)
        return
    event("simulate: done")
    check_run(folder / "run", len(json.loads(text)["jobs"]))


# --- door 3: serve's message streams ------------------------------------------------------------


@st.composite
def message_streams(draw) -> list[bytes]:
    """What Batsim sends for a small valid workload whose jobs all fit on the machine at once (so each starts
    when submitted, whatever the policy, and its completion is valid), then a few values, messages or bytes
    spoilt."""
    nb = draw(st.integers(1, 8))
    count = draw(st.integers(1, nb))
    times = sorted(draw(st.lists(st.integers(0, 100), min_size=count, max_size=count)))
    timeline: list[tuple[float, int, dict]] = []  # (time, order, event)
    for i, submitted in enumerate(times):
        runtime = draw(st.integers(1, 50))
        job = {"id": i, "subtime": submitted, "res": 1, "walltime": draw(st.sampled_from([runtime + 5, 1000])),
               "profile": "d", "user": draw(st.integers(1, 3))}
        timeline.append((submitted, 1, {"type": "JOB_SUBMITTED", "data": {"job_id": f"w0!{i}", "job": job}}))
        timeline.append((submitted + runtime, 0, {"type": "JOB_COMPLETED", "data": {
            "job_id": f"w0!{i}", "job_state": "COMPLETED_SUCCESSFULLY", "return_code": 0}}))
    timeline.append((times[-1], 2, {"type": "NOTIFY", "data": {"type": "no_more_static_job_to_submit"}}))
    if draw(st.booleans()):
        timeline.append((draw(st.integers(0, 100)), 3, {"type": "QUERY", "data": {"requests": {
            "estimate_waiting_time": {"job_id": "w0!q", "job": {"res": 1, "walltime": 10}}}}}))
    timeline.sort(key=lambda item: item[:2])
    messages = [{"now": 0.0, "events": [{"timestamp": 0.0, "type": "SIMULATION_BEGINS", "data": {
        "nb_resources": nb, "nb_compute_resources": nb, "config": {"dynamic-jobs-enabled": False, "sched-config": ""},
        "profiles": {"w0": {"d": {"type": "delay", "delay": 10}}}, "workloads": {"w0": "w.json"}}}]}]
    for when, group in itertools.groupby(timeline, key=lambda item: item[0]):
        messages.append({"now": float(when), "events": [{"timestamp": float(when), **event} for _, _, event in group]})
    end = messages[-1]["now"]
    messages.append({"now": end, "events": [{"timestamp": end, "type": "SIMULATION_ENDS", "data": {}}]})
    spoil(draw, messages)
    for _ in range(draw(st.sampled_from([0, 0, 0, 1]))):
        i, j = draw(st.integers(0, len(messages) - 1)), draw(st.integers(0, len(messages) - 1))
        action = draw(st.sampled_from(["drop", "duplicate", "swap"]))
        if action == "drop" and len(messages) > 1:
            del messages[i]
        elif action == "duplicate":
            messages.insert(i, copy.deepcopy(messages[i]))
        else:
            messages[i], messages[j] = messages[j], messages[i]
    encoded = [json.dumps(message).encode() for message in messages]
    if draw(st.integers(0, 9)) == 0:
        i = draw(st.integers(0, len(encoded) - 1))
        at = draw(st.integers(0, len(encoded[i])))
        encoded[i] = encoded[i][:at] + draw(st.binary(max_size=3)) + encoded[i][at + draw(st.integers(0, 2)):]
    return encoded


@pytest.mark.slow
@FUZZ
@given(messages=message_streams(), options=st.sampled_from([{}, {"policy": "spf"}, {"classifier": "oracle"},
                                                             {"classifier": "rf"}, {"predictor": "ave2"}]))
def test_any_message_stream_gets_valid_replies_or_one_error(messages, options):
    with no_hang():
        replies, error = serve_in_process(messages, options)
    codec = BatsimCodec(profiles={"w0": {"d": {"type": "delay", "delay": 10}}}, workloads={"w0": "w.json"})
    event(f"replies: {len(replies)}; " + (f"error: {str(error)[:50]}" if error else "ended"))
    if error is not None:
        text = str(error)
        assert text and "\n" not in text
        if not text.startswith("no message from Batsim") and not text.startswith("no Batsim connected"):
            last = json.loads(replies.pop())
            assert last["events"] == [{"timestamp": last["now"], "type": "NOTIFY",
                                       "data": {"type": error_text(error)}}]
    else:
        assert b"SIMULATION_ENDS" in messages[len(replies) - 1]
    for reply in replies:
        codec.decode(reply)  # a reply real Batsim would refuse raises ProtocolError


# --- what the fuzzer found, kept as plain tests -------------------------------------------------------

def test_an_id_with_a_newline_is_refused_on_one_line(tmp_path, capsys):
    path = tmp_path / "w.json"
    path.write_text('{"nb_res": 1, "jobs": [{"id": "x\\ny", "subtime": 0, "res": 1, "profile": "d"}], '
                    '"profiles": {"d": {"type": "delay", "delay": 0}}}')
    code, err = run_command(["simulate", str(path)], capsys)
    assert code == 1 and err == (f"error: {path}: job #0 (id 'x\\ny') has an invalid 'id': 'x\\ny' (expected a string "
                                 "or an integer, not empty and without a comma, a double quote, '!' or a control "
                                 "character)\n")


def test_an_error_message_is_one_line_whatever_the_input_holds():
    assert str(SchedulerError("Batsim message 3: 'event.type': Invalid value 'x\ny'\t")) == \
        "Batsim message 3: 'event.type': Invalid value 'x\\ny'\\t"


def test_a_user_that_is_no_name_does_not_break_the_predictor():
    from batsim_classifier_scheduler.core.job import Job
    from batsim_classifier_scheduler.knowledge.predictors import Ave2Predictor, user_of

    job = Job("w0!1", 0.0, 1, 100.0, "d", 10.0, {"user": []})
    assert user_of(job) == "[]"
    assert Ave2Predictor().predict(job, 0.0) == 100.0
