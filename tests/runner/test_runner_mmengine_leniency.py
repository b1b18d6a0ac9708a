"""Runner inputs MMEngine accepts (treadle once refused them): parts given as a whole ``Config``
or any mapping, a built optimizer inside an optim_wrapper config, custom loops reading
``dataloader_iterator``; and MMEngine's error classes and phrases where both refuse, since
downstream tests match on them."""

from __future__ import annotations

from types import MappingProxyType

import pytest
import torch
from runner_toy_model import toy_cfg

from treadle.config import Config
from treadle.runner.hooks import get_priority
from treadle.runner.loops import IterBasedTrainLoop
from treadle.runner.loops.dataloader_iterator import InfiniteDataloaderIterator
from treadle.runner.optim import OptimWrapper
from treadle.runner.registry import LOOPS
from treadle.runner.runner import FlexibleRunner, Runner
from treadle.runner.strategies import SingleDeviceStrategy

QUIET = dict(checkpoint=None)


def make(tmp_path, **overrides) -> Runner:
    overrides.setdefault("default_hooks", QUIET)
    return Runner(**toy_cfg(tmp_path, **overrides))


# ---------------------------------------------------------------- parts as a Config or a mapping


def test_every_part_may_be_a_whole_config(tmp_path):
    cfg = toy_cfg(tmp_path)
    parts = (
        "model", "train_dataloader", "val_dataloader", "test_dataloader", "train_cfg", "val_cfg",
        "test_cfg", "optim_wrapper", "val_evaluator", "test_evaluator", "log_processor",
        "randomness", "env_cfg",
    )  # fmt: skip
    for part in parts:
        cfg[part] = Config(cfg[part])
    cfg["param_scheduler"] = [Config(cfg["param_scheduler"])]
    cfg["default_hooks"] = Config(dict(checkpoint=None, logger=dict(type="LoggerHook")))
    cfg["custom_hooks"] = [Config(dict(type="EMAHook"))]
    cfg["data_preprocessor"] = Config(dict(type="BaseDataPreprocessor"))
    runner = Runner(**cfg)
    runner.train()
    assert runner.iter == 12
    assert "acc" in runner.test()


def test_every_part_may_be_any_mapping(tmp_path):
    cfg = toy_cfg(tmp_path)
    for part in ("train_dataloader", "train_cfg", "optim_wrapper", "val_cfg", "env_cfg"):
        cfg[part] = MappingProxyType(cfg[part])
    runner = Runner(**cfg)
    runner.train()
    assert runner.iter == 12


def test_the_build_methods_take_a_config(tmp_path):
    runner = make(tmp_path)
    cfg = toy_cfg(tmp_path)
    loader = runner.build_dataloader(Config(cfg["train_dataloader"]))
    assert len(loader) == 4
    assert type(runner.build_model(Config(cfg["model"]))).__name__ == "ToyModel"
    loop = runner.build_train_loop(Config(dict(by_epoch=False, max_iters=3)))
    assert isinstance(loop, IterBasedTrainLoop)
    assert type(runner.build_val_loop(Config(dict()))).__name__ == "ValLoop"
    runner.optim_wrapper = runner.build_optim_wrapper(Config(cfg["optim_wrapper"]))
    assert isinstance(runner.optim_wrapper, OptimWrapper)
    schedulers = runner.build_param_scheduler(Config(dict(type="StepLR", step_size=1)))
    assert type(schedulers[0]).__name__ == "StepLR"
    assert len(runner.build_evaluator(Config(dict(type="RunnerToyMetric"))).metrics) == 1
    assert runner.build_log_processor(Config(dict(window_size=3))).window_size == 3
    hub = runner.build_message_hub(Config(dict(name=f"{runner.experiment_name}_cfg")))
    assert hub.instance_name.endswith("_cfg")


def test_a_flexible_runners_strategy_may_be_a_config(tmp_path):
    cfg = toy_cfg(tmp_path, default_hooks=QUIET)
    runner = FlexibleRunner(strategy=Config(dict(type="SingleDeviceStrategy")), **cfg)
    assert type(runner.strategy) is SingleDeviceStrategy


def test_a_built_optimizer_in_the_config_is_the_one_used(tmp_path):
    runner = make(tmp_path)
    optimizer = torch.optim.SGD(torch.nn.Linear(1, 1).parameters(), lr=0.1)
    wrapper = runner.build_optim_wrapper(dict(optimizer=optimizer))
    assert wrapper.optimizer is optimizer


# ---------------------------------------------------------------- loops and schedulers


