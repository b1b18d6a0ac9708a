"""DeepSpeedStrategy with the real DeepSpeed engine in a 2-process gloo group on the CPU
(workers/deepspeed_scenarios.py): ZeRO stages 0-3 through FlexibleRunner give DDP's losses and
weights, checkpoints are DeepSpeed directories that resume exactly and load weights only (also
across stages), and batch sizes that contradict the dataloader are refused. Skipped where
deepspeed is not installed (``pip install 'treadle-runner[deepspeed]'``)."""

from __future__ import annotations

from pathlib import Path

import gloo_group
import pytest

pytest.importorskip("deepspeed")

SCENARIOS = Path(__file__).parent / "workers" / "deepspeed_scenarios.py"
WORLD_SIZE = 2
STAGES = (0, 1, 2, 3)


@pytest.fixture(scope="module")
def out_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("deepspeed")


@pytest.fixture(scope="module")
def value(out_dir):
    results = gloo_group.run_group(SCENARIOS, WORLD_SIZE, out_dir)
    return lambda rank, name: gloo_group.scenario_value(results, rank, name)


def _close(first, second, tolerance=1e-6):
    if isinstance(first, dict):
        return first.keys() == second.keys() and all(
            _close(first[k], second[k], tolerance) for k in first
        )
    if isinstance(first, list):
        return len(first) == len(second) and all(
            _close(a, b, tolerance) for a, b in zip(first, second, strict=True)
        )
    return abs(first - second) <= tolerance


@pytest.mark.parametrize("stage", STAGES)
def test_each_zero_stage_trains_as_ddp(value, stage):
    reference = value(0, "scenario_ddp_reference")
    for rank in range(WORLD_SIZE):
        run = value(rank, f"scenario_zero{stage}")
        assert run["stage"] == stage
        assert run["wrapper"] == "MMDeepSpeedEngineWrapper"
        assert _close(run["losses"], value(rank, "scenario_ddp_reference")["losses"])
    # Weights gathered on rank 0 (under ZeRO-3 the other ranks hold shards only).
    assert _close(value(0, f"scenario_zero{stage}")["weights"], reference["weights"])


def test_zero_stages_use_deepspeeds_optimizers(value):
    names = [value(0, f"scenario_zero{stage}")["optimizer"] for stage in STAGES]
    assert names == [
        "AdamW",
        "DeepSpeedZeroOptimizer",
        "DeepSpeedZeroOptimizer",
        "DeepSpeedZeroOptimizer_Stage3",
    ]


def test_batch_sizes_come_from_the_dataloader(value):
    config = value(0, "scenario_zero2")["config"]
    # Batch 3 per process, 2 processes, no accumulation; no clipping unless asked.
    assert config["train_micro_batch_size_per_gpu"] == 3
    assert config["train_batch_size"] == 6
    assert config["gradient_clipping"] == 0.0


def test_the_scheduler_changes_the_engines_learning_rate(value):
    # MultiStepLR at epochs 1 and 2 from 0.01, and the losses equal DDP's (checked above).
    assert _close(value(0, "scenario_zero1")["lr"], [0.0001], 1e-12)


def test_checkpoints_are_deepspeed_directories(value, out_dir):
    assert value(0, "scenario_zero2")["listing"] == [
        "mp_rank_00_model_states.pt",
        "zero_pp_rank_0_mp_rank_00_optim_states.pt",
        "zero_pp_rank_1_mp_rank_00_optim_states.pt",
    ]
    assert value(0, "scenario_zero3")["listing"] == [
        "zero_pp_rank_0_mp_rank_00_model_states.pt",
        "zero_pp_rank_0_mp_rank_00_optim_states.pt",
        "zero_pp_rank_1_mp_rank_00_model_states.pt",
        "zero_pp_rank_1_mp_rank_00_optim_states.pt",
    ]
    entries = value(0, "scenario_zero1")["work_dir_entries"]
    assert {"epoch_1.pth", "epoch_2.pth", "epoch_3.pth"} <= set(entries)
    # Written under a temporary name, renamed when complete: nothing partial is left.
    assert not [name for name in entries if name.endswith(".partial")]
    assert (out_dir / "zero1" / "epoch_3.pth").is_dir()


@pytest.mark.parametrize("stage", (2, 3))
def test_resuming_a_deepspeed_checkpoint_continues_exactly(value, stage):
    for rank in range(WORLD_SIZE):
        full = value(rank, f"scenario_zero{stage}")
        resumed = value(rank, f"scenario_resume_zero{stage}")
        # Epochs 2 and 3 (2 iterations each) again, bit for bit.
        assert resumed["losses"] == full["losses"][2:]
        assert resumed["epoch"] == 3
    assert (
        value(0, f"scenario_resume_zero{stage}")["weights"]
        == value(0, f"scenario_zero{stage}")["weights"]
    )


def test_load_from_takes_the_weights_only(value):
    start = value(0, "scenario_load_from_weights_only")
    assert start["weights"] == value(0, "scenario_zero1")["weights"]
    assert start["optimizer_state"] == 0
    assert start["global_steps"] == 0


