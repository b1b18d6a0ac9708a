"""MMDistributedDataParallel, MMSeparateDistributedDataParallel and
MMFullyShardedDataParallel in a real 2-process gloo group (workers/model_wrapper_scenarios.py):
train steps on each rank's half of a batch give identical parameters on both ranks, equal to
one process training on the whole batch."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import gloo_group
import pytest
import torch

SCENARIOS = Path(__file__).parent / "workers" / "model_wrapper_scenarios.py"
WORLD_SIZE = 2


def load_scenarios():
    spec = importlib.util.spec_from_file_location("model_wrapper_scenarios", SCENARIOS)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def value(tmp_path_factory):
    results = gloo_group.run_group(SCENARIOS, WORLD_SIZE, tmp_path_factory.mktemp("wrappers"))
    return lambda rank, name: gloo_group.scenario_value(results, rank, name)


@pytest.fixture(scope="module")
def scenarios():
    return load_scenarios()


def single_process_params(scenarios):
    """What the same steps give in one process on the whole batch (the mean loss of the
    whole batch has the mean of the two halves' gradients)."""
    model = scenarios.make_model()
    wrapper = scenarios.SGDWrapper(model.parameters())
    for step in range(scenarios.STEPS):
        inputs, targets = scenarios.whole_batch(step)
        model.train_step({"inputs": inputs, "data_samples": targets}, wrapper)
    return {name: param.detach() for name, param in model.named_parameters()}


def single_process_two_part(scenarios):
    model = scenarios.TwoPart()
    wrappers = {
        "first": scenarios.SGDWrapper(model.first.parameters()),
        "second": scenarios.SGDWrapper(model.second.parameters()),
    }
    for step in range(scenarios.STEPS):
        inputs, targets = scenarios.whole_batch(step)
        model.train_step({"inputs": inputs, "data_samples": targets}, wrappers)
    return {
        name: param.detach()
        for name, param in model.named_parameters()
        if not name.startswith("frozen")
    }


def assert_params_close(params, expected):
    assert set(params) == set(expected)
    for name, value in params.items():
        torch.testing.assert_close(torch.tensor(value), expected[name], msg=name)


def test_ddp_gives_identical_parameters_equal_to_one_process(value, scenarios):
    rank0, rank1 = value(0, "scenario_ddp"), value(1, "scenario_ddp")
    assert rank0["params"] == rank1["params"]
    assert_params_close(rank0["params"], single_process_params(scenarios))
    assert rank0["losses"] != rank1["losses"]  # each rank saw its own half
    assert rank0["is_wrapper"] and rank0["log_keys"] == ["loss", "loss_mse"]
    assert rank0["predictions"]


def test_ddp_detect_anomalous_params_logs_the_unused_layer(value):
    for rank in range(WORLD_SIZE):
        messages = value(rank, "scenario_ddp_detect_anomalous_params")
        assert any("module.spare.weight with shape (2, 2)" in m for m in messages), messages
        assert not any("hidden" in m for m in messages)


def test_separate_ddp_wraps_trainable_parts_and_synchronizes_them(value, scenarios):
    rank0, rank1 = value(0, "scenario_separate_ddp"), value(1, "scenario_separate_ddp")
    assert rank0["params"] == rank1["params"]
    expected = {
        name.replace(".weight", ".module.weight").replace(".bias", ".module.bias"): param
        for name, param in single_process_two_part(scenarios).items()
    }
    assert_params_close(rank0["params"], expected)
    assert rank0["wrapped"] == {
        "data_preprocessor": "BaseDataPreprocessor",
        "first": "MMDistributedDataParallel",
        "second": "MMDistributedDataParallel",
        "frozen": "Linear",
        "activation": "Tanh",
    }
    assert rank0["training"] == [False, False, False]
    assert rank0["forward"]
    assert rank0["is_wrapper"]


def test_fsdp_gives_identical_parameters_equal_to_one_process(value, scenarios):
    rank0, rank1 = value(0, "scenario_fsdp"), value(1, "scenario_fsdp")
    assert rank0["params"] == rank1["params"]
    assert_params_close(rank0["params"], single_process_params(scenarios))
    assert rank0["is_wrapper"]
    assert len(rank0["predictions"]) == 4
    # The size-based policy (from a dict naming it by import path) wrapped the two layers too.
    assert rank0["fsdp_units"] == 3
    assert rank0["mixed_precision"] == "torch.float32"
