"""The frontier figure of issue 32 (``plots.kill_frontier``), drawn from a points table."""

import pandas as pd

from scheduler.experiments.plots import kill_frontier


def test_the_frontier_draws_one_point_per_rule_and_order(tmp_path):
    points = pd.DataFrame({"rule": ["bounded", "bounded", "blocking-order", "blocking-order"],
                           "trace": ["KTH-SP2"] * 4, "policy": ["fcfs", "spf", "fcfs", "spf"],
                           "share_of_cc": [1.04, 0.99, 0.96, 0.93], "killed": [0.53, 0.53, 0.114, 0.094]})
    path = kill_frontier(points, "KTH-SP2", tmp_path / "kill_frontier_kth.png", highlight="blocking-order",
                         rules=["idempotent", "bounded", "blocking-order"])
    assert path.read_bytes().startswith(b"\x89PNG") and path.with_suffix(".svg").exists()
    assert kill_frontier(points.iloc[:0], "KTH-SP2", tmp_path / "none.png") is None
