"""OptimWrapper's optim_context around a real DistributedDataParallel model in a 2-process
gloo group (workers/optim_wrapper_scenarios.py): calls that only accumulate keep their
gradients local, updates all-reduce the accumulated ones."""

from __future__ import annotations

from pathlib import Path

import gloo_group
import pytest
import torch

SCENARIOS = Path(__file__).parent / "workers" / "optim_wrapper_scenarios.py"
WORLD_SIZE = 2


@pytest.fixture(scope="module")
def value(tmp_path_factory):
    results = gloo_group.run_group(SCENARIOS, WORLD_SIZE, tmp_path_factory.mktemp("optim"))
    return lambda rank, name: gloo_group.scenario_value(results, rank, name)


def test_accumulating_calls_do_not_all_reduce(value):
    for rank in range(WORLD_SIZE):
        result = value(rank, "scenario_accumulation_syncs_only_on_updates")
        for held, alone in zip(result["first_grads"], result["first_grads_alone"], strict=True):
            assert torch.equal(held, alone)
    first = value(0, "scenario_accumulation_syncs_only_on_updates")["first_grads"]
    second = value(1, "scenario_accumulation_syncs_only_on_updates")["first_grads"]
    assert not torch.equal(first[0], second[0])


def test_updates_average_the_accumulated_gradients_of_every_rank(value):
    results = [value(rank, "scenario_accumulation_syncs_only_on_updates") for rank in range(2)]
    for result in results:
        for param, expected in zip(result["parameters"], result["reference"], strict=True):
            torch.testing.assert_close(param, expected)
    for a, b in zip(results[0]["parameters"], results[1]["parameters"], strict=True):
        assert torch.equal(a, b)
