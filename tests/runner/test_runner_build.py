"""Runner construction: what it builds, where its files go, its properties, its hooks, and
from_cfg / FlexibleRunner."""

from __future__ import annotations

import os

import pytest
import torch
from runner_toy_model import ToyModel, toy_cfg, toy_two_optim_cfg, unique_name
from torch import nn
from torch.utils.data import DataLoader

from treadle.config import Config
from treadle.logging import MessageHub, MMLogger
from treadle.runner.evaluator import Evaluator
from treadle.runner.hooks import Hook, Priority
from treadle.runner.optim import OptimWrapper, OptimWrapperDict
from treadle.runner.runner import FlexibleRunner, Runner
from treadle.runner.strategies import SingleDeviceStrategy
from treadle.visual import Visualizer

QUIET = dict(checkpoint=None)


def make(tmp_path, **overrides) -> Runner:
    overrides.setdefault("default_hooks", QUIET)
    return Runner(**toy_cfg(tmp_path, **overrides))


def test_components_and_properties(tmp_path):
    runner = make(tmp_path)
    assert isinstance(runner.model, ToyModel)
    assert runner.model_name == "ToyModel"
    assert runner.work_dir == str(tmp_path)
    assert runner.log_dir == os.path.join(str(tmp_path), runner.timestamp)
    assert runner.experiment_name.endswith(runner.timestamp)
    assert (runner.rank, runner.world_size, runner.distributed) == (0, 1, False)
    assert (runner.launcher, runner.seed, runner.deterministic) == ("none", 0, False)
    assert isinstance(runner.logger, MMLogger)
    assert isinstance(runner.message_hub, MessageHub)
    assert isinstance(runner.visualizer, Visualizer)
    assert runner.logger.instance_name == runner.experiment_name
    assert runner.message_hub.instance_name == runner.experiment_name
    assert isinstance(runner.strategy, SingleDeviceStrategy)
    # Loops are built on first access; the epoch-based toy run has 3 epochs of 4 batches.
    assert (runner.max_epochs, runner.max_iters, runner.epoch, runner.iter) == (3, 12, 0, 0)
    assert isinstance(runner.train_dataloader, DataLoader)
    assert len(runner.val_dataloader) == 4 and len(runner.test_dataloader) == 4
    assert isinstance(runner.val_evaluator, Evaluator)
    assert isinstance(runner.test_evaluator, Evaluator)
    assert (runner.val_interval, runner.val_begin) == (1, 1)


def test_work_dir_layout(tmp_path):
    cfg = Config(toy_cfg(tmp_path / "w"))
    runner = Runner.from_cfg(cfg)
    runner.train()
    stamp = runner.timestamp
    work_dir = tmp_path / "w"
    assert (work_dir / stamp / f"{stamp}.log").is_file()
    assert (work_dir / stamp / "vis_data" / "scalars.json").is_file()
    # The config goes to vis_data (visualizer) and to work_dir (dump_config), as MMEngine.
    assert (work_dir / stamp / "vis_data" / "config.py").is_file()
    assert (work_dir / f"{stamp}.py").is_file()
    assert sorted(p.name for p in work_dir.glob("*.pth")) == [
        "epoch_1.pth",
        "epoch_2.pth",
        "epoch_3.pth",
    ]
    assert (work_dir / "last_checkpoint").read_text().strip().endswith("epoch_3.pth")
    log = (work_dir / stamp / f"{stamp}.log").read_text()
    assert "Epoch(train) [3][4/4]" in log and "Epoch(val) [3][4/4]" in log


def test_dump_config_uses_the_config_file_name(tmp_path):
    path = tmp_path / "my_config.py"
    cfg = toy_cfg(tmp_path / "w")
    del cfg["experiment_name"]
    Config(cfg).dump(str(path))
    runner = Runner.from_cfg(Config.fromfile(str(path)))
    assert (tmp_path / "w" / "my_config.py").is_file()
    # MMEngine names the run after the config file.
    assert runner.experiment_name.startswith("my_config_")


