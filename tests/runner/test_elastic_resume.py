"""Elastic resume: runs with ``elastic=dict(global_batch_size=8, ...)`` checkpointed at one
world size and resumed at another (2->1, 1->2, 2->4, 4->2, and 2->3 with unequal shares;
whole-file checkpoints of the plain Runner and FSDP2 sharded checkpoints), against the
uninterrupted run of the size that saved them, with a data set whose every read draws random
augmentation from Python's, NumPy's and torch's global generators
(tests/support/elastic_toys.py). Five gloo groups in turn (2, 1, 4, 2 and 3 processes;
tests/runner/workers/elastic_scenarios.py): about a minute on 2 loaded cores (the
fresh-environment run of tests/repo/test_single_package_install.py leaves it to the main one).

TREADLE_LONG_TESTS=1 adds iteration-based runs at 4 processes, 2->4 for them, and the FSDP2
checkpoint resumed at 4.
"""

from __future__ import annotations

import os
from pathlib import Path

import gloo_group
import pytest
import torch

SCENARIOS = Path(__file__).parent / "workers" / "elastic_scenarios.py"
LONG = os.environ.get("TREADLE_LONG_TESTS") == "1"
TOLERANCE = 1e-5


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Every phase's rank-0 results, by run name."""
    out_dir = tmp_path_factory.mktemp("elastic")
    found = {}
    for phase, size in (("size2", 2), ("size1", 1), ("size4", 4), ("size2b", 2), ("size3", 3)):
        env = {"ELASTIC_PHASE": phase, "ELASTIC_LONG": "1" if LONG else "0"}
        results = gloo_group.run_group(SCENARIOS, size, out_dir, extra_env=env)
        for rank in range(size):
            value = gloo_group.scenario_value(results, rank, "scenario_phase")
            if rank == 0:
                found.update(value)
            else:  # every rank logged the same (global) losses
                for name, run in value.items():
                    if isinstance(run, dict):
                        assert run["losses"] == found[name]["losses"], (name, rank)
    return found


def assert_losses_match(got: dict, expected: dict, first: int) -> None:
    assert sorted(got) == [i for i in sorted(expected) if i >= first], sorted(got)
    for iteration, loss in got.items():
        assert abs(loss - expected[iteration]) <= TOLERANCE * max(1.0, abs(loss)), (
            iteration,
            loss,
            expected[iteration],
        )


def assert_weights_match(got: dict, expected: dict) -> None:
    assert sorted(got) == sorted(expected)
    for name in expected:
        torch.testing.assert_close(
            torch.tensor(got[name]), torch.tensor(expected[name]), rtol=0, atol=TOLERANCE
        )


@pytest.mark.parametrize(
    "resumed, reference, first",
    [
        ("epoch2to1", "epoch2", 6),
        ("epoch1to2", "epoch1", 9),
        ("epoch2to4", "epoch2", 3),
        ("epoch4to2", "epoch4", 6),
        ("iter2to1", "iter2", 3),
        ("iter1to2", "iter1", 6),
        pytest.param(
            "iter2to4", "iter2", 6, marks=pytest.mark.skipif(not LONG, reason="long mode")
        ),
    ],
)
def test_resumed_at_another_size_trains_as_the_uninterrupted_run(runs, resumed, reference, first):
    # Every iteration after the checkpoint, and the final weights, within 1e-5.
    assert_losses_match(runs[resumed]["losses"], runs[reference]["losses"], first)
    assert_weights_match(runs[resumed]["weights"], runs[reference]["weights"])
    assert runs[resumed]["iter"] == runs[reference]["iter"]


def test_uninterrupted_runs_at_1_2_and_4_processes_train_alike(runs):
    # The same global batches, augmentation and accumulation-adjusted steps: 4 micro-steps at 1
    # process, 2 at 2, none at 4.
    for size in (2, 4):
        assert_losses_match(runs[f"epoch{size}"]["losses"], runs["epoch1"]["losses"], 0)
        assert_weights_match(runs[f"epoch{size}"]["weights"], runs["epoch1"]["weights"])
    sizes = (2, 4) if LONG else (2,)
    for size in sizes:
        assert_losses_match(runs[f"iter{size}"]["losses"], runs["iter1"]["losses"], 0)
        assert_weights_match(runs[f"iter{size}"]["weights"], runs["iter1"]["weights"])
    # 30 samples in global batches of 8: 4 per epoch (the last padded), 3 epochs.
    assert runs["epoch1"]["iter"] == 12 and runs["iter1"]["iter"] == 10


def test_three_processes_take_unequal_shares_and_train_as_the_others(runs):
    # G=8 at 3 processes (3, 3 and 2 samples, 2 micro-batches each, each micro-batch's loss
    # weighted by its share): uninterrupted, and resumed from a 2-process checkpoint.
    assert_losses_match(runs["epoch3"]["losses"], runs["epoch1"]["losses"], 0)
    assert_weights_match(runs["epoch3"]["weights"], runs["epoch1"]["weights"])
    assert_losses_match(runs["epoch2to3"]["losses"], runs["epoch2"]["losses"], 6)
    assert_weights_match(runs["epoch2to3"]["weights"], runs["epoch2"]["weights"])
    assert runs["epoch2to3"]["iter"] == runs["epoch2"]["iter"] == 12


def test_fsdp2_sharded_checkpoint_resumes_at_another_size(runs):
    assert_losses_match(runs["fsdp2to1"]["losses"], runs["fsdp2"]["losses"], 6)
    assert_weights_match(runs["fsdp2to1"]["weights"], runs["fsdp2"]["weights"])
    if LONG:
        assert_losses_match(runs["fsdp2to4"]["losses"], runs["fsdp2"]["losses"], 3)
        assert_weights_match(runs["fsdp2to4"]["weights"], runs["fsdp2"]["weights"])


def test_a_global_batch_the_processes_cannot_share_is_refused_naming_both_sizes(runs):
    message = runs["not_shared"]
    assert message.startswith("ElasticConfigError: elastic: global_batch_size=5 cannot be shared")
    assert "this run's 2 processes" in message
    assert "elastic.global_batch_size to a multiple of 2 (e.g. 4 or 6" in message
    assert "Run with a number of processes that divides 5 (1, 5)" in message
