"""Shared helpers for the benchmarks: paths, repeated timing, subprocess wall time and peak
memory, a fixed CPU calibration loop, and Markdown tables.

Every benchmark reports its figures as ratios against a baseline measured in the same run:
single timings on shared machines are noise, ratios are much less so.
"""

from __future__ import annotations

import json
import os
import platform
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

#: The repository root (the folder that holds ``batsim_classifier_scheduler/``).
REPO = Path(__file__).resolve().parents[1]
#: The team's shared data beside the checkout; it may be absent.
SHARED = Path(__file__).resolve().parents[2] / "shared"

if str(REPO) not in sys.path:  # run as `python benchmarks/bench_x.py` without installing
    sys.path.insert(0, str(REPO))


def shared_path(*parts: str) -> Path | None:
    """``SHARED/parts``, or None if it is not there."""
    path = SHARED.joinpath(*parts)
    return path if path.exists() else None


def require_shared(*relative: str) -> list[Path]:
    """The shared files ``relative`` (paths under ``SHARED``); exits cleanly (status 0) with a
    message naming the first missing one."""
    paths = []
    for rel in relative:
        path = SHARED / rel
        if not path.exists():
            print(f"skipped: {path} is not there (the benchmark reads the team's shared data "
                  f"beside the checkout)")
            sys.exit(0)
        paths.append(path)
    return paths


# --- timing ------------------------------------------------------------------------


@dataclass
class Timing:
    """Repeated measurements of one thing (seconds, or any unit)."""

    values: list[float]

    @property
    def best(self) -> float:
        return min(self.values)

    @property
    def median(self) -> float:
        return statistics.median(self.values)


def repeat(function: Callable[[], object], times: int) -> tuple[Timing, object]:
    """Call ``function`` ``times`` times; its wall times and its last result."""
    values = []
    result = None
    for _ in range(times):
        started = time.perf_counter()
        result = function()
        values.append(time.perf_counter() - started)
    return Timing(values), result


def calibration_loop(n: int = 3_000_000) -> float:
    """A fixed pure-Python CPU loop (integer arithmetic, a dict and a list); its wall time.

    It measures how fast this interpreter runs on this machine right now, so that results
    can be compared across machines and runs as ratios to it.
    """
    started = time.perf_counter()
    table: dict[int, int] = {}
    items: list[int] = []
    total = 0
    for i in range(n):
        total += (i * 7919) % 104_729
        if i & 1023 == 0:
            table[i] = total
            items.append(total)
    items.sort()
    assert total > 0 and len(table) == len(items)
    return time.perf_counter() - started


# --- subprocesses ------------------------------------------------------------------


def child_env(root: Path = REPO, bytecode: Path | None = None) -> dict[str, str]:
    """The environment for a child Python: the checkout at ``root`` (this one) first on ``PYTHONPATH``.

    With ``bytecode``, the child keeps the modules it compiles in that folder (``PYTHONPYCACHEPREFIX``),
    even where ``PYTHONDONTWRITEBYTECODE`` is set: from its second run on, it starts as an installed
    package does (pip compiles a package's modules when it installs it), not recompiling every module
    of the checkout at each start.
    """
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(root), env.get("PYTHONPATH", "")]))
    env.setdefault("PYTHONHASHSEED", "0")
    if bytecode is not None:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = str(bytecode)
    return env


@dataclass
class ChildRun:
    wall: float  # seconds, from spawn to exit
    max_rss_mb: float  # this child's peak resident set size, MiB
    cpu: float  # user + system CPU seconds of this child
    stdout: str = ""


#: Runs a command and writes its exit code, wall time, peak RSS (KiB) and CPU time into a file.
#: A process's ``ru_maxrss`` starts at its parent's RSS when it is spawned (Linux carries the
#: pre-exec high-water mark over), so a big parent would inflate it: this small one spawns it.
_LAUNCHER = """
import json, os, subprocess, sys, time
started = time.perf_counter()
child = subprocess.Popen(sys.argv[2:])
_, status, usage = os.wait4(child.pid, 0)
with open(sys.argv[1], "w") as report:
    json.dump([os.waitstatus_to_exitcode(status), time.perf_counter() - started, usage.ru_maxrss,
               usage.ru_utime + usage.ru_stime], report)
"""