def test_from_cfg_needs_model_and_work_dir(tmp_path):
    cfg = toy_cfg(tmp_path)
    del cfg["work_dir"]
    with pytest.raises(KeyError, match="no 'work_dir'"):
        Runner.from_cfg(cfg)


def test_experiment_names_are_unique_within_a_second(tmp_path):
    name = unique_name()
    first = make(tmp_path / "a", experiment_name=name)
    second = make(tmp_path / "b", experiment_name=name)
    assert first.experiment_name != second.experiment_name
    assert first.logger is not second.logger
    assert first.message_hub is not second.message_hub
    # Also when the loggers were cleared in between (MMEngine's tests do it in tearDown): the
    # run's message hub and visualizer still hold the name.
    MMLogger._instance_dict.clear()
    third = make(tmp_path / "c", experiment_name=name)
    assert third.experiment_name not in (first.experiment_name, second.experiment_name)
    assert third.visualizer is not first.visualizer


def test_built_objects_are_used_as_given(tmp_path):
    model = ToyModel()
    loader = Runner.build_dataloader(
        dict(
            dataset=dict(type="RunnerToyDataset"),
            sampler=dict(type="DefaultSampler", shuffle=False),
            batch_size=4,
        )
    )
    wrapper = OptimWrapper(torch.optim.SGD(model.parameters(), lr=0.1))
    runner = make(
        tmp_path,
        model=model,
        train_dataloader=loader,
        optim_wrapper=wrapper,
        param_scheduler=None,
        val_dataloader=None,
        val_cfg=None,
        val_evaluator=None,
    )
    assert runner.model is model
    assert runner.train_dataloader is loader
    runner.train()
    assert runner.optim_wrapper is wrapper
    assert runner.iter == 9


def test_data_preprocessor_is_merged_into_the_model_config(tmp_path):
    runner = make(tmp_path, data_preprocessor=dict(type="BaseDataPreprocessor", non_blocking=True))
    assert runner.model.data_preprocessor._non_blocking is True


def test_default_hooks_order_and_merge(tmp_path):
    runner = Runner(**toy_cfg(tmp_path))
    names = [type(hook).__name__ for hook in runner.hooks]
    assert names == [
        "RuntimeInfoHook",
        "IterTimerHook",
        "DistSamplerSeedHook",
        "LoggerHook",
        "ParamSchedulerHook",
        "CheckpointHook",
    ]
    runner = make(tmp_path, default_hooks=dict(timer=None, checkpoint=None))
    assert "IterTimerHook" not in [type(hook).__name__ for hook in runner.hooks]
    info = runner.get_hooks_info()
    assert "before_train_iter:" in info and "(VERY_HIGH   ) RuntimeInfoHook" in info


class Recorder(Hook):
    def __init__(self, label: str, calls: list) -> None:
        self.label = label
        self.calls = calls

    def before_train_epoch(self, runner) -> None:
        self.calls.append(self.label)


def test_register_hook_priorities(tmp_path):
    calls: list[str] = []
    runner = make(tmp_path, default_hooks=dict(checkpoint=None, logger=None, timer=None))
    runner.hooks.clear()
    runner.register_hook(Recorder("low", calls), priority="LOW")
    runner.register_hook(Recorder("first-normal", calls))
    runner.register_hook(Recorder("highest", calls), priority=Priority.HIGHEST)
    runner.register_hook(Recorder("second-normal", calls), priority=50)
    runner.call_hook("before_train_epoch")
    assert calls == ["highest", "first-normal", "second-normal", "low"]


def test_custom_hooks_from_configs_with_priority(tmp_path):
    runner = make(
        tmp_path,
        custom_hooks=[dict(type="EmptyCacheHook", priority="HIGHEST"), dict(type="EMAHook")],
    )
    names = [type(hook).__name__ for hook in runner.hooks]
    assert names[0] == "EmptyCacheHook"
    assert "EMAHook" in names


