"""BaseMetric, TorchMetric and Evaluator in a real 2-process gloo group (workers/
evaluator_scenarios.py): 7 samples dealt out with padding, metrics over exactly the dataset on
every rank."""

from __future__ import annotations

from pathlib import Path

import gloo_group
import pytest
import torch

SCENARIOS = Path(__file__).parent / "workers" / "evaluator_scenarios.py"
WORLD_SIZE = 2
SIZE = 7


@pytest.fixture(scope="module")
def value(tmp_path_factory):
    results = gloo_group.run_group(SCENARIOS, WORLD_SIZE, tmp_path_factory.mktemp("evaluator"))
    return lambda rank, name: gloo_group.scenario_value(results, rank, name)


@pytest.fixture(scope="module")
def dataset(value):
    data = value(0, "scenario_dataset")
    return torch.tensor(data["preds"]), torch.tensor(data["targets"])


def test_ranks_hold_uneven_shares_with_padding(value):
    assert value(0, "scenario_dataset")["indices"] == [0, 2, 4, 6]
    assert value(1, "scenario_dataset")["indices"] == [1, 3, 5, 0]  # sample 0 again: padding


def test_base_metric_sees_the_dataset_once_in_order_on_every_rank(value, dataset):
    preds, targets = dataset
    for rank in range(WORLD_SIZE):
        result = value(rank, "scenario_base_metric")
        assert result == {
            "ids/order": list(range(SIZE)),
            "ids/correct": int((preds == targets).sum()),
        }


def test_torch_metric_equals_torchmetrics_on_the_whole_dataset(value, dataset):
    classification = pytest.importorskip("torchmetrics.classification")  # an extra
    MulticlassAccuracy = classification.MulticlassAccuracy
    MulticlassConfusionMatrix = classification.MulticlassConfusionMatrix
    preds, targets = dataset
    accuracy = MulticlassAccuracy(num_classes=4)(preds, targets).item()
    matrix = MulticlassConfusionMatrix(num_classes=4)(preds, targets).tolist()
    for rank in range(WORLD_SIZE):
        result = value(rank, "scenario_torch_metric")
        assert result == {
            "torchmetrics/MulticlassAccuracy": pytest.approx(accuracy),
            "cm/MulticlassConfusionMatrix": matrix,
        }
        assert sum(map(sum, result["cm/MulticlassConfusionMatrix"])) == SIZE


def test_collect_through_files_leaves_nothing_behind(value):
    for rank in range(WORLD_SIZE):
        result, left = value(rank, "scenario_collect_through_files")
        assert result["ids/order"] == list(range(SIZE))
        assert left == []


def test_collect_on_the_communication_device(value):
    for rank in range(WORLD_SIZE):
        assert value(rank, "scenario_collect_on_device")["ids/order"] == list(range(SIZE))


def test_per_batch_results_are_all_kept(value):
    # 4 samples per rank in batches of 2: 4 results in all, fewer than the 7 samples.
    for rank in range(WORLD_SIZE):
        assert value(rank, "scenario_per_batch_results") == {"batches/samples": 8}


def test_compute_error_reaches_every_rank(value):
    name, message = value(0, "scenario_compute_error_reaches_every_rank")
    assert name == "TypeError" and "ReturnsList.compute_metrics must return a dict" in message
    name, message = value(1, "scenario_compute_error_reaches_every_rank")
    assert name == "RuntimeError"
    assert message.startswith("ReturnsList.compute_metrics failed on rank 0: TypeError")
    for rank in range(WORLD_SIZE):
        assert value(rank, "scenario_still_in_step_after_the_error")["ids/order"] == list(
            range(SIZE)
        )
