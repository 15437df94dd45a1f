"""docs/results.md is a claims page (issue 47): at most 300 lines, its tables generated from the data files beside
it, and every claim of the README's "What it found" found there."""

import subprocess
import sys

from tests.helpers import REPO

RESULTS = REPO / "docs" / "results.md"


def test_the_claims_page_is_short_and_its_tables_come_from_its_data():
    assert len(RESULTS.read_text().splitlines()) <= 300
    done = subprocess.run([sys.executable, "experiments/claims.py", "--check"], cwd=REPO, capture_output=True,
                          text=True)
    assert done.returncode == 0, done.stderr


def test_every_data_file_the_page_names_exists():
    text = RESULTS.read_text()
    for name in ("data/loto_points.csv", "data/reproduction.csv", "notebook/2026-12-05-results.md"):
        assert name in text and (REPO / "docs" / name).is_file()
