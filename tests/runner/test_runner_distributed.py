"""The Runner in a real 2-process gloo group (workers/runner_scenarios.py): the model in
MMDistributedDataParallel on the CPU, one timestamp and seed for all ranks, each rank its own
share of the data, equal weights after training, checkpoints written by rank 0."""

from __future__ import annotations

from pathlib import Path

import gloo_group
import pytest

SCENARIOS = Path(__file__).parent / "workers" / "runner_scenarios.py"
WORLD_SIZE = 2


@pytest.fixture(scope="module")
def out_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("runner")


@pytest.fixture(scope="module")
def value(out_dir):
    results = gloo_group.run_group(SCENARIOS, WORLD_SIZE, out_dir)
    return lambda rank, name: gloo_group.scenario_value(results, rank, name)


def test_each_rank_trains_its_share_in_ddp(value):
    first, second = value(0, "scenario_train"), value(1, "scenario_train")
    assert first["wrapper"] == "MMDistributedDataParallel"
    assert (first["rank"], second["rank"], first["world_size"]) == (0, 1, 2)
    assert first["distributed"] and second["distributed"]
    # 12 samples over 2 ranks, batch 3: 2 iterations per epoch on each rank.
    assert first["iters"] == second["iters"] == 6
    assert first["batches"][0] != second["batches"][0]
    # Gradients are averaged: both ranks end with the same weights.
    assert first["weights"] == second["weights"]
    assert first["metrics"] == second["metrics"]


def test_ranks_share_the_timestamp_and_the_seed(value):
    first, second = value(0, "scenario_train"), value(1, "scenario_train")
    assert first["timestamp"] == second["timestamp"]
    assert first["seed"] == second["seed"]


def test_diff_rank_seed_gives_each_rank_its_seed(value):
    first, second = value(0, "scenario_diff_rank_seed"), value(1, "scenario_diff_rank_seed")
    assert (first["seed"], second["seed"]) == (10, 11)
    assert first["draw"] != second["draw"]


def test_rank_0_writes_the_checkpoints_and_the_log(value, out_dir):
    stamp = value(0, "scenario_train")["timestamp"]
    work_dir = out_dir / "train"
    assert sorted(p.name for p in work_dir.glob("*.pth")) == [
        "epoch_1.pth",
        "epoch_2.pth",
        "epoch_3.pth",
    ]
    assert (work_dir / stamp / f"{stamp}.log").is_file()
