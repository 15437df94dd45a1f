"""Issue 39, the table: ``simulate``'s comparison fits the console (``COLUMNS``, 80 at least), times carry
their unit, counts their separators, "–" alone means "not applicable", and the killed attempts are shown only
when they say more than the jobs killed."""

from __future__ import annotations

import math

import pytest

from batsim_classifier_scheduler.cli import main
from batsim_classifier_scheduler.cli.formats import (NOT_APPLICABLE, change, count, duration, durations, number, ratio,
                                                     reduction, share)
from batsim_classifier_scheduler.cli.layout import console_width, side_by_side
from batsim_classifier_scheduler.workloads import write_batsim_json
from batsim_classifier_scheduler.workloads.synthetic import generate

from tests.helpers import comparison_table, named

#: The README's quick start compares these seven.
SEVEN = ["base", "classification-idempotent", "class-clairvoyant", "classification-probing", "classification-bounded",
         "classification-blocking", "classification-tolerant"]


@pytest.fixture(scope="module")
def workload(tmp_path_factory):
    path = tmp_path_factory.mktemp("table") / "two-weeks.json"
    write_batsim_json(generate(300, weeks=2, nb_res=16, seed=2), path)
    return path


@pytest.mark.parametrize("columns", [80])  # 100: the quick start's own test (tests/test_simulate_cli.py)
def test_the_seven_variants_fit_the_console(workload, tmp_path, monkeypatch, capsys, columns):
    monkeypatch.setenv("COLUMNS", str(columns))
    monkeypatch.chdir(tmp_path)
    prefix = "out/sample"  # as the README's quick start (a file name longer than the line cannot be broken)
    assert main(["simulate", str(workload), "--variant", ",".join(map(named, SEVEN)), "-e", prefix]) == 0
    out, err = capsys.readouterr()
    widest = max((out + err).splitlines(), key=len)
    assert len(widest) <= columns, widest
    names, rows = comparison_table(out)
    assert names == SEVEN and all(len(values) == 7 for values in rows.values())
    assert rows["reduction vs base"][0] == rows["large jobs vs base"][0] == rows["vs base"][0] == NOT_APPLICABLE
    assert all(value.endswith(("s", "min", "h", "d")) for value in rows["mean wait"] + rows["makespan"])
    assert rows["divider"][0] == NOT_APPLICABLE and all(value.endswith("min") for value in rows["divider"][1:])
    for name in SEVEN:  # every run's files are named whole, however the line wraps
        assert f"wrote {prefix}_{name}_jobs.csv, " in out


def test_the_width_is_columns_but_never_below_80(monkeypatch):
    monkeypatch.setenv("COLUMNS", "120")
    assert console_width() == 120
    monkeypatch.setenv("COLUMNS", "40")
    assert console_width() == 80


def test_columns_that_do_not_fit_go_in_even_blocks_under_broken_names():
    names = ["base", "classification-idempotent", "class-clairvoyant", "classification-probing", "x-y"]
    rows = [("mean wait", ["5.60 h"] * 5), ("  reduction vs base", ["–", "58.5%", "77.7%", "78.0%", "1.0%"])]
    assert side_by_side(names, rows, 200)[0].split() == names  # they fit: one line of whole names
    lines = side_by_side(names, rows, 80)
    assert max(map(len, lines)) <= 80
    assert [line.split() for line in lines[:2]] == [["classification-", "class-"],
                                                    ["base", "idempotent", "clairvoyant"]]
    assert lines[2].startswith("mean wait") and lines[2].endswith("5.60 h")
    # four of the five columns would fit in the first block: split evenly instead, three and two
    assert lines[4] == "" and [line.split() for line in lines[5:7]] == [["classification-"], ["probing", "x-y"]]
    assert lines[8].split() == ["reduction", "vs", "base", "78.0%", "1.0%"]

def test_times_are_in_s_min_h_or_d_with_three_significant_digits():
    assert duration(3059789) == "35.4 d"
    assert duration(20158) == "5.60 h"
    assert duration(90) == "1.50 min"
    assert duration(45) == "45.0 s" and duration(0.11) == "0.11 s"
    assert duration(0) == "0 s"
    # a row shares one unit, its median's, so that it reads at a glance
    assert durations([222855, 237234, 413526, 0, None]) == ["2.58 d", "2.75 d", "4.79 d", "0 d", NOT_APPLICABLE]
    assert durations([3.0, 17.4, 71.4]) == ["3.0 s", "17.4 s", "71.4 s"]  # not 0.05 min
    assert durations([7200, 600, 900]) == ["120 min", "10 min", "15 min"]


def test_one_mark_for_not_applicable_and_zero_for_zero():
    for missing in (None, math.nan):
        assert duration(missing) == count(missing) == number(missing, ".3f") == NOT_APPLICABLE
    assert durations([None, math.nan]) == [NOT_APPLICABLE] * 2
    assert number(0.0, ".3f") == "0.000" and count(0) == "0" and share(0, 10) == "0.00%"
    assert share(1, 0) == reduction(1, 0) == ratio(1, 0) == change(1, 0) == NOT_APPLICABLE  # against nothing
    assert count(28467) == "28,467" and count(7200 / 3600) == "2"
    assert reduction(22.77, 54.83) == "58.5%" and ratio(3, 2) == "1.50×" and change(1.1, 1.0) == "+10.0%"


def test_the_progress_bar_fits_the_console(monkeypatch):
    from tqdm import tqdm

    from batsim_classifier_scheduler.cli.simulate import progress_bar

    monkeypatch.setenv("COLUMNS", "80")
    with progress_bar(3000, "classification-idempotent") as bar:
        assert bar.ncols == 80
    line = tqdm.format_meter(1500, 3000, 12.0, ncols=bar.ncols, prefix="classification-idempotent", unit="job")
    assert len(line) <= 80