@LOOPS.register_module(force=True)
class WarmupThenTrainLoop(IterBasedTrainLoop):
    """A custom loop as MMEngine's users write them: it reads the batches itself."""

    def run(self):
        self.runner.call_hook("before_train")
        self.runner.call_hook("before_train_epoch")
        while self.runner.iter < self.max_iters:
            self.run_iter(next(self.dataloader_iterator))
        self.runner.call_hook("after_train_epoch")
        self.runner.call_hook("after_train")


def test_a_custom_loop_reads_the_batches_through_dataloader_iterator(tmp_path):
    runner = make(
        tmp_path,
        train_cfg=dict(type="WarmupThenTrainLoop", max_iters=6, val_interval=100),
        param_scheduler=None,
    )
    runner.train()
    assert runner.iter == 6  # across the end of the 4 batches of a pass
    assert isinstance(runner.train_loop.dataloader_iterator, InfiniteDataloaderIterator)
    assert runner.train_loop.dataloader_iterator is runner.train_loop.dataloader_iterator


def test_build_param_scheduler_before_build_optim_wrapper(tmp_path):
    runner = make(tmp_path)
    with pytest.raises(
        AssertionError,
        match=r"build_param_scheduler needs the built optimizer wrapper: build_optim_wrapper "
        r"should be called before build_param_scheduler .* runner.optim_wrapper is a dict",
    ) as info:
        runner.build_param_scheduler(dict(type="StepLR", step_size=1))
    assert isinstance(info.value, RuntimeError)


# ---------------------------------------------------------------- auto_scale_lr


def test_scale_lr_errors_are_mmengines_assertion_errors(tmp_path):
    runner = make(tmp_path)
    wrapper = OptimWrapper(torch.optim.SGD(runner.model.parameters(), lr=0.01))
    with pytest.raises(
        AssertionError,
        match=r"auto_scale_lr.enable is True but auto_scale_lr has no 'base_batch_size'",
    ) as info:
        runner.scale_lr(wrapper, dict(enable=True))
    assert isinstance(info.value, KeyError)
    with pytest.raises(
        TypeError,
        match=r"scale_lr should be called after building OptimWrapper: it scales the learning "
        r"rates of the built optimizer wrapper \(build_optim_wrapper\), got dict",
    ) as info:
        runner.scale_lr(dict(optimizer=dict(type="SGD")), dict(enable=True, base_batch_size=3))
    assert isinstance(info.value, AssertionError)
    runner.optim_wrapper = wrapper
    runner.param_schedulers = runner.build_param_scheduler(dict(type="StepLR", step_size=1))
    with pytest.raises(
        RuntimeError, match=r"scale_lr should be called before building the parameter schedulers"
    ):
        runner.scale_lr(wrapper, dict(enable=True, base_batch_size=3))


# ---------------------------------------------------------------- MMEngine's phrases


@pytest.mark.parametrize(
    ("method", "message"),
    [
        ("build_model", r"model should be an nn.Module or a config dict, got str: 'x'"),
        ("build_visualizer", r"visualizer should be a Visualizer, a config dict or None, got str"),
        ("build_message_hub", r"message_hub should be a dict \(MessageHub's arguments\) or None"),
        (
            "build_optim_wrapper",
            r"optim_wrapper: the optimizer wrapper should be an OptimWrapper or a config dict, "
            r"got str: 'x'",
        ),
        (
            "build_evaluator",
            r"evaluator should be an Evaluator, a metric config or a list of them, got str",
        ),
        ("build_train_loop", r"train_cfg should be a loop or a dict, got str: 'x'"),
        ("build_val_loop", r"val_cfg should be a loop or a dict, got str: 'x'"),
        ("build_test_loop", r"test_cfg should be a loop or a dict, got str: 'x'"),
        ("build_log_processor", r"log_processor should be a LogProcessor or a config dict"),
        ("register_hook", r"hook should be an instance of Hook or dict \(a HOOKS config\)"),
    ],
)
def test_type_errors_hold_mmengines_phrase(tmp_path, method, message):
    runner = make(tmp_path)
    with pytest.raises(TypeError, match=message):
        getattr(runner, method)("x")


def test_a_loop_config_with_type_and_by_epoch(tmp_path):
    runner = make(tmp_path)
    with pytest.raises(
        RuntimeError,
        match=r"Only one of type and by_epoch can be in train_cfg, which has both "
        r"type='EpochBasedTrainLoop' and by_epoch",
    ):
        runner.build_train_loop(dict(type="EpochBasedTrainLoop", by_epoch=True, max_epochs=1))


def test_a_hook_priority_of_the_wrong_type():
    with pytest.raises(
        TypeError,
        match=r"a hook priority must be an integer or Priority enum value \(or a level name "
        r"such as 'NORMAL'\), got list: \[10\]",
    ):
        get_priority([10])
