"""A failed checkpoint write in a 2-process gloo group: rank 0 writes, its disk is full; with
on_save_error='continue' both ranks train on, with 'stop' both stop (no rank is left waiting
for the other at the next collective)."""

from pathlib import Path

import gloo_group
import pytest

SCENARIOS = Path(__file__).parent / "workers" / "storage_scenarios.py"


@pytest.fixture(scope="module")
def value(tmp_path_factory):
    results = gloo_group.run_group(SCENARIOS, 2, tmp_path_factory.mktemp("storage"))
    return lambda rank, name: gloo_group.scenario_value(results, rank, name)


def test_both_ranks_go_on_after_a_failed_save(value):
    for rank in (0, 1):
        result = value(rank, "scenario_continue")
        assert result["iters"] == 10 and result["raised"] is None
        assert result["last_ckpt"].endswith("iter_10.pth")
    assert value(0, "scenario_continue")["files"] == ["iter_10.pth", "iter_4.pth"]
    (logged,) = value(0, "scenario_continue")["logged"]
    assert "iter_8.pth at iteration 8: no space left on the device" in logged


def test_both_ranks_stop_when_asked(value):
    rank0, rank1 = value(0, "scenario_stop"), value(1, "scenario_stop")
    assert rank0["iters"] == rank1["iters"] == 7  # iteration 8 was the one being saved
    assert "no space left on the device" in rank0["raised"]
    assert "rank 0 could not write it (see its log)" in rank1["raised"]
    assert (
        "the previous checkpoint" in rank1["raised"] and "iter_4.pth is intact" in rank1["raised"]
    )
