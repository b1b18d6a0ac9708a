"""FSDPStrategy (FSDP2) in a real 2-process gloo group (workers/fsdp_scenarios.py): the same
losses as DDP, sharded checkpoints that resume exactly on 2 ranks and load in one process, async
saves, a model that differs refused with the names, whole-file ('full') checkpoints."""

from __future__ import annotations

from pathlib import Path

import gloo_group
import pytest
import torch

SCENARIOS = Path(__file__).parent / "workers" / "fsdp_scenarios.py"
WORLD_SIZE = 2


@pytest.fixture(scope="module")
def group(tmp_path_factory):
    out_dir = tmp_path_factory.mktemp("fsdp")
    results = gloo_group.run_group(SCENARIOS, WORLD_SIZE, out_dir)
    return (lambda rank, name: gloo_group.scenario_value(results, rank, name)), out_dir


def both(value, name):
    return value(0, name), value(1, name)


def test_fsdp2_gives_the_loss_curve_of_ddp(group):
    value, _ = group
    for result in both(value, "scenario_fsdp_matches_ddp"):
        torch.testing.assert_close(result["fsdp"], result["ddp"], rtol=1e-5, atol=1e-6)
        assert result["prebuilt"] == result["fsdp"] and result["prebuilt_same_wrapper"]
        # auto_wrap_policy=['Linear'] made each Linear a unit, then the root.
        assert result["units"] == ["FSDPLinear"] * 3 + ["FSDPFsdpToyModel"]
        assert result["sharded"] == "DTensor"
        for name, weight in result["ddp_weights"].items():
            torch.testing.assert_close(result["weights"][name], weight, rtol=1e-5, atol=1e-6)
    rank0, rank1 = both(value, "scenario_fsdp_matches_ddp")
    assert rank0["weights"] == rank1["weights"]


def test_sharded_checkpoint_is_one_file_per_rank_and_resumes_exactly(group):
    value, _ = group
    for result in both(value, "scenario_sharded_checkpoint_resumes_exactly"):
        assert result["files"] == [".metadata", "__0_0.distcp", "__1_0.distcp"]
        assert result["resumed"] == result["continued"]  # bit for bit
        assert result["rest"] == {"meta": 1, "note": [1, 2]}
        assert result["temporary_left"] == []


def test_sharded_checkpoint_loads_in_one_process(group):
    from fsdp_toys import make_model, optim_cfg

    from treadle.runner.optim import build_optim_wrapper
    from treadle.runner.strategies import SingleDeviceStrategy

    value, out_dir = group
    expected = value(0, "scenario_sharded_checkpoint_resumes_exactly")["weights"]
    strategy = SingleDeviceStrategy()
    model = make_model(seed=9)
    strategy.prepare(model)
    rest = strategy.load_checkpoint(str(out_dir / "sharded" / "epoch_1.pth"))
    assert {n: p.tolist() for n, p in model.state_dict().items()} == expected
    assert rest["meta"]["epoch"] == 1
    # The optimizer's state, keyed by parameter names in the checkpoint, is re-keyed by index.
    wrapper = build_optim_wrapper(model, optim_cfg())
    strategy.prepare(model, optim_wrapper=wrapper)
    strategy.resume(str(out_dir / "sharded" / "epoch_1.pth"))
    assert sorted(wrapper.optimizer.state_dict()["state"]) == list(range(6))


def test_consolidate_a_checkpoint_written_by_two_ranks(group, tmp_path):
    from safetensors.torch import load_file

    from treadle.runner.cli.main import main

    value, out_dir = group
    expected = value(0, "scenario_sharded_checkpoint_resumes_exactly")["weights"]
    out = str(tmp_path / "model.safetensors")
    assert main(["checkpoint", "consolidate", str(out_dir / "sharded" / "epoch_1.pth"), out]) == 0
    assert {name: t.tolist() for name, t in load_file(out).items()} == expected


def test_async_save_finishes_before_the_next_and_keeps_the_saved_state(group):
    value, _ = group
    for result in both(value, "scenario_async_save_overlaps_and_finishes"):
        assert result == {"first_complete": True, "second_complete": True, "same": True}


def test_a_model_that_differs_is_refused_with_the_names(group):
    value, _ = group
    for result in both(value, "scenario_mismatched_model_is_refused_with_names"):
        assert "ShardedCheckpointMismatch" in result["shapes"]
        assert "first.weight (checkpoint [8, 6], now [10, 6])" in result["shapes"]
        assert "second.weight" in result["shapes"]
        assert "missing keys in source state_dict: out.weight, out.bias" in result["names"]
        assert "unexpected key in source state_dict: head.weight, head.bias" in result["names"]


def test_full_state_dict_is_one_file_that_resumes_exactly(group):
    value, _ = group
    rank0, rank1 = both(value, "scenario_full_state_dict_is_one_file_from_rank_0")
    assert rank0["saved"] == ["meta", "optimizer", "state_dict"]
    for result in (rank0, rank1):
        assert result["is_file"] and result["same"]
        assert result["resumed"] == result["continued"]


def test_flexible_runner_with_fsdp_saves_async_and_resumes_exactly(group):
    value, _ = group
    for result in both(value, "scenario_flexible_runner_saves_async_and_resumes_exactly"):
        assert result["checkpoints"] == ["epoch_1.pth", "epoch_2.pth", "epoch_3.pth"]
        assert result["complete"] == [True, True, True]
        assert result["latest"] == "epoch_3.pth"
        assert result["same"] is True and result["same_by_path"] is True


def test_sharding_strategies_cpu_offload_and_bf16_train_alike(group):
    value, _ = group
    for result in both(value, "scenario_sharding_strategies_and_options_train_alike"):
        for name, losses in result["others"].items():
            torch.testing.assert_close(losses, result["reference"], msg=name)
        torch.testing.assert_close(result["cpu_offload"], result["reference"])
        torch.testing.assert_close(result["checkpointed"], result["reference"])
        assert result["checkpointed_names"] == [
            f"{layer}.{kind}"
            for layer in ("first", "head", "second")
            for kind in ("bias", "weight")
        ]
        # bfloat16 parameters: the same curve within bfloat16's precision.
        torch.testing.assert_close(result["bf16"], result["reference"], rtol=2e-2, atol=2e-2)


def test_skip_init_weights_builds_on_the_meta_device_and_loads(group):
    value, _ = group
    expected = value(0, "scenario_sharded_checkpoint_resumes_exactly")["weights"]
    for result in both(value, "scenario_skip_init_weights_builds_on_meta_then_loads"):
        assert result == {"on_meta": False, "weights": expected}