def test_call_hook_skips_hooks_that_do_nothing_and_calls_custom_points(tmp_path):
    class Custom(Hook):
        seen = 0

        def my_point(self, runner, value):
            Custom.seen += value

    runner = make(tmp_path)
    runner.register_hook(Custom())
    # Hook's own methods do nothing: only hooks that act at a point are called there.
    acting = [type(hook).__name__ for hook, _ in runner._dispatch.methods("before_train_iter")]
    assert acting == ["IterTimerHook"] or "Custom" not in acting
    runner.call_hook("my_point", value=3)
    assert Custom.seen == 3


def test_call_hook_names_the_hook_that_raised(tmp_path):
    class Broken(Hook):
        def before_train(self, runner):
            raise ValueError("boom")

    runner = make(tmp_path)
    runner.register_hook(Broken())
    with pytest.raises(ValueError, match="boom") as info:
        runner.call_hook("before_train")
    assert "raised by Broken.before_train" in info.value.__notes__


def test_two_optimizers_build_a_dict_of_wrappers_and_schedulers(tmp_path):
    runner = Runner(**toy_two_optim_cfg(tmp_path, default_hooks=QUIET))
    runner.train()
    assert isinstance(runner.optim_wrapper, OptimWrapperDict)
    assert sorted(runner.param_schedulers) == ["a", "b"]
    # a: milestones [1, 2] over 3 epochs; b: milestone [2].
    assert runner.optim_wrapper["a"].get_lr()["lr"][0] == pytest.approx(0.01 * 0.1**2)
    assert runner.optim_wrapper["b"].get_lr()["lr"][0] == pytest.approx(0.02 * 0.1)


def test_scheduler_end_defaults_to_the_end_of_training(tmp_path):
    runner = make(tmp_path, param_scheduler=dict(type="LinearLR", start_factor=0.5))
    runner.optim_wrapper = runner.build_optim_wrapper(runner.optim_wrapper)
    schedulers = runner.build_param_scheduler(runner.param_schedulers)
    assert schedulers[0].end == 3


def test_auto_scale_lr(tmp_path):
    runner = make(tmp_path, auto_scale_lr=dict(enable=True, base_batch_size=6))
    runner.train()
    # batch 3 on one process over base 6: lr 0.01 * 0.5, then MultiStepLR twice.
    assert runner.optim_wrapper.get_lr()["lr"][0] == pytest.approx(0.005 * 0.01)
    disabled = make(tmp_path / "off", auto_scale_lr=dict(enable=False, base_batch_size=6))
    disabled.train()
    assert disabled.optim_wrapper.get_lr()["lr"][0] == pytest.approx(0.01 * 0.01)


def test_auto_scale_lr_needs_base_batch_size(tmp_path):
    runner = make(tmp_path, auto_scale_lr=dict(enable=True))
    with pytest.raises(KeyError, match="base_batch_size"):
        runner.train()


def test_visualizer_from_config_and_object(tmp_path):
    runner = make(tmp_path, visualizer=dict(type="Visualizer", vis_backends=[]))
    assert runner.visualizer.instance_name == runner.experiment_name
    given = Visualizer.get_instance(unique_name("vis"))
    assert make(tmp_path / "b", visualizer=given).visualizer is given
    with pytest.raises(
        TypeError, match="visualizer should be a Visualizer, a config dict or None, got"
    ):
        make(tmp_path / "c", visualizer=3)


def test_evaluator_forms(tmp_path):
    runner = make(tmp_path)
    metric = dict(type="RunnerToyMetric")
    assert isinstance(runner.build_evaluator(metric), Evaluator)
    assert len(runner.build_evaluator([metric, metric]).metrics) == 2
    assert isinstance(runner.build_evaluator(dict(metrics=[metric])), Evaluator)
    with pytest.raises(
        TypeError, match="evaluator should be an Evaluator, a metric config or a list of them, got"
    ):
        runner.build_evaluator("RunnerToyMetric")


