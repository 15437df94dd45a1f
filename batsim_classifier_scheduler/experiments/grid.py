"""A sweep's configuration: which traces, algorithms, policies, variants and seeds, expanded into runs.

A sweep config is a JSON object (YAML too when PyYAML is installed)::

    {
      "name": "dev-traces",
      "traces": ["KTH-SP2", {"name": "SDSC-SP2", "path": "traces/SDSC-SP2-1998-4.2-cln.swf.gz"}],
      "trace_dirs": ["../../shared/workloads"],
      "policies": ["fcfs", "wfp", "spf", "saf"],
      "variants": ["base", "classification", "classification-idempotent",
                   "class-clairvoyant", "runtimes-clairvoyant"],
      "seeds": [0],
      "tau": 60,
      "options": {"divider": "median"}
    }

``traces``
    Each entry is a string or an object. A string is a trace name of the archive catalogue
    (``python -m batsim_classifier_scheduler fetch-trace --list``) or its file name, or a workload file path (``.swf[.gz]``,
    ``.json[.gz]``, ``.sacct[.gz]`` or any file of sacct output with its header); any other string is
    refused, with the catalogue's names. An object has:

    - ``name``: the label of the trace in results and reports (default: the archive name or
      the file name without its suffixes);
    - ``path``: a local SWF or Batsim JSON file (relative paths are relative to the config
      file's folder);
    - ``archive``: a catalogue name, fetched with ``fetch-trace`` (downloaded once into the
      trace cache) when ``path`` is absent or missing;
    - ``nb_res`` or ``platform`` (a SimGrid XML file): the machine size (default: the paper's
      size for a catalogue trace, else the workload's);
    - ``max_jobs``: keep only the first N jobs (for quick runs);
    - ``options``: scheduling options for this trace only (e.g. ``{"timezone": "Europe/Stockholm"}``);
    - ``sacct``: how a file of Slurm accounting is read (:class:`~batsim_classifier_scheduler.workloads.sacct_fields.SacctOptions`:
      ``fields``, ``submit``, ``unit``, ``partitions``, ``keep_names``; docs/slurm.md).

    An archive trace is first looked for, under its catalogue file name, in ``trace_dirs`` (and
    the ``--trace-dir`` folders of the command line), then in the trace cache, and downloaded
    only when absent from both.
``policies``
    Queue orders (``fcfs``, ``spf``, ``saf``, ``sqf``, ``lpf``, ``wfp``, any other ``--policy`` name or
    plug-in), or ``"all"`` (the six).
``algorithms``
    Optional: scheduling algorithms (``easy``, ``conservative_bf``, ``easy_bf_fast``, ``fcfs``, ``filler``
    or a plug-in), each run under every policy. A run's policy label then names its algorithm when it
    is not EASY (``"conservative_bf fcfs"``; reports show ``CONSERVATIVE-FCFS``). Without it, the
    algorithm comes from ``options`` or the variant (EASY by default) and labels name the policy only.
``variants``
    The paper's variants (:data:`batsim_classifier_scheduler.config.VARIANTS`), or ``"all"``. An entry may also be an
    object ``{"name": "idempotent-paper", "variant": "classification-idempotent", "features": "paper"}``:
    a named variant with its own options on top of a paper variant.
``seeds``
    Integers (default ``[0]``); each seeds the classifier (and any random choice) of a run.
``tau``
    The bounded-slowdown threshold of the summaries (default 60 s).
``options``
    Scheduling options (:class:`batsim_classifier_scheduler.config.SchedulerConfig` fields, e.g. ``divider``,
    ``features``, ``starvation_threshold``) applied to every run.

``docs/sweeps.md`` documents every key for users; a test keeps it and :class:`_SweepFile` in step.

Each run is identified by its directory ``<trace>/<policy>/<variant>/seed<k>`` and by a hash of
everything that determines its results (:attr:`RunSpec.config_hash`).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

import msgspec

from batsim_classifier_scheduler.util.checksums import data_hash
from batsim_classifier_scheduler.config import VARIANTS, SchedulerConfig
from batsim_classifier_scheduler.config.variants import label, preset_reference, resolve
from batsim_classifier_scheduler.core.policies import POLICIES
from batsim_classifier_scheduler.errors import ConfigError
from batsim_classifier_scheduler.experiments.labels import policy_label
from batsim_classifier_scheduler.config.option import positive_seconds
from batsim_classifier_scheduler.registry import canonical
from batsim_classifier_scheduler.util.values import DEFAULT_TAU, MAX_MACHINES
from batsim_classifier_scheduler.workloads.sacct_fields import SacctOptions

#: Bumped when the way a run is executed changes so much that finished runs must be redone.
RUN_FORMAT = 1

_SAFE_NAME = re.compile(r"[^A-Za-z0-9._+-]+")


@dataclass(frozen=True)
class TraceSpec:
    """One trace of a sweep, as written in the config (nothing resolved or read yet)."""

    name: str
    path: str | None = None
    archive: str | None = None
    nb_res: int | None = None
    platform: str | None = None
    max_jobs: int | None = None
    options: dict = field(default_factory=dict)
    sacct: dict | None = None

    def describe(self) -> dict[str, Any]:
        described = {"name": self.name, "path": self.path, "archive": self.archive, "nb_res": self.nb_res,
                     "platform": self.platform, "max_jobs": self.max_jobs, "options": self.options}
        return {**described, "sacct": self.sacct} if self.sacct else described


@dataclass(frozen=True)
class VariantSpec:
    """A named variant: one of :data:`~batsim_classifier_scheduler.config.variants.VARIANTS` or a preset ``FILE.json:NAME``, with options on
    top."""

    name: str
    #: The variant, or the preset (its file's path made absolute), its settings start from.
    base: str
    options: dict = field(default_factory=dict)


@dataclass
class SweepConfig:
    """A parsed sweep config (see the module doc)."""

    name: str
    traces: list[TraceSpec]
    policies: list[str]
    variants: list[VariantSpec]
    seeds: list[int]
    tau: float = DEFAULT_TAU
    options: dict = field(default_factory=dict)
    trace_dirs: list[str] = field(default_factory=list)
    source: str | None = None
    #: The algorithms axis, when the config has one (else the algorithm comes from the options, EASY by default).
    algorithms: list[str] | None = None

    def runs(self) -> list["RunSpec"]:
        """Every run of the grid traces x algorithms x policies x variants x seeds, in that order. With an
        algorithms axis, a run's policy label names its algorithm too when that is not EASY
        (``"conservative_bf fcfs"``)."""
        runs = []
        for trace in self.traces:
            for algorithm in self.algorithms or [None]:
                axis = {} if algorithm is None else {"algorithm": algorithm}
                for policy in self.policies:
                    for variant in self.variants:
                        for seed in self.seeds:
                            options = {**resolve(variant.base), **self.options, **trace.options,
                                       **variant.options, **axis, "policy": policy, "seed": seed}
                            config = SchedulerConfig.from_dict(
                                options, f"{self.source or 'sweep config'}: trace {trace.name}, variant {variant.name}")
                            label = policy if algorithm is None else policy_label(algorithm, policy)
                            runs.append(RunSpec(trace=trace, policy=label, variant=variant.name, seed=seed,
                                                tau=self.tau, config=config.to_dict()))
        return runs


@dataclass
class RunSpec:
    """One simulation of a sweep. ``trace_key`` (the trace's identity: file checksum, size, cut) and
    ``inputs`` (the checksum of each other file the run reads: θ files, a saved classifier) are filled
    in once the files are found; the hash covers them."""

    trace: TraceSpec
    policy: str
    variant: str
    seed: int
    tau: float
    config: dict
    trace_key: dict | None = None
    inputs: dict[str, str] = field(default_factory=dict)

    @property
    def relative_dir(self) -> Path:
        return Path(safe_name(self.trace.name)) / safe_name(self.policy) / safe_name(self.variant) / f"seed{self.seed}"

    @property
    def label(self) -> str:
        return f"{self.trace.name}/{self.policy}/{self.variant}/seed{self.seed}"

    @property
    def config_hash(self) -> str:
        """A hash of everything that determines the run's results."""
        payload = {"format": RUN_FORMAT, "trace": self.trace_key or self.trace.describe(),
                   "config": relevant_options(self.config), "tau": self.tau}
        if self.inputs:
            payload["inputs"] = self.inputs
        return data_hash(payload)

    def cost(self, jobs: int) -> float:
        """A rough relative cost, to start the longest runs first."""
        factor = 3.0 if self.config.get("classifier") == "rf" else 1.0
        if self.policy == "wfp":
            factor *= 1.5
        if self.config.get("algorithm") == "conservative_bf":
            factor *= 4.0  # every waiting job is placed again at each job end (benchmarks/README.md)
        return jobs * factor


#: Options that only matter to a classifier: they do not change a run without one.
CLASSIFIER_OPTIONS = ("divider", "features", "model", "timezone")
#: Options added after runs of :data:`RUN_FORMAT` were made, with the value those runs had: left out
#: of the hash at that value, so that such runs still resume.
LATER_OPTIONS = {"algorithm": "easy", "algorithm_options": None, "policy_options": None, "estimator": "forest",
                 "estimator_options": None, "probe_limit": None, "kill_on": "deadline", "kill_for": "requeued",
                 "train_window": None}


def relevant_options(config: dict) -> dict:
    """The scheduling options that can change a run's results (a run without a classifier ignores the
    classifier's options, so changing them does not make it rerun)."""
    ignored = CLASSIFIER_OPTIONS if config.get("classifier", "none") == "none" else ()
    return {k: v for k, v in config.items()
            if k not in ignored and not (k in LATER_OPTIONS and LATER_OPTIONS[k] == v)}


def safe_name(name: str) -> str:
    """``name`` usable as a single path component."""
    cleaned = _SAFE_NAME.sub("_", str(name)).strip("._")
    return cleaned or "trace"


def trace_label(path: str) -> str:
    """A trace's default name from its file: the catalogue name if it is one, else the file stem."""
    from batsim_classifier_scheduler.workloads.archive import known_machine_size

    known = known_machine_size(Path(path).name)
    if known:
        return known[0]
    name = Path(path).name
    for suffix in (".gz", ".swf", ".json", ".sacct"):
        if name.endswith(suffix):
            name = name[: -len(suffix)]
    return name


def load_config_file(path: str | Path) -> SweepConfig:
    """Read and validate a sweep config file (JSON, or YAML with PyYAML)."""
    path = Path(path)
    try:
        text = path.read_text()
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read the sweep config ({exc.strerror})") from None
    if path.suffix.lower() in (".yaml", ".yml"):
        try:
            import yaml
        except ImportError:
            raise ConfigError(f"{path}: YAML configs need PyYAML (pip install pyyaml); or write it as JSON") from None
        try:
            data = yaml.safe_load(text)
        except yaml.YAMLError as exc:
            raise ConfigError(f"{path}: invalid YAML ({exc})") from None
    else:
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ConfigError(f"{path}: invalid JSON ({exc})") from None
    return parse_config(data, source=str(path), base_dir=path.resolve().parent)


class _TraceEntry(msgspec.Struct, forbid_unknown_fields=True):
    """A trace given as an object (see the module doc)."""

    name: str | None = None
    path: str | None = None
    archive: str | None = None
    nb_res: Annotated[int, msgspec.Meta(gt=0, le=MAX_MACHINES)] | None = None
    platform: str | None = None
    max_jobs: Annotated[int, msgspec.Meta(gt=0)] | None = None
    options: dict[str, Any] = {}
    sacct: SacctOptions | None = None


class _SweepFile(msgspec.Struct, forbid_unknown_fields=True):
    """A sweep config as written (see the module doc): its types; :func:`parse_config` checks the rest.
    A key that takes a list also takes one value; a variant object keeps its free options, so stays a dict."""

    traces: list[str | _TraceEntry] | str | _TraceEntry
    name: str | None = None
    description: str | None = None
    trace_dirs: list[str] | str = []
    policies: list[str] | str = msgspec.field(default_factory=lambda: ["fcfs"])
    algorithms: list[str] | str | None = None
    variants: list[str | dict[str, Any]] | str | dict[str, Any] = msgspec.field(
        default_factory=lambda: ["base"])
    seeds: list[int] | int = msgspec.field(default_factory=lambda: [0])
    tau: float = DEFAULT_TAU
    options: dict[str, Any] = {}


def _read_sweep_file(data: Any, source: str) -> _SweepFile:
    """``data`` checked against :class:`_SweepFile`; a :class:`ConfigError` naming ``source`` and the key."""
    try:
        return msgspec.convert(data, _SweepFile)
    except msgspec.ValidationError as exc:
        message, _, path = str(exc).partition(" - at `$")
        path = path.rstrip("`").lstrip(".")
        where = f"{source}: {path}" if path else source
        unknown = re.fullmatch(r"Object contains unknown field `(.*)`", message)
        if unknown:
            known = msgspec.structs.fields(_TraceEntry if path else _SweepFile)
            raise ConfigError(f"{where}: unknown key {unknown[1]!r}; known: "
                              f"{', '.join(sorted(f.name for f in known))}") from None
        missing = re.fullmatch(r"Object missing required field `(.*)`", message)
        if missing:
            raise ConfigError(f"{where}: missing '{missing[1]}'") from None
        raise ConfigError(f"{source}: '{path}': {message}" if path else f"{source}: {message}") from None


def parse_config(data: Any, source: str = "sweep config", base_dir: str | Path | None = None) -> SweepConfig:
    """Validate a sweep config given as plain data; relative paths are taken from ``base_dir``."""
    sweep = _read_sweep_file(data, source)
    base = Path(base_dir) if base_dir is not None else Path.cwd()
    traces = [_trace(entry, f"{source}: traces[{i}]", base) for i, entry in enumerate(_as_list(sweep.traces))]
    if not traces:
        raise ConfigError(f"{source}: 'traces' is empty")
    names = [t.name for t in traces]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise ConfigError(f"{source}: duplicate trace name(s) {', '.join(duplicates)}; give each a distinct 'name'")

    policies = list(POLICIES) if sweep.policies == "all" else _as_list(sweep.policies)
    policies = [_policy(p, source) for p in policies]
    algorithms = None if sweep.algorithms is None else [_algorithm(a, source) for a in _as_list(sweep.algorithms)]
    variants_data = list(VARIANTS) if sweep.variants == "all" else _as_list(sweep.variants)
    variants = [_variant(v, f"{source}: variants[{i}]", base) for i, v in enumerate(variants_data)]
    seeds = _as_list(sweep.seeds)
    try:
        tau = positive_seconds(sweep.tau)
    except ValueError as exc:
        raise ConfigError(f"{source}: 'tau': {exc}") from None
    axes = {"policy", "seed"} | ({"algorithm"} if algorithms is not None else set())
    forbidden = sorted(axes & {k.replace("-", "_") for k in sweep.options})
    if forbidden:
        raise ConfigError(f"{source}: set {', '.join(forbidden)} with 'algorithms' / 'policies' / 'seeds', "
                          f"not in 'options'")
    trace_dirs = [str(_resolve(d, base)) for d in _as_list(sweep.trace_dirs)]
    for key, values in (("algorithms", algorithms), ("policies", policies), ("variants", variants),
                        ("seeds", seeds)):
        if values is not None and not values:
            raise ConfigError(f"{source}: '{key}' is empty: it would make no run")
    for key, values in (("algorithms", algorithms), ("policies", policies), ("seeds", seeds)):
        if values is not None and len(set(values)) != len(values):
            raise ConfigError(f"{source}: '{key}' lists a value twice")
    if algorithms is not None:
        for variant in variants:
            if "algorithm" in {k.replace("-", "_") for k in variant.options}:
                raise ConfigError(f"{source}: variant {variant.name}: set the algorithm with 'algorithms', "
                                  f"not in a variant")
    if len({v.name for v in variants}) != len(variants):
        raise ConfigError(f"{source}: 'variants' lists a name twice")
    config = SweepConfig(name=sweep.name or Path(source).stem, traces=traces, policies=policies,
                         variants=variants, seeds=seeds, tau=tau, options=dict(sweep.options),
                         trace_dirs=trace_dirs, source=source, algorithms=algorithms)
    config.runs()  # validates every combination's scheduling options now, not in the workers
    return config


def _as_list(value: Any) -> list:
    return value if isinstance(value, list) else [value]


def _resolve(path: str, base: Path) -> Path:
    p = Path(path).expanduser()
    return p if p.is_absolute() else (base / p).resolve()


def _trace(entry: str | _TraceEntry, where: str, base: Path) -> TraceSpec:
    from batsim_classifier_scheduler.workloads import JSON_SUFFIXES, SACCT_SUFFIXES, SWF_SUFFIXES
    from batsim_classifier_scheduler.workloads.archive import TRACES, lookup_trace
    from batsim_classifier_scheduler.workloads.sacct_fields import first_line, looks_like_header

    if isinstance(entry, str):
        known = lookup_trace(entry) if not _resolve(entry, base).exists() else None
        if (known is None and not entry.lower().endswith(SWF_SUFFIXES + JSON_SUFFIXES + SACCT_SUFFIXES)
                and not looks_like_header(first_line(_resolve(entry, base)))):
            raise ConfigError(f"{where}: {entry!r} is neither a trace name nor a workload file (.swf[.gz], "
                              f".json[.gz], sacct output); known traces: {', '.join(TRACES)}")
        entry = _TraceEntry(archive=known.name) if known else _TraceEntry(path=entry)
    path, archive = entry.path, entry.archive
    if not path and not archive:
        raise ConfigError(f"{where}: give a 'path' or an 'archive' trace name")
    if archive:
        from batsim_classifier_scheduler.workloads.archive import find_trace

        try:
            archive = find_trace(archive).name
        except Exception as exc:  # WorkloadError: unknown trace name
            raise ConfigError(f"{where}: {exc}") from None
    if entry.nb_res is not None and entry.platform:
        raise ConfigError(f"{where}: give 'nb_res' or 'platform', not both")
    name = entry.name or archive or trace_label(path)
    return TraceSpec(name=name, path=str(_resolve(path, base)) if path else None, archive=archive,
                     nb_res=entry.nb_res, platform=str(_resolve(entry.platform, base)) if entry.platform else None,
                     max_jobs=entry.max_jobs, options=dict(entry.options),
                     sacct=msgspec.json.decode(msgspec.json.encode(entry.sacct)) if entry.sacct else None)


def _algorithm(name: str, source: str) -> str:
    try:
        return canonical("algorithm", name)
    except ConfigError as exc:
        raise ConfigError(f"{source}: {exc}") from None


def _policy(name: str, source: str) -> str:
    try:
        return canonical("policy", name)
    except ConfigError as exc:
        raise ConfigError(f"{source}: {exc}") from None


def _variant(entry: str | dict[str, Any], where: str, folder: Path) -> VariantSpec:
    """A sweep's variant: a name (a variant, or a preset ``FILE.json:NAME``, its path relative to the sweep's
    file), or an object ``{"name": ..., "variant": ..., OPTION: VALUE...}``."""
    if isinstance(entry, str):
        base = _variant_base(entry, where, folder)
        return VariantSpec(label(entry), base)
    if "name" not in entry:
        raise ConfigError(f"{where}: expected a variant name or an object with a 'name'")
    options = {k: v for k, v in entry.items() if k not in ("name", "variant")}
    base = _variant_base(entry.get("variant", "base"), where, folder)
    forbidden = sorted({"policy", "seed"} & {k.replace("-", "_") for k in options})
    if forbidden:
        raise ConfigError(f"{where}: set {', '.join(forbidden)} with 'policies' / 'seeds'")
    return VariantSpec(str(entry["name"]), base, options)


def _variant_base(name: str, where: str, folder: Path) -> str:
    """A variant's name, or a preset's with its file's path made absolute; checked."""
    reference = preset_reference(str(name))
    if reference is not None:
        name = f"{(folder / reference[0]).resolve()}:{reference[1]}"
    try:
        resolve(name)
    except ConfigError as exc:
        raise ConfigError(f"{where}: {exc}") from None
    return name
