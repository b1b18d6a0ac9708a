"""ZeroRedundancyOptimizer in a real 2-process gloo group (workers/zero_optimizer_scenarios.py):
built from a config with param groups, stepped, its state gathered on rank 0 and resumed."""

from __future__ import annotations

from pathlib import Path

import gloo_group
import pytest

SCENARIOS = Path(__file__).parent / "workers" / "zero_optimizer_scenarios.py"
WORLD_SIZE = 2


@pytest.fixture(scope="module")
def value(tmp_path_factory):
    results = gloo_group.run_group(SCENARIOS, WORLD_SIZE, tmp_path_factory.mktemp("zero"))
    return lambda rank, name: gloo_group.scenario_value(results, rank, name)


def test_it_builds_from_a_config_and_steps_like_the_plain_optimizer(value):
    results = [value(rank, "scenario_build_and_step") for rank in range(WORLD_SIZE)]
    for result in results:
        assert result["type"] == "ZeroRedundancyOptimizer" and result["local"] == "AdamW"
        # paramwise_cfg's groups: weight, bias of each Linear and the BatchNorm's two.
        assert result["groups"] == [0.1, 0.0, 0.0, 0.0, 0.1, 0.0]
        assert result["difference"] < 1e-6
    assert results[0]["first_param"] == results[1]["first_param"]
    # Each rank holds the optimizer state of its share of the parameters only.
    assert sorted(r["local_params"] for r in results) != [6, 6]
    assert sum(r["local_params"] for r in results) == 6


def test_state_dict_is_gathered_on_rank_0_and_resumes(value):
    state = value(0, "scenario_state_dict")
    assert state["keys"] == ["param_groups", "state"] and state["states"] == 6
    assert value(1, "scenario_state_dict")["keys"] == []
    for rank in range(WORLD_SIZE):
        assert value(rank, "scenario_state_dict")["resumed_equal"]
        # torch's load_state_dict clears the other ranks' shares in the dict it is given.
        assert value(rank, "scenario_state_dict")["input_kept"]


def test_an_unknown_local_optimizer_names_the_closest(value):
    message = value(0, "scenario_unknown_optimizer_type")
    assert "ZeroRedundancyOptimizer's optimizer_type: AdamWW is not in the treadle::optimizer" in (
        message
    )
    assert "'AdamW'" in message


def test_a_local_optimizer_of_an_optional_package_by_name(value):
    result = value(1, "scenario_third_party_local_optimizer")
    if result == "lion-pytorch not installed":
        pytest.skip(result)
    assert result == "lion_pytorch.lion_pytorch.Lion"