def test_flexible_runner_with_a_named_strategy(tmp_path):
    cfg = toy_cfg(tmp_path, default_hooks=QUIET)
    model = cfg.pop("model")
    runner = FlexibleRunner(model, strategy=dict(type="SingleDeviceStrategy"), **cfg)
    assert isinstance(runner.strategy, SingleDeviceStrategy)
    runner.train()
    assert runner.iter == 12
    with pytest.raises(TypeError, match="strategy must be a BaseStrategy"):
        FlexibleRunner(model, strategy="ddp", work_dir=str(tmp_path))


def test_flexible_runner_from_cfg_and_resume_path(tmp_path):
    first = Runner(**toy_cfg(tmp_path / "a"))
    first.train()
    cfg = toy_cfg(tmp_path / "b", resume=str(tmp_path / "a" / "epoch_2.pth"))
    runner = FlexibleRunner.from_cfg(cfg)
    runner.load_or_resume()
    assert runner.epoch == 2


def test_wrapped_model_without_wrapper_cfg_is_kept(tmp_path):
    class Wrapper(nn.Module):
        pass

    runner = make(tmp_path)
    assert runner.wrap_model(None, runner.model) is runner.model


def test_runners_registry_builds_runner_and_flexible_runner(tmp_path):
    from treadle.runner.registry import RUNNERS

    runner = RUNNERS.build(toy_cfg(tmp_path / "a", default_hooks=QUIET))
    assert type(runner) is Runner
    flexible = RUNNERS.build(
        toy_cfg(tmp_path / "b", default_hooks=QUIET, runner_type="FlexibleRunner")
    )
    assert type(flexible) is FlexibleRunner


def test_default_scope_is_set_for_the_run(tmp_path):
    from treadle.registry import DefaultScope

    runner = make(tmp_path, default_scope="treadle")
    assert DefaultScope.get_current_instance().scope_name == "treadle"
    assert runner.default_scope.scope_name == "treadle"
    assert make(tmp_path / "none", default_scope=None).default_scope is None


def test_log_records_environment_config_and_hooks(tmp_path):
    runner = Runner.from_cfg(Config(toy_cfg(tmp_path, default_hooks=QUIET)))
    log = (tmp_path / runner.timestamp / f"{runner.timestamp}.log").read_text()
    assert "System environment:" in log and "Runtime environment:" in log
    assert f"PyTorch: {torch.__version__}" in log
    assert "Config:" in log and "RunnerToyModel" in log
    assert "Hooks will be executed in the following order:" in log


def test_editing_the_hook_list_in_place_takes_effect(tmp_path):
    calls: list[str] = []
    runner = make(tmp_path)
    runner.call_hook("before_train_epoch")
    runner.hooks.append(Recorder("appended", calls))
    runner.call_hook("before_train_epoch")
    assert calls == ["appended"]
    runner.hooks.pop()
    runner.call_hook("before_train_epoch")
    assert calls == ["appended"]
    # MMEngine code assigns runner._hooks; duck-typed hooks (no Hook base) are called too.

    class Duck:
        priority = "NORMAL"

        def before_train_epoch(self, runner):
            calls.append("duck")

    runner._hooks = [Duck()]
    runner.call_hook("before_train_epoch")
    assert calls == ["appended", "duck"]
    assert runner.hooks[0].__class__ is Duck


def test_private_train_loop_holds_the_config_then_the_loop(tmp_path):
    # MMEngine's attribute, which toolbox hooks read (a dict means "not built yet") and
    # scripts assign: runner._train_loop = runner.build_train_loop(runner._train_loop).
    from treadle.runner.loops import EpochBasedTrainLoop

    runner = make(tmp_path)
    assert isinstance(runner._train_loop, dict)
    runner._train_loop = runner.build_train_loop(runner._train_loop)
    assert isinstance(runner._train_loop, EpochBasedTrainLoop)
    assert runner.train_loop is runner._train_loop
    assert (
        make(
            tmp_path,
            train_cfg=None,
            train_dataloader=None,
            optim_wrapper=None,
            param_scheduler=None,
        )._train_loop
        is None
    )