class MeasuredChild:
    """``argv`` running in a fresh process; :meth:`wait` gives its own wall time, peak memory and
    CPU time (``os.wait4`` on its pid, not the running maximum of ``RUSAGE_CHILDREN``)."""

    def __init__(self, argv: Sequence[str], cwd: Path | None = None, env: dict[str, str] | None = None,
                 **popen: object) -> None:
        self._report = Path(tempfile.mkstemp(prefix="bench_child_")[1])
        self.argv = list(map(str, argv))
        self.process = subprocess.Popen([sys.executable, "-c", _LAUNCHER, str(self._report), *self.argv],
                                        cwd=cwd, env=env or child_env(), start_new_session=True, **popen)

    def wait(self) -> tuple[int, ChildRun]:
        """The exit code and the measurements (stdout left empty)."""
        self.process.wait()
        try:
            code, wall, rss_kib, cpu = json.loads(self._report.read_text())
        finally:
            self._report.unlink()
        if sys.platform == "darwin":
            rss_kib /= 1024
        return code, ChildRun(wall, rss_kib / 1024, cpu)

    def kill(self) -> None:
        """Stop the command and its launcher."""
        os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait()
        self._report.unlink(missing_ok=True)


def run_child(argv: Sequence[str], cwd: Path | None = None, env: dict[str, str] | None = None,
              stderr: bool = False) -> ChildRun:
    """Run ``argv`` as a fresh subprocess; its wall time, peak memory, CPU time and output (its
    standard error after its standard output with ``stderr``)."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        code, run = MeasuredChild(argv, cwd=cwd, env=env, stdout=out, stderr=err).wait()
        if code != 0:
            err.seek(0)
            raise RuntimeError(f"{' '.join(map(str, argv))} failed with status {code}:\n"
                               f"{err.read().decode(errors='replace')[-2000:]}")
        out.seek(0)
        run.stdout = out.read().decode(errors="replace")
        if stderr:
            err.seek(0)
            run.stdout += err.read().decode(errors="replace")
    return run


def interleaved_children(commands: dict[str, list[str]], rounds: int,
                         bytecode: Path) -> tuple[dict[str, Timing], dict[str, float], Timing]:
    """Each command once per round, in order, ``rounds`` times (a slow spell of the machine hits all alike),
    each a fresh process keeping its bytecode in ``bytecode``: the wall :class:`Timing` of each, its best CPU
    time, and the calibration loop timed before each round."""
    walls: dict[str, list[float]] = {name: [] for name in commands}
    cpus: dict[str, list[float]] = {name: [] for name in commands}
    calibration = []
    for _ in range(rounds):
        calibration.append(calibration_loop())
        for name, command in commands.items():
            child = run_child(command, cwd=REPO, env=child_env(bytecode=bytecode))
            walls[name].append(child.wall)
            cpus[name].append(child.cpu)
    return ({name: Timing(values) for name, values in walls.items()},
            {name: min(values) for name, values in cpus.items()}, Timing(calibration))


def synthetic_trace(jobs: int, folder: Path):
    """``generate(jobs, weeks=jobs / 1000, nb_res=128, seed=1)`` written to ``folder/synthetic.json``: the
    file and the workload."""
    from batsim_classifier_scheduler.workloads.batsim_json import write_batsim_json
    from batsim_classifier_scheduler.workloads.synthetic import generate

    workload = generate(jobs, weeks=jobs / 1000, nb_res=128, seed=1)
    return write_batsim_json(workload, folder / "synthetic.json"), workload


# --- a baseline revision -------------------------------------------------------------


def export_revision(revision: str, folder: Path) -> Path:
    """The files of ``revision`` of this repository, written into ``folder`` (run them with
    ``child_env(folder)``, which puts that folder first on ``PYTHONPATH``)."""
    archive = subprocess.run(["git", "archive", revision], cwd=REPO, capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(folder)], input=archive, check=True)
    if (folder / "scheduler").is_dir() and not (folder / PACKAGE).exists():
        alias_package(folder)
    return folder


#: This checkout's import package; revisions before its rename named it ``batsim_classifier_scheduler``.
PACKAGE = "batsim_classifier_scheduler"


def alias_package(folder: Path) -> None:
    """A revision whose package is ``batsim_classifier_scheduler`` answers to this checkout's package name too, so that the same
    commands (``python -m PACKAGE ...``, ``from PACKAGE.cli import main``) run both: the alias is that package."""
    alias = folder / PACKAGE
    alias.mkdir()
    (alias / "__init__.py").write_text("import importlib\nimport sys\n\n"
                                       "sys.modules[__name__] = importlib.import_module('scheduler')\n")


def add_baselines_option(parser) -> None:
    """``--baseline REV`` (repeatable; the first is the ratios' base), for :func:`revision_roots`."""
    parser.add_argument("--baseline", action="append", default=[], help="a git revision to compare with "
                        "(repeatable; the first is the ratios' base)")


def revision_roots(revisions: Sequence[str], folder: Path) -> dict[str, Path]:
    """This checkout, then each of ``revisions`` exported into its own subfolder of ``folder``: label -> root."""
    roots = {"this checkout": REPO}
    for number, revision in enumerate(revisions):
        (folder / f"rev{number}").mkdir()
        roots[revision] = export_revision(revision, folder / f"rev{number}")
    return roots


def absolute_arguments(arguments: Sequence[str]) -> list[str]:
    """Command-line arguments with the paths of this checkout made absolute (each revision runs from its own folder)."""
    return [str((REPO / argument).resolve()) if (REPO / argument).exists() else argument for argument in arguments]


def top_level_imports(log: str) -> dict[str, float]:
    """The seconds each top-level import took (``python -X importtime``'s cumulative column), from a
    process's standard error; their sum is the process's import time."""
    times = {}
    for line in log.splitlines():
        if line.startswith("import time:") and not line.endswith("imported package"):
            _, cumulative, name = line.split("|")
            if not name.startswith("  "):  # one space after the bar: imported by the program itself
                times[name.strip()] = int(cumulative) / 1e6
    return times


# --- reporting ---------------------------------------------------------------------


def markdown_table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """A Markdown table; numbers should already be formatted as strings."""
    cells = [[str(c) for c in headers]] + [[str(c) for c in row] for row in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]
    lines = ["| " + " | ".join(c.ljust(w) for c, w in zip(row, widths)) + " |" for row in cells]
    lines.insert(1, "|" + "|".join("-" * (w + 2) for w in widths) + "|")
    return "\n".join(lines)


def machine_line() -> str:
    """One line that says where the figures come from."""
    return (f"Python {platform.python_version()} ({platform.python_implementation()}), "
            f"{platform.system()} {platform.machine()}, {os.cpu_count()} CPUs")


def seconds(value: float) -> str:
    return f"{value:.3f} s" if value < 10 else f"{value:.1f} s"


def ratio(value: float, base: float) -> str:
    return f"{value / base:.2f}x"


# --- one simulation, measured ----------------------------------------------------------


def measured_simulation(workload, config, nb_machines: int) -> tuple[dict[str, float], object]:
    """Simulate ``workload``; its wall and CPU seconds, the decision core's share, the message
    count, and the result.

    CPU time (``time.process_time``) is what the ratios should use on a shared machine: other
    processes competing for the cores stretch the wall time, much less this process's CPU time.
    """
    from batsim_classifier_scheduler.sim.simulate import simulate

    wall, cpu = time.perf_counter(), time.process_time()
    result, _core = simulate(workload, config, nb_machines)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    return {"wall": wall, "cpu": cpu, "decisions": result.scheduling_time / wall,
            "messages": result.nb_messages, "jobs": len(workload)}, result


def python_child(script: Path, *arguments: object) -> tuple[dict, ChildRun]:
    """Run ``python script arguments...`` in a fresh process; the JSON object it prints last,
    and the child's own wall time and peak memory."""
    child = run_child([sys.executable, str(script), *map(str, arguments)], cwd=REPO)
    return json.loads(child.stdout.strip().splitlines()[-1]), child
