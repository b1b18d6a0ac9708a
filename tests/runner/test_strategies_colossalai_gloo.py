"""ColossalAIStrategy with the real booster in a 2-process gloo group on the CPU
(workers/colossalai_scenarios.py). TorchDDPPlugin is the ColossalAI plugin that runs without
GPUs (Gemini and LowLevelZero need CUDA or NPU): it trains as DDP, writes MMEngine's
checkpoint directory layout, resumes exactly and loads weights only. Skipped where colossalai
is not installed (``pip install 'treadle-runner[colossalai]'``)."""

from __future__ import annotations

from pathlib import Path

import gloo_group
import pytest

pytest.importorskip("colossalai.booster")

SCENARIOS = Path(__file__).parent / "workers" / "colossalai_scenarios.py"
WORLD_SIZE = 2


@pytest.fixture(scope="module")
def value(tmp_path_factory):
    results = gloo_group.run_group(SCENARIOS, WORLD_SIZE, tmp_path_factory.mktemp("colossalai"))
    return lambda rank, name: gloo_group.scenario_value(results, rank, name)


def test_torch_ddp_plugin_trains_as_ddp(value):
    for rank in range(WORLD_SIZE):
        run, reference = value(rank, "scenario_train"), value(rank, "scenario_ddp_reference")
        assert run["losses"] == reference["losses"]
        assert run["weights"] == reference["weights"]
    run = value(0, "scenario_train")
    assert run["plugin"] == "TorchDDPPlugin"
    assert run["wrapper"] == "ColossalAIModelWrapper"
    assert run["optimizer"] == "OptimizerWrapper"


def test_checkpoints_are_booster_directories(value):
    run = value(0, "scenario_train")
    assert run["listing"] == ["meta.pth", "model", "optimizer"]
    assert {"epoch_1.pth", "epoch_2.pth", "epoch_3.pth"} <= set(run["entries"])
    assert not [name for name in run["entries"] if name.endswith(".partial")]


def test_resume_continues_exactly(value):
    for rank in range(WORLD_SIZE):
        full, resumed = value(rank, "scenario_train"), value(rank, "scenario_resume")
        assert resumed["losses"] == full["losses"][2:]
        assert resumed["weights"] == full["weights"]
        assert resumed["epoch"] == 3


def test_load_from_takes_the_weights_only(value):
    start = value(0, "scenario_load_from")
    assert start["weights"] == value(0, "scenario_train")["weights"]
    assert start["optimizer_state"] == 0


def test_a_plain_optim_wrapper_is_refused(value):
    assert value(0, "scenario_wrong_optim_wrapper") == (
        "ColossalAIStrategy trains with optim_wrapper=dict(type='ColossalAIOptimWrapper', "
        "optimizer=...), got OptimWrapper"
    )