def test_load_from_crosses_zero_stages(value):
    start = value(0, "scenario_load_from_zero3_into_zero2")
    assert _close(start["weights"], value(0, "scenario_zero3")["weights"])
    assert start["global_steps"] == 0


def test_save_without_optimizer_is_one_file_of_gathered_weights(value):
    run = value(0, "scenario_save_without_optimizer")
    assert run["is_file"]
    assert run["loaded"] == run["weights"]
    assert value(1, "scenario_save_without_optimizer")["weights"] == {}


def test_train_batch_size_that_contradicts_the_dataloader_is_refused(value):
    for rank in range(WORLD_SIZE):
        message = value(rank, "scenario_train_batch_size_contradicts")
        assert message == (
            "DeepSpeed train_batch_size is 32, but this run trains on 6 samples per optimizer "
            "step: train_dataloader.batch_size (3) x world size (2) x "
            "gradient_accumulation_steps (1); remove train_batch_size from the DeepSpeed config "
            "(it is computed) or change the dataloader's batch_size"
        )


def test_a_plain_optim_wrapper_is_refused(value):
    message = value(0, "scenario_wrong_optim_wrapper")
    assert message.startswith(
        "DeepSpeedStrategy trains with optim_wrapper=dict(type='DeepSpeedOptimWrapper', "
        "optimizer=...), got OptimWrapper"
    )


# -- in this process: building the strategy (no process group needed) ------------------------


def test_strategy_builds_by_name_with_mmengines_arguments():
    from treadle.runner.registry import OPTIMIZERS, STRATEGIES

    strategy = STRATEGIES.build(
        dict(
            type="DeepSpeedStrategy",
            zero_optimization=dict(stage=3),
            gradient_clipping=1.0,
            train_micro_batch_size_per_gpu=2,
            inputs_to_half=["inputs"],
            exclude_frozen_parameters=True,
            work_dir="work_dirs/ds",
        )
    )
    assert strategy.config["zero_optimization"] == dict(stage=3)
    assert strategy.config["gradient_clipping"] == 1.0
    assert strategy.inputs_to_half == ["inputs"]
    assert strategy.exclude_frozen_parameters
    assert strategy.checkpoint_on_every_rank
    # DeepSpeed's optimizers build by name once a strategy exists.
    assert OPTIMIZERS.get("FusedAdam") is not None


def test_unknown_strategy_argument_names_the_closest():
    from treadle.runner.strategies import DeepSpeedStrategy

    with pytest.raises(
        TypeError, match="unknown arguments 'zero_optimisation' \\(did you mean 'zero_optimization'"
    ):
        DeepSpeedStrategy(zero_optimisation=dict(stage=2))


def test_activation_checkpointing_by_module_names_wraps_them():
    from runner_toy_model import ToyModel

    from treadle.runner.strategies import DeepSpeedStrategy

    strategy = DeepSpeedStrategy(activation_checkpointing=["head.linear1"])
    assert "activation_checkpointing" not in strategy.config
    wrapper = strategy.wrap_model(ToyModel())
    assert type(wrapper).__name__ == "MMDeepSpeedEngineWrapper"
    assert not wrapper.engine_built
    deepspeed_section = DeepSpeedStrategy(activation_checkpointing=dict(partition_activations=True))
    assert deepspeed_section.config["activation_checkpointing"] == dict(partition_activations=True)


def test_an_already_wrapped_model_is_refused():
    from torch import nn

    from treadle.runner.strategies import DeepSpeedStrategy

    with pytest.raises(TypeError, match="give it the bare model, not one wrapped in DataParallel"):
        DeepSpeedStrategy().wrap_model(nn.DataParallel(nn.Linear(2, 1)))


# -- one process without a launcher (a subprocess: the group it starts outlives the test) ----

SINGLE = Path(__file__).parent / "workers" / "deepspeed_single_process.py"


def _single_process(work_dir, *args):
    import json
    import subprocess
    import sys

    env = gloo_group.clean_environment()
    result = subprocess.run(
        [sys.executable, str(SINGLE), str(work_dir), *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=gloo_group.GROUP_TIMEOUT_S,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_one_process_without_launcher_starts_its_own_group(tmp_path):
    run = _single_process(tmp_path / "single")
    assert run["world_size"] == 1 and run["distributed"]
    assert run["iters"] == 8
    assert run["checkpoints"] == ["epoch_1.pth", "epoch_2.pth"]
    assert set(run["metrics"]) == {"mse", "acc"}


def test_bf16_with_inputs_to_half_on_the_cpu(tmp_path):
    run = _single_process(tmp_path / "bf16", "bf16")
    assert run["dtype"] == "torch.bfloat16"
    assert run["iters"] == 8


def test_mmengines_strategy_api_saves_resumes_and_loads(value):
    for rank in range(WORLD_SIZE):
        run = value(rank, "scenario_strategy_api_save_and_resume")
        assert run["resumed"] == run["full"][2:]
        assert run["meta_iter"] == 2
        assert run["is_dir"]
        # load_checkpoint: weights only; the rest of the checkpoint comes back.
        assert {"meta", "optimizer"} <= set(run["loaded_keys"])
        assert "state_dict" not in run["loaded_keys"]
        assert run["loaded_steps"] == 0
