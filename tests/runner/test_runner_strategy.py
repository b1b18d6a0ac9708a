"""The Runner and FlexibleRunner work through their strategy: every checkpoint is written with
``strategy.write_checkpoint`` and read with ``read_checkpoint`` + ``load_*_state_dict``,
asynchronous writes are waited for, strategies are built by name (errors name the closest),
and in a 2-process gloo group (workers/runner_strategy_scenarios.py) the plain Runner with a
launcher and FlexibleRunner(strategy=DDPStrategy) train to the same weights."""

from __future__ import annotations

from pathlib import Path

import gloo_group
import pytest
import torch
from runner_toy_model import toy_cfg

from treadle.runner.hooks import Hook
from treadle.runner.registry import STRATEGIES
from treadle.runner.runner import FlexibleRunner, Runner
from treadle.runner.strategies import SingleDeviceStrategy
from treadle.runner.strategies.checkpoint_io import CheckpointIO

SCENARIOS = Path(__file__).parent / "workers" / "runner_strategy_scenarios.py"
NO_VAL = dict(val_dataloader=None, val_cfg=None, val_evaluator=None)


class RecordingIO(CheckpointIO):
    """The base IO, recording each call."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: list = []

    def save(self, checkpoint, filepath, *, backend_args=None, async_save=False):
        self.calls.append(("save", Path(filepath).name, async_save))
        super().save(checkpoint, filepath, backend_args=backend_args, async_save=async_save)

    def load(self, filepath, *, map_location="cpu", template=None):
        self.calls.append(("load", Path(filepath).name, sorted(template or {})))
        return super().load(filepath, map_location=map_location, template=template)

    def wait(self):
        self.calls.append(("wait",))


@STRATEGIES.register_module()
class RecordingStrategy(SingleDeviceStrategy):
    """One device; records the state calls the runner makes and what its IO does."""

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.checkpoint_io = RecordingIO()
        self.calls: list[str] = []

    def model_state_dict(self):
        self.calls.append("model_state_dict")
        return super().model_state_dict()

    def optim_state_dict(self):
        self.calls.append("optim_state_dict")
        return super().optim_state_dict()

    def load_model_state_dict(self, state_dict, **kwargs):
        self.calls.append("load_model_state_dict")
        super().load_model_state_dict(state_dict, **kwargs)

    def load_optim_state_dict(self, state_dict):
        self.calls.append("load_optim_state_dict")
        super().load_optim_state_dict(state_dict)


def flexible(work_dir, strategy, **overrides) -> FlexibleRunner:
    cfg = toy_cfg(work_dir, **overrides)
    return FlexibleRunner(cfg.pop("model"), strategy=strategy, **cfg)


def test_checkpoints_are_written_and_read_through_the_strategy(tmp_path):
    runner = flexible(tmp_path / "a", dict(type="RecordingStrategy"), **NO_VAL)
    runner.train()
    strategy = runner.strategy
    assert strategy.work_dir == str(tmp_path / "a")  # FlexibleRunner passes its own
    assert strategy.experiment_name == runner.experiment_name
    calls = strategy.checkpoint_io.calls
    assert [call for call in calls if call[0] != "wait"] == [
        ("save", "epoch_1.pth", False),
        ("save", "epoch_2.pth", False),
        ("save", "epoch_3.pth", False),
    ]
    assert calls[-1] == ("wait",)  # train() returns once every write is done
    assert strategy.calls == ["model_state_dict", "optim_state_dict"] * 3

    resumed = flexible(
        tmp_path / "b", dict(type="RecordingStrategy"), resume=str(tmp_path / "a" / "epoch_2.pth"),
        train_cfg=dict(by_epoch=True, max_epochs=3), default_hooks=dict(checkpoint=None), **NO_VAL,
    )  # fmt: skip
    resumed.train()
    calls = resumed.strategy.checkpoint_io.calls
    assert [call for call in calls if call[0] != "wait"] == [
        ("load", "epoch_2.pth", ["optimizer", "state_dict"])
    ]
    assert calls[-1] == ("wait",)
    assert resumed.strategy.calls == ["load_model_state_dict", "load_optim_state_dict"]
    for name, value in runner.model.state_dict().items():
        assert torch.equal(value, resumed.model.state_dict()[name])


def test_load_from_loads_weights_through_the_strategy(tmp_path):
    first = Runner(**toy_cfg(tmp_path / "a", **NO_VAL))
    first.train()
    runner = flexible(
        tmp_path / "b",
        dict(type="RecordingStrategy"),
        load_from=str(tmp_path / "a" / "epoch_3.pth"),
    )
    runner.test()
    assert runner.strategy.calls == ["load_model_state_dict"]
    for name, value in first.model.state_dict().items():
        assert torch.equal(runner.model.state_dict()[name], value)


def test_async_save_reaches_the_checkpoint_io(tmp_path):
    runner = flexible(tmp_path, dict(type="RecordingStrategy"), **NO_VAL)
    runner.train()
    runner.strategy.checkpoint_io.calls.clear()
    runner.save_checkpoint(str(tmp_path), "extra.pth", async_save=True)
    calls = runner.strategy.checkpoint_io.calls
    assert [call for call in calls if call[0] != "wait"] == [("save", "extra.pth", True)]


def test_writes_are_waited_for_when_the_loop_raises(tmp_path):
    class Boom(Hook):
        def after_train_iter(self, runner, batch_idx, data_batch=None, outputs=None):
            raise RuntimeError("boom")

    runner = flexible(tmp_path, dict(type="RecordingStrategy"), custom_hooks=[Boom()], **NO_VAL)
    with pytest.raises(RuntimeError, match="boom"):
        runner.train()
    assert runner.strategy.checkpoint_io.calls[-1] == ("wait",)


def test_unknown_strategy_names_the_closest(tmp_path):
    with pytest.raises(KeyError, match=r"DDPStrategi is not in the treadle::strategy registry.*"
                       r"Did you mean 'DDPStrategy'") as error:  # fmt: skip
        flexible(tmp_path, dict(type="DDPStrategi"))
    assert "while building the strategy {'type': 'DDPStrategi'}" in error.value.__notes__
    with pytest.raises(KeyError, match=r"has no 'type': name one of .*SingleDeviceStrategy"):
        flexible(tmp_path, dict(model_wrapper=None))
    with pytest.raises(TypeError, match=r"got unknown arguments 'find_unused_params' \(did you "
                       r"mean 'find_unused_parameters'\?\)"):  # fmt: skip
        flexible(tmp_path, dict(type="SingleDeviceStrategy", find_unused_params=True))


def test_model_wrapper_cfg_of_an_unknown_type(tmp_path):
    cfg = toy_cfg(tmp_path)
    with pytest.raises(
        KeyError,
        match=r"model_wrapper_cfg: MMDistributedDataParalel is not in the treadle::model_wrapper "
        r"registry.*Did you mean 'MMDistributedDataParallel'",
    ):
        Runner(**cfg, cfg=dict(model_wrapper_cfg=dict(type="MMDistributedDataParalel")))
    with pytest.raises(TypeError, match=r"model_wrapper_cfg must be a dict .* got str"):
        Runner(**toy_cfg(tmp_path), cfg=dict(model_wrapper_cfg="MMDistributedDataParallel"))


def test_one_process_picks_single_device_and_flexible_wraps_late(tmp_path):
    runner = Runner(**toy_cfg(tmp_path / "a", **NO_VAL))
    assert type(runner.strategy) is SingleDeviceStrategy
    default = flexible(tmp_path / "b", None, **NO_VAL)
    assert type(default.strategy) is SingleDeviceStrategy
    runner.train()
    default.train()
    for name, value in runner.model.state_dict().items():
        assert torch.equal(value, default.model.state_dict()[name])


@STRATEGIES.register_module()
class HalvingLrStrategy(SingleDeviceStrategy):
    """Adjusts optimizer wrapper configs, as FSDPStrategy does for AmpOptimWrapper."""

    def adjust_optim_wrapper_cfg(self, cfg):
        cfg = dict(cfg, optimizer=dict(cfg["optimizer"]))
        cfg["optimizer"]["lr"] = cfg["optimizer"]["lr"] / 2
        return cfg


def test_the_strategy_adjusts_the_optim_wrapper_config(tmp_path):
    runner = flexible(tmp_path, dict(type="HalvingLrStrategy"), **NO_VAL, param_scheduler=None)
    configured = toy_cfg(tmp_path)["optim_wrapper"]["optimizer"]["lr"]
    runner.train()
    assert runner.optim_wrapper.optimizer.param_groups[0]["lr"] == configured / 2


def test_flexible_runner_initializes_weights_before_wrapping(tmp_path):
    order: list[str] = []

    class Ordered(SingleDeviceStrategy):
        def wrap_model(self, model):
            order.append("wrap")
            return super().wrap_model(model)

    runner = flexible(tmp_path, Ordered(), **NO_VAL)
    inner = runner.model
    init_weights = inner.init_weights

    def recorded():
        order.append("init_weights")
        init_weights()

    inner.init_weights = recorded
    assert order == []  # nothing is wrapped when the runner is built
    runner.train()
    assert order == ["init_weights", "wrap"]


def test_activation_checkpointing_through_the_strategy(tmp_path):
    runner = Runner(
        **toy_cfg(tmp_path, **NO_VAL),
        cfg=dict(activation_checkpointing=dict(module_classes=["Linear"])),
    )
    runner.train()
    assert all(
        getattr(module.forward, "__treadle_checkpointed__", False)
        for module in runner.model.modules()
        if isinstance(module, torch.nn.Linear)
    )


# -- a real process group -----------------------------------------------------------------


@pytest.fixture(scope="module")
def group(tmp_path_factory):
    results = gloo_group.run_group(SCENARIOS, 2, tmp_path_factory.mktemp("runner_strategy"))
    return lambda rank, name: gloo_group.scenario_value(results, rank, name)


def test_plain_runner_and_flexible_runner_train_alike_with_ddp(group):
    for rank in range(2):
        plain = group(rank, "scenario_plain_runner_picks_ddp")
        flex = group(rank, "scenario_flexible_runner_with_ddp")
        assert plain["strategy"] == "DDPStrategy"
        assert plain["wrapper"] == flex["wrapper"] == "MMDistributedDataParallel"
        assert flex["before"] == "ToyModel"
        assert plain["weights"] == flex["weights"]
    assert (
        group(0, "scenario_plain_runner_picks_ddp")["weights"]
        == group(1, "scenario_plain_runner_picks_ddp")["weights"]
    )


def test_rank_0_alone_builds_a_whole_file_checkpoint(group):
    writes = [group(rank, "scenario_flexible_runner_with_ddp")["writes"] for rank in range(2)]
    assert [name for name, _ in writes[0]] == ["epoch_1.pth", "epoch_2.pth", "epoch_3.pth"]
    assert all("state_dict" in keys and "optimizer" in keys for _, keys in writes[0])
    assert writes[1] == [(name, []) for name, _ in writes[0]]


def test_every_rank_builds_when_the_strategy_computes_its_state(group):
    for rank in range(2):
        writes = group(rank, "scenario_every_rank_builds_the_checkpoint")["writes"]
        assert len(writes) == 3 and all("state_dict" in keys for _, keys in writes)


def test_flexible_runner_resumes_exactly_on_two_ranks(group):
    for rank in range(2):
        resumed = group(rank, "scenario_flexible_runner_resumes_on_two_ranks")
        assert resumed["iter"] == 6  # 3 epochs of 2 iterations per rank
        assert resumed["weights"] == group(rank, "scenario_flexible_runner_with_ddp")["weights"]
