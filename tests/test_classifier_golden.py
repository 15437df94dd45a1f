"""The classifier's decisions, pinned: whole simulations give the recorded ``_jobs.csv`` and predictions.

For the shipped sample workload and a seeded synthetic one, each classifier variant under FCFS and SPF:
the ``_jobs.csv`` text must have the recorded SHA-256, and the classifier's predictions table (job,
week, class, P(small), divider...) must equal the recorded one, byte for byte. Rewrites of the
classifier that should not change what it decides are checked against them.

The recorded files are under ``tests/data/classifier_golden/`` (generated from our own synthetic
workloads only). After a change that is *meant* to change the decisions, regenerate them with
``python tests/test_classifier_golden.py`` and say so in the commit message.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import sys
import tempfile
from functools import lru_cache
from pathlib import Path

import pytest

if __name__ == "__main__":  # run as a script from the checkout
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from batsim_classifier_scheduler.config import SchedulerConfig
from batsim_classifier_scheduler.sim.batsim_files import write_jobs_csv
from batsim_classifier_scheduler.sim.simulate import simulate
from batsim_classifier_scheduler.workloads.batsim_json import read_batsim_json
from batsim_classifier_scheduler.workloads.synthetic import generate
from tests.helpers import DATA, REPO, named

GOLDEN = DATA / "classifier_golden"
MANIFEST = GOLDEN / "manifest.json"
WORKLOADS = ("sample", "synthetic")
VARIANTS = ("classification", "classification-idempotent", "classification-probing", "class-clairvoyant")
POLICIES = ("fcfs", "spf")
CASES = [(w, v, p) for w in WORKLOADS for v in VARIANTS for p in POLICIES]


@lru_cache(maxsize=None)
def workload(name: str):
    if name == "sample":
        return read_batsim_json(REPO / "workloads" / "sample.json")
    return generate(2000, weeks=4, nb_res=64, seed=7, load=0.85)


def case_name(case: tuple[str, str, str]) -> str:
    return "_".join(case)


def outputs(case: tuple[str, str, str]) -> tuple[str, str]:
    """The ``_jobs.csv`` text and the predictions table (CSV) of one simulation."""
    name, variant, policy = case
    result, core = simulate(workload(name), SchedulerConfig.variant(named(variant), policy=policy))
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "jobs.csv"
        write_jobs_csv(path, result.jobs)
        jobs = path.read_text(encoding="utf-8")
    return jobs, core.outcome().model.predictions().to_csv(index=False, lineterminator="\n")


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


@pytest.mark.slow
@pytest.mark.parametrize("case", CASES, ids=case_name)
def test_the_classifier_decides_as_recorded(case):
    jobs, predictions = outputs(case)
    recorded = json.loads(MANIFEST.read_text())[case_name(case)]
    with gzip.open(GOLDEN / f"{case_name(case)}_predictions.csv.gz", "rt", newline="") as stream:
        expected = stream.read()
    if predictions != expected:
        first = next(i for i, (a, b) in enumerate(zip(predictions.splitlines(), expected.splitlines())) if a != b)
        pytest.fail(f"predictions differ from line {first + 1}:\n  got      {predictions.splitlines()[first]}\n"
                    f"  recorded {expected.splitlines()[first]}")
    assert sha256(predictions) == recorded["predictions_sha256"]
    assert sha256(jobs) == recorded["jobs_sha256"], "same predictions, but another _jobs.csv"


def write_golden() -> None:
    """Record the outputs of the current code (see the module docstring)."""
    GOLDEN.mkdir(parents=True, exist_ok=True)
    manifest = {}
    for case in CASES:
        jobs, predictions = outputs(case)
        manifest[case_name(case)] = {"jobs_sha256": sha256(jobs), "predictions_sha256": sha256(predictions)}
        with open(GOLDEN / f"{case_name(case)}_predictions.csv.gz", "wb") as raw:
            with gzip.GzipFile(fileobj=raw, mode="wb", mtime=0, filename="") as stream:
                stream.write(predictions.encode())
        print(case_name(case), manifest[case_name(case)]["jobs_sha256"][:12])
    MANIFEST.write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    write_golden()
