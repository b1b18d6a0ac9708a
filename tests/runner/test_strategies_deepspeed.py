"""DeepSpeedStrategy without DeepSpeed's engine: the config it builds from MMEngine's
arguments, the batch sizes checked against the dataloader, the error when deepspeed is not
installed (naming the extra), the optimizer wrapper and the model wrapper driven by a stand-in
engine. The real engine (ZeRO 0-3 on gloo) is tested in test_strategies_deepspeed_gloo.py."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest
import torch
from runner_toy_model import ToyModel
from torch import nn

from treadle.runner.model.wrappers.deepspeed import MMDeepSpeedEngineWrapper, batch_size_of
from treadle.runner.optim.optimizer.deepspeed_optim_wrapper import DeepSpeedOptimWrapper
from treadle.runner.registry import MODEL_WRAPPERS, OPTIM_WRAPPERS, STRATEGIES
from treadle.runner.strategies.deepspeed_config import (
    QUIET_STEPS_PER_PRINT,
    build_config,
    import_deepspeed,
    is_deepspeed_checkpointing,
    read_config,
    reconcile_batch_size,
    zero_stage,
)

# -- config translation -----------------------------------------------------------------------


def test_arguments_become_the_deepspeed_config_over_the_given_one():
    config = build_config(
        dict(gradient_clipping=5.0, zero_optimization=dict(stage=1), wall_clock_breakdown=True),
        zero_optimization=dict(stage=3, offload_optimizer=dict(device="cpu")),
        fp16=dict(enabled=True, loss_scale=0),
        train_micro_batch_size_per_gpu=4,
        gradient_accumulation_steps=2,
    )
    assert config == {
        "gradient_clipping": 5.0,
        "zero_optimization": {"stage": 3, "offload_optimizer": {"device": "cpu"}},
        "wall_clock_breakdown": True,
        "fp16": {"enabled": True, "loss_scale": 0},
        "train_micro_batch_size_per_gpu": 4,
        "gradient_accumulation_steps": 2,
        "steps_per_print": QUIET_STEPS_PER_PRINT,
    }
    assert zero_stage(config) == 3


def test_defaults_accumulate_once_never_clip_and_stay_quiet():
    config = build_config()
    assert config == {
        "gradient_accumulation_steps": 1,
        "gradient_clipping": 0.0,
        "steps_per_print": QUIET_STEPS_PER_PRINT,
    }
    assert zero_stage(config) == 0
    assert build_config(steps_per_print=50)["steps_per_print"] == 50


def test_every_mmengine_section_argument_is_copied():
    sections = dict(
        zero_optimization=dict(stage=2),
        gradient_clipping=1.0,
        bf16=dict(enabled=True),
        amp=dict(enabled=False),
        activation_checkpointing=dict(partition_activations=True),
        aio=dict(block_size=1048576),
    )
    config = build_config(**sections)
    for key, value in sections.items():
        assert config[key] == value


def test_the_given_config_is_not_changed():
    given = dict(zero_optimization=dict(stage=1))
    build_config(given, zero_optimization=dict(stage=2), gradient_accumulation_steps=4)
    assert given == dict(zero_optimization=dict(stage=1))


def test_config_is_read_from_a_json_file(tmp_path):
    path = tmp_path / "ds.json"
    path.write_text(json.dumps(dict(zero_optimization=dict(stage=2), train_batch_size=8)))
    assert read_config(path) == dict(zero_optimization=dict(stage=2), train_batch_size=8)
    assert build_config(str(path), gradient_clipping=2.0)["gradient_clipping"] == 2.0


def test_missing_config_file_names_the_path(tmp_path):
    missing = tmp_path / "nope.json"
    with pytest.raises(FileNotFoundError, match=r"config='.*nope\.json'\): no such file"):
        build_config(str(missing))


def test_invalid_json_names_the_path_and_the_line(tmp_path):
    path = tmp_path / "bad.json"
    path.write_text('{\n  "train_batch_size": 8,\n}\n')
    with pytest.raises(ValueError, match=r"bad\.json'\) is not valid JSON: .* at line 3"):
        read_config(path)


def test_json_that_is_not_an_object_is_refused(tmp_path):
    path = tmp_path / "list.json"
    path.write_text("[1, 2]")
    with pytest.raises(TypeError, match="holds a JSON list, not an object"):
        read_config(path)


def test_config_of_another_type_is_refused():
    with pytest.raises(TypeError, match=r"config must be a dict, a path .* got int: 3"):
        read_config(3)


def test_zero_stage_outside_0_to_3_is_refused():
    with pytest.raises(ValueError, match=r"zero_optimization\.stage must be 0, 1, 2 or 3, got 4"):
        build_config(zero_optimization=dict(stage=4))
    with pytest.raises(TypeError, match=r"zero_optimization must be a dict .* got int: 2"):
        build_config(dict(zero_optimization=2))


def test_fp16_and_bf16_together_are_refused():
    with pytest.raises(ValueError, match="enables both fp16 and bf16: choose one"):
        build_config(fp16=dict(enabled=True), bf16=dict(enabled=True))
    # Disabled sections do not conflict.
    build_config(fp16=dict(enabled=False), bf16=dict(enabled=True))


def test_batch_sizes_must_be_positive_ints():
    with pytest.raises(ValueError, match="gradient_accumulation_steps must be an int >= 1, got 0"):
        build_config(gradient_accumulation_steps=0)
    with pytest.raises(ValueError, match=r"train_batch_size must be an int >= 1, got 2.5"):
        build_config(dict(train_batch_size=2.5))


def test_activation_checkpointing_is_deepspeeds_section_or_treadles_modules():
    assert is_deepspeed_checkpointing(dict(partition_activations=True, cpu_checkpointing=False))
    assert not is_deepspeed_checkpointing(dict(module_classes="Block"))
    assert not is_deepspeed_checkpointing(["layer1", "layer2"])
    with pytest.raises(ValueError, match=r"mixes DeepSpeed's section keys .* with treadle's"):
        is_deepspeed_checkpointing(dict(partition_activations=True, modules=["layer1"]))


# -- batch sizes ------------------------------------------------------------------------------


def test_batch_sizes_are_filled_in_from_the_dataloader():
    config = dict(gradient_accumulation_steps=2)
    reconcile_batch_size(config, loader_batch_size=4, world_size=2)
    assert config["train_micro_batch_size_per_gpu"] == 4
    assert config["train_batch_size"] == 16


def test_a_consistent_train_batch_size_is_kept():
    config = dict(gradient_accumulation_steps=2, train_batch_size=16)
    reconcile_batch_size(config, loader_batch_size=4, world_size=2)
    assert config["train_batch_size"] == 16


def test_train_batch_size_that_contradicts_the_dataloader_names_every_number():
    config = dict(gradient_accumulation_steps=2, train_batch_size=32)
    with pytest.raises(ValueError) as error:
        reconcile_batch_size(config, loader_batch_size=4, world_size=2)
    assert str(error.value) == (
        "DeepSpeed train_batch_size is 32, but this run trains on 16 samples per optimizer "
        "step: train_dataloader.batch_size (4) x world size (2) x gradient_accumulation_steps "
        "(2); remove train_batch_size from the DeepSpeed config (it is computed) or change the "
        "dataloader's batch_size"
    )


def test_micro_batch_that_contradicts_the_dataloader_is_refused():
    config = dict(gradient_accumulation_steps=1, train_micro_batch_size_per_gpu=8)
    with pytest.raises(
        ValueError,
        match=r"train_micro_batch_size_per_gpu is 8 but train_dataloader's batch_size is 4",
    ):
        reconcile_batch_size(config, loader_batch_size=4, world_size=1)


def test_without_a_dataloader_the_config_decides():
    config = dict(gradient_accumulation_steps=1, train_batch_size=12)
    reconcile_batch_size(config, loader_batch_size=None, world_size=3)
    assert config["train_micro_batch_size_per_gpu"] == 4
    config = dict(gradient_accumulation_steps=1, train_micro_batch_size_per_gpu=2)
    reconcile_batch_size(config, loader_batch_size=None, world_size=3)
    assert config["train_batch_size"] == 6
    with pytest.raises(
        ValueError, match="train_micro_batch_size_per_gpu \\(2\\) x world size \\(3\\)"
    ):
        reconcile_batch_size(
            dict(
                gradient_accumulation_steps=1, train_micro_batch_size_per_gpu=2, train_batch_size=4
            ),
            loader_batch_size=None,
            world_size=3,
        )


def test_no_batch_size_anywhere_says_where_to_give_one():
    with pytest.raises(
        ValueError, match="DeepSpeed needs a batch size: give the run a train_dataloader"
    ):
        reconcile_batch_size(dict(gradient_accumulation_steps=1), None, world_size=1)


def test_train_batch_size_not_divisible_is_refused():
    with pytest.raises(
        ValueError,
        match=re.escape(
            "train_batch_size 10 is not divisible by gradient_accumulation_steps (1) x world "
            "size (4)"
        ),
    ):
        reconcile_batch_size(dict(gradient_accumulation_steps=1, train_batch_size=10), None, 4)


# -- deepspeed missing -------------------------------------------------------------------------


@pytest.fixture
def without_deepspeed(monkeypatch):
    # None in sys.modules makes `import deepspeed` raise ImportError, installed or not.
    monkeypatch.setitem(sys.modules, "deepspeed", None)


def test_missing_deepspeed_names_the_extra(without_deepspeed):
    with pytest.raises(ImportError, match=r"pip install 'treadle-runner\[deepspeed\]'"):
        import_deepspeed()


def test_building_the_strategy_without_deepspeed_names_the_extra(without_deepspeed):
    with pytest.raises(
        ImportError,
        match=r"DeepSpeedStrategy needs the deepspeed package.*treadle-runner\[deepspeed\]",
    ):
        STRATEGIES.build(dict(type="DeepSpeedStrategy", zero_optimization=dict(stage=2)))


def test_registering_the_classes_does_not_import_deepspeed():
    code = (
        "import sys\n"
        "from treadle.runner.registry import STRATEGIES, OPTIM_WRAPPERS, MODEL_WRAPPERS\n"
        "import treadle.runner.strategies\n"
        "assert STRATEGIES.get('DeepSpeedStrategy') is not None\n"
        "assert OPTIM_WRAPPERS.get('DeepSpeedOptimWrapper') is not None\n"
        "assert MODEL_WRAPPERS.get('MMDeepSpeedEngineWrapper') is not None\n"
        "print('deepspeed' in sys.modules)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "False"


# -- optimizer wrapper and model wrapper with a stand-in engine -------------------------------


class StandInEngine(nn.Module):
    """What the wrappers call on a DeepSpeed engine, with plain PyTorch underneath."""

    def __init__(self, module, optimizer=None, fp16=False):
        super().__init__()
        self.module = module
        self.optimizer = optimizer
        self.fp16 = fp16
        self.calls = []

    def forward(self, *args, **kwargs):
        self.calls.append(("forward", kwargs.get("mode")))
        return self.module(*args, **kwargs)

    def backward(self, loss):
        self.calls.append(("backward", None))
        loss.backward()

    def step(self):
        self.calls.append(("step", None))
        self.optimizer.step()
        self.optimizer.zero_grad()

    def zero_grad(self):
        self.calls.append(("zero_grad", None))

    def fp16_enabled(self):
        return self.fp16

    def bfloat16_enabled(self):
        return False


def _toy_batch():
    return dict(
        inputs=[torch.tensor([1.0, 2.0]), torch.tensor([0.5, -1.0])],
        data_samples=[torch.tensor(1.0), torch.tensor(0.0)],
    )


def test_optim_wrapper_steps_through_the_engine():
    model = ToyModel()
    wrapper = OPTIM_WRAPPERS.build(
        dict(type="DeepSpeedOptimWrapper", optimizer=torch.optim.SGD(model.parameters(), lr=0.1))
    )
    engine = StandInEngine(model, wrapper.optimizer)
    wrapper.model = engine
    before = [p.detach().clone() for p in model.parameters()]
    loss = sum(model(**model.data_preprocessor(_toy_batch(), True), mode="loss").values())
    wrapper.update_params(loss)
    assert engine.calls == [("backward", None), ("step", None)]
    assert wrapper.inner_count == 1
    assert any(not torch.equal(a, b) for a, b in zip(before, model.parameters(), strict=True))
    wrapper.zero_grad()
    assert engine.calls[-1] == ("zero_grad", None)
    # The engine decides when gradients are reduced: no no_sync context.
    with wrapper.optim_context(model):
        pass


def test_optim_wrapper_keeps_only_its_own_state():
    model = nn.Sequential(nn.Linear(2, 2), nn.Linear(2, 1))
    groups = [dict(params=model[0].parameters(), lr=0.1), dict(params=model[1].parameters())]
    wrapper = DeepSpeedOptimWrapper(torch.optim.SGD(groups, lr=0.01))
    state = wrapper.state_dict()
    assert list(state) == ["base_param_settings"]
    assert state["base_param_settings"]["lr"] == 0.01
    state["base_param_settings"]["lr"] = 0.5
    wrapper.load_state_dict(state)
    assert wrapper.get_lr()["base_lr"] == [0.5]
    single = DeepSpeedOptimWrapper(torch.optim.SGD(model.parameters(), lr=0.01))
    assert single.state_dict() == {}


def test_optim_wrapper_without_engine_says_when_it_comes():
    wrapper = DeepSpeedOptimWrapper(torch.optim.SGD(nn.Linear(2, 1).parameters(), lr=0.1))
    with pytest.raises(
        RuntimeError, match="has no DeepSpeed engine yet: it is set when DeepSpeedStrategy builds"
    ):
        wrapper.backward(torch.tensor(1.0))


def test_optim_wrapper_refuses_arguments_the_engine_owns():
    optimizer = torch.optim.SGD(nn.Linear(2, 1).parameters(), lr=0.1)
    with pytest.raises(TypeError) as error:
        DeepSpeedOptimWrapper(optimizer, accumulative_counts=4, clip_grad=dict(max_norm=1.0))
    message = str(error.value)
    assert "accumulative_counts (use DeepSpeedStrategy(gradient_accumulation_steps=N))" in message
    assert "clip_grad (use DeepSpeedStrategy(gradient_clipping=max_norm))" in message


def test_model_wrapper_builds_the_engine_on_first_use_with_the_optimizer():
    model = ToyModel()
    built = []

    def build_engine(optim_wrapper, batch_size):
        built.append((optim_wrapper, batch_size))
        engine = StandInEngine(model, optim_wrapper.optimizer)
        optim_wrapper.model = engine
        return engine

    wrapper = MODEL_WRAPPERS.build(
        dict(type="MMDeepSpeedEngineWrapper", module=model, build_engine=build_engine)
    )
    assert wrapper.module is model and not wrapper.engine_built
    assert list(wrapper.state_dict()) == [f"module.{key}" for key in model.state_dict()]
    optim_wrapper = DeepSpeedOptimWrapper(torch.optim.SGD(model.parameters(), lr=0.1))
    log_vars = wrapper.train_step(_toy_batch(), optim_wrapper)
    assert set(log_vars) == {"loss"}
    log_vars = wrapper.train_step(_toy_batch(), optim_wrapper)
    assert built == [(optim_wrapper, 2)]
    engine = wrapper.model
    assert engine.calls[:3] == [("forward", "loss"), ("backward", None), ("step", None)]
    predictions = wrapper.val_step(_toy_batch())
    assert len(predictions) == 2 and engine.calls[-1] == ("forward", "predict")
    wrapper.test_step(_toy_batch())
    # The engine's methods through the wrapper, as MMEngine's wrapper offers them.
    assert wrapper.fp16_enabled() is False
    wrapper.eval()
    assert not model.training and not engine.training


def test_model_wrapper_takes_a_built_engine_as_mmengine():
    model = ToyModel()
    engine = StandInEngine(model)
    wrapper = MMDeepSpeedEngineWrapper(model=engine)
    assert wrapper.module is model and wrapper.model is engine


def test_model_wrapper_needs_an_engine_or_a_way_to_build_one():
    with pytest.raises(
        TypeError, match="needs model \\(a DeepSpeed engine\\), or module and build_engine"
    ):
        MMDeepSpeedEngineWrapper(module=nn.Linear(2, 1))


def test_inputs_to_half_casts_only_floating_tensors_of_the_named_inputs():
    class Recorder(nn.Module):
        def forward(self, inputs, data_samples, mode):
            self.seen = (inputs, data_samples)
            return []

    module = Recorder()
    engine = StandInEngine(module, fp16=True)
    wrapper = MMDeepSpeedEngineWrapper(model=engine, inputs_to_half=["inputs"])
    data = dict(inputs=torch.ones(2, 3), data_samples=torch.ones(2))
    wrapper._run_forward(engine, wrapper._cast_inputs_half(engine, data), "predict")
    assert module.seen[0].dtype == torch.float16
    assert module.seen[1].dtype == torch.float32
    labels = dict(inputs=[torch.ones(2), torch.tensor([1, 2])], data_samples=None)
    cast = wrapper._cast_inputs_half(engine, labels)
    assert cast["inputs"][0].dtype == torch.float16 and cast["inputs"][1].dtype == torch.int64
    by_position = MMDeepSpeedEngineWrapper(model=engine, inputs_to_half=[0])
    cast = by_position._cast_inputs_half(engine, (torch.ones(1), torch.ones(1)))
    assert (cast[0].dtype, cast[1].dtype) == (torch.float16, torch.float32)
    # Without fp16/bf16 nothing is cast.
    engine.fp16 = False
    assert wrapper._cast_inputs_half(engine, data)["inputs"].dtype == torch.float32


def test_batch_size_of_a_dataloader_batch():
    assert batch_size_of(_toy_batch()) == 2
    assert batch_size_of(dict(inputs=torch.zeros(5, 3))) == 5
    assert batch_size_of((torch.zeros(4, 2), torch.zeros(4))) == 4
    assert batch_size_of(dict(other=1)) is None
