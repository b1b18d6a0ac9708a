"""Bad input to the Runner: each error a user can make, and the message that names it."""

from __future__ import annotations

import logging

import pytest
from runner_toy_model import toy_cfg
from runner_toys import captured_log

from treadle.runner.hooks import Hook
from treadle.runner.runner import Runner

QUIET = dict(checkpoint=None)


def make(tmp_path, **overrides) -> Runner:
    overrides.setdefault("default_hooks", QUIET)
    return Runner(**toy_cfg(tmp_path, **overrides))


def notes(error: BaseException) -> str:
    return "\n".join(getattr(error, "__notes__", []))


# ---------------------------------------------------------------- unknown types


def test_unknown_model_type_names_the_registry_and_close_names(tmp_path):
    with pytest.raises(
        KeyError, match=r"RunnerToyModle is not in the treadle::model registry"
    ) as info:
        make(tmp_path, model=dict(type="RunnerToyModle"))
    assert "Did you mean 'RunnerToyModel'" in str(info.value)
    assert "while building model" in notes(info.value)


def test_unknown_hook_type_names_the_entry(tmp_path):
    with pytest.raises(KeyError, match=r"EMAHok is not in the treadle::hook registry") as info:
        make(tmp_path, custom_hooks=[dict(type="EMAHok")])
    assert "Did you mean 'EMAHook'" in str(info.value)
    assert "custom_hooks[0]" in notes(info.value)
    with pytest.raises(KeyError, match=r"LogerHook is not in the treadle::hook") as info:
        make(tmp_path, default_hooks=dict(logger=dict(type="LogerHook")))
    assert "Did you mean 'LoggerHook'" in str(info.value)


def test_unknown_loop_type(tmp_path):
    runner = make(tmp_path, train_cfg=dict(type="EpochBasedTrainLop", max_epochs=1))
    with pytest.raises(KeyError, match=r"EpochBasedTrainLop is not in the treadle::loop") as info:
        runner.train()
    assert "Did you mean 'EpochBasedTrainLoop'" in str(info.value)
    assert "train_cfg=" in notes(info.value)


def test_unknown_optimizer_type(tmp_path):
    runner = make(tmp_path, optim_wrapper=dict(optimizer=dict(type="SGDD", lr=0.1)))
    with pytest.raises(KeyError, match=r"SGDD is not in the treadle::optimizer registry") as info:
        runner.train()
    assert "Did you mean 'SGD'" in str(info.value)
    assert "optim_wrapper" in notes(info.value)


def test_unknown_scheduler_and_metric_and_dataset_types(tmp_path):
    runner = make(tmp_path, param_scheduler=dict(type="MultiStepLRR", milestones=[1]))
    with pytest.raises(KeyError, match=r"MultiStepLRR is not in the treadle::parameter scheduler"):
        runner.train()
    runner = make(tmp_path, val_evaluator=dict(type="RunnerToyMetrik"))
    with pytest.raises(KeyError, match=r"RunnerToyMetrik is not in the .*metric") as info:
        runner.val()
    assert "Did you mean" in str(info.value) and "RunnerToyMetric" in str(info.value)
    assert "while building the val loop" in notes(info.value)
    loader = dict(dataset=dict(type="RunnerToyDatset"), sampler=dict(type="DefaultSampler"))
    runner = make(tmp_path, train_dataloader=dict(loader, batch_size=3))
    with pytest.raises(KeyError, match=r"RunnerToyDatset.* is not in the .*dataset") as info:
        runner.train()
    assert "RunnerToyDataset" in str(info.value)


# ---------------------------------------------------------------- incomplete stages


def test_train_cfg_without_max_epochs_or_max_iters(tmp_path):
    with pytest.raises(KeyError, match=r"train_cfg has no 'max_epochs'"):
        make(tmp_path, train_cfg=dict(by_epoch=True, val_interval=1))
    with pytest.raises(KeyError, match=r"train_cfg has no 'max_iters'"):
        make(tmp_path, train_cfg=dict(by_epoch=False, val_interval=1))
    with pytest.raises(KeyError, match=r"neither 'max_epochs' nor 'max_iters'"):
        make(tmp_path, train_cfg=dict(val_interval=1))


def test_train_cfg_without_by_epoch_follows_the_max_it_names(tmp_path):
    runner = make(tmp_path, train_cfg=dict(max_iters=5), param_scheduler=None)
    assert type(runner.train_loop).__name__ == "IterBasedTrainLoop"
    runner = make(tmp_path, train_cfg=dict(max_epochs=1))
    assert type(runner.train_loop).__name__ == "EpochBasedTrainLoop"


def test_train_cfg_with_type_and_by_epoch(tmp_path):
    runner = make(tmp_path, train_cfg=dict(type="EpochBasedTrainLoop", by_epoch=True, max_epochs=1))
    with pytest.raises(RuntimeError, match=r"both type='EpochBasedTrainLoop' and by_epoch"):
        runner.train()


def test_val_cfg_without_val_dataloader_or_evaluator(tmp_path):
    with pytest.raises(
        ValueError, match=r"val_dataloader, val_cfg and val_evaluator should be either all None"
    ) as info:
        make(tmp_path, val_dataloader=None, val_evaluator=None)
    assert "val_cfg is set but val_dataloader and val_evaluator are not" in str(info.value)
    with pytest.raises(ValueError, match=r"val_evaluator is not"):
        make(tmp_path, val_evaluator=None)


def test_val_dataloader_and_evaluator_without_val_cfg(tmp_path):
    with pytest.raises(ValueError, match=r"val_dataloader and val_evaluator are set but val_cfg"):
        make(tmp_path, val_cfg=None)


def test_incomplete_train_and_test_stages(tmp_path):
    with pytest.raises(
        ValueError,
        match=r"train_dataloader, train_cfg and optim_wrapper should be either all None or not "
        r"None: training needs them together, and train_dataloader and train_cfg are set but "
        r"optim_wrapper is not",
    ):
        make(tmp_path, optim_wrapper=None, param_scheduler=None)
    with pytest.raises(
        ValueError, match=r"test_dataloader, test_cfg and test_evaluator should be either all "
    ):
        make(tmp_path, test_evaluator=None)


def test_param_scheduler_without_optim_wrapper(tmp_path):
    with pytest.raises(
        ValueError, match=r"param_scheduler should be None when optim_wrapper is None: schedulers"
    ):
        make(
            tmp_path,
            optim_wrapper=None,
            train_dataloader=None,
            train_cfg=None,
        )


def test_epoch_based_scheduler_in_an_iteration_based_loop_is_run_with_a_warning(tmp_path):
    # MMEngine runs it as written (it steps once, at the end): so does treadle, and says so.
    runner = make(tmp_path, train_cfg=dict(by_epoch=False, max_iters=4))
    with captured_log(runner.logger) as log:
        runner.train()
    assert runner.iter == 4
    warned = [r.getMessage() for r in log.records if r.levelno == logging.WARNING]
    assert any(
        "param_scheduler[0] (MultiStepLR) has by_epoch=True, but the train loop is "
        "iteration-based: it would step only once, at the end of training."
        in message
        and message.endswith("The run goes on with it as written, as MMEngine's does.")
        for message in warned
    ), warned
    converted = dict(type="MultiStepLR", milestones=[1], convert_to_iter_based=True)
    runner = make(tmp_path, train_cfg=dict(by_epoch=False, max_iters=4), param_scheduler=converted)
    with captured_log(runner.logger) as log:
        runner.train()
    assert runner.iter == 4
    assert not any("has by_epoch=True" in r.getMessage() for r in log.records)


def test_param_scheduler_config_without_type(tmp_path):
    # KeyErrors and TypeErrors that are also MMEngine's AssertionErrors.
    with pytest.raises(
        KeyError,
        match=r"param_scheduler\[0\] has no 'type' \(each parameter scheduler should contain the "
        r"key type\)",
    ) as info:
        make(tmp_path, param_scheduler=[dict(milestones=[1])])
    assert isinstance(info.value, AssertionError)
    with pytest.raises(TypeError, match=r"`param_scheduler` should be a scheduler or its config"):
        make(tmp_path, param_scheduler="MultiStepLR")
    with pytest.raises(
        TypeError,
        match=r"Each value of `param_scheduler` should be a dict or a list when it maps "
        r"optimizer names to their schedulers: param_scheduler\['linear1'\] is a str",
    ) as info:
        make(tmp_path, param_scheduler=dict(linear1="MultiStepLR"))
    assert isinstance(info.value, AssertionError)


def test_run_without_the_stage(tmp_path):
    runner = make(
        tmp_path,
        train_dataloader=None,
        train_cfg=None,
        optim_wrapper=None,
        param_scheduler=None,
        val_dataloader=None,
        val_cfg=None,
        val_evaluator=None,
        test_dataloader=None,
        test_cfg=None,
        test_evaluator=None,
    )
    with pytest.raises(
        RuntimeError, match=r"train\(\) needs a train loop, which should not be None: give the"
    ):
        runner.train()
    with pytest.raises(RuntimeError, match=r"val\(\) needs a val loop, which should not be None"):
        runner.val()
    with pytest.raises(RuntimeError, match=r"test\(\) needs a test loop, which should not be"):
        runner.test()
    with pytest.raises(
        RuntimeError,
        match=r"no train loop \(it should not be None here\): give it train_dataloader",
    ):
        _ = runner.train_dataloader
    assert (runner.epoch, runner.iter, runner.max_epochs, runner.max_iters) == (0, 0, 0, 0)


# ---------------------------------------------------------------- hooks


def test_default_hooks_entry_that_is_not_a_dict(tmp_path):
    with pytest.raises(TypeError, match=r"default_hooks\['logger'\] should be a hook config dict"):
        make(tmp_path, default_hooks=dict(logger=["LoggerHook"]))
    with pytest.raises(TypeError, match=r"default_hooks should be a dict"):
        make(tmp_path, default_hooks=["LoggerHook"])


def test_custom_hooks_that_are_not_hooks(tmp_path):
    with pytest.raises(TypeError, match=r"custom_hooks should be a list"):
        make(tmp_path, custom_hooks=dict(type="EMAHook"))
    with pytest.raises(
        TypeError, match=r"custom_hooks\[0\] should be an instance of Hook or dict \(a HOOKS"
    ):
        make(tmp_path, custom_hooks=["EMAHook"])
    runner = make(tmp_path)
    with pytest.raises(
        TypeError, match=r"hook should be an instance of Hook or dict \(a HOOKS config\), got"
    ):
        runner.register_hook(object())


def test_a_registered_type_that_is_not_a_hook(tmp_path):
    from treadle.runner.registry import HOOKS

    @HOOKS.register_module(name="RunnerErrorsNotAHook", force=True)
    class NotAHook:
        pass

    with pytest.raises(TypeError, match=r"NotAHook is not a Hook"):
        make(tmp_path, custom_hooks=[dict(type="RunnerErrorsNotAHook")])


def test_hook_priority_out_of_range(tmp_path):
    runner = make(tmp_path)
    with pytest.raises(ValueError, match=r"between 0 and 100"):
        runner.register_hook(Hook(), priority=101)
    with pytest.raises(ValueError, match=r"unknown hook priority 'URGENT'"):
        runner.register_hook(dict(type="EmptyCacheHook", priority="URGENT"))


# ---------------------------------------------------------------- checkpoints


def test_resume_with_an_empty_work_dir_warns_and_starts_fresh(tmp_path):
    runner = make(tmp_path, resume=True)
    with captured_log(runner.logger) as capture:
        runner.train()
    warnings = capture.at(logging.WARNING)
    assert any("holds no complete checkpoint" in text for text in warnings), warnings
    assert any("starts from scratch" in text for text in warnings)
    assert runner.iter == 12


def test_load_from_that_does_not_exist(tmp_path):
    missing = tmp_path / "nope" / "epoch_3.pth"
    runner = make(tmp_path, load_from=str(missing))
    with pytest.raises(FileNotFoundError, match=r"load_from=.*epoch_3.pth.*no such checkpoint"):
        runner.train()
    runner = make(tmp_path, load_from=str(missing))
    with pytest.raises(FileNotFoundError, match=r"no such checkpoint"):
        runner.test()


# ---------------------------------------------------------------- model and data


def test_forward_in_loss_mode_returning_no_loss(tmp_path):
    runner = make(tmp_path, model=dict(type="RunnerToyModel", loss_key="error"))
    with pytest.raises(ValueError, match=r"returned no key containing 'loss'.*'error'"):
        runner.train()


def test_model_without_train_step(tmp_path):
    from torch import nn

    runner = make(tmp_path, model=nn.Linear(2, 1))
    # TypeErrors that are also MMEngine's AssertionErrors.
    with pytest.raises(
        TypeError,
        match=r"If you want to train the model, it needs train_step: the model Linear has none; "
        r"subclass",
    ) as info:
        runner.train()
    assert isinstance(info.value, AssertionError)
    with pytest.raises(
        AssertionError, match=r"If you want to validate the model, it needs val_step"
    ):
        runner.val()


def test_model_of_the_wrong_type(tmp_path):
    with pytest.raises(TypeError, match=r"model should be an nn.Module or a config dict, got str"):
        make(tmp_path, model="RunnerToyModel")


@pytest.mark.parametrize("value", [float("nan"), float("inf")])
def test_nonfinite_loss_stops_training_naming_the_iteration(tmp_path, value):
    runner = make(
        tmp_path,
        model=dict(type="RunnerToyModel", nonfinite_from=5, nonfinite_value=value),
    )
    with pytest.raises(FloatingPointError, match=r"(nan|inf).*iteration 6"):
        runner.train()


def test_dataloader_of_length_zero(tmp_path):
    empty = dict(
        dataset=dict(type="RunnerToyDataset", length=0),
        sampler=dict(type="DefaultSampler"),
        batch_size=3,
    )
    runner = make(tmp_path, train_dataloader=empty)
    with pytest.raises(ValueError, match=r"yields no batch: its dataset RunnerToyDataset has 0"):
        runner.train()
    dropped = dict(empty, dataset=dict(type="RunnerToyDataset", length=2), drop_last=True)
    with pytest.raises(ValueError, match=r"has 2 samples \(batch_size=3, drop_last=True\)"):
        Runner.build_dataloader(dropped)


def test_dataloader_config_errors(tmp_path):
    with pytest.raises(KeyError, match=r"dataloader has no 'sampler'"):
        Runner.build_dataloader(dict(dataset=dict(type="RunnerToyDataset"), batch_size=2))
    with pytest.raises(TypeError, match=r"dataloader should be a DataLoader or a config dict"):
        Runner.build_dataloader([1, 2])
    with pytest.raises(
        TypeError,
        match=r"dataloader.collate_fn should be a dict or callable object: a dict with 'type' \(a "
        r"function registered in FUNCTIONS, or the function itself\), or the function; got str",
    ):
        Runner.build_dataloader(
            dict(
                dataset=dict(type="RunnerToyDataset"),
                sampler=dict(type="DefaultSampler"),
                collate_fn="default_collate",
            )
        )


def test_optim_wrapper_without_optimizer(tmp_path):
    runner = make(tmp_path, optim_wrapper=dict(type="OptimWrapper", lr=0.1))
    with pytest.raises(ValueError, match=r"optim_wrapper has no 'optimizer' and no 'constructor'"):
        runner.train()


def test_bad_randomness_and_env(tmp_path):
    with pytest.raises(TypeError, match=r"randomness.seed must be an int or None, got str"):
        make(tmp_path, randomness=dict(seed="0"))
    with pytest.raises(ValueError, match=r"launcher must be one of none, pytorch"):
        make(tmp_path, launcher="torchrun")
    with pytest.raises(TypeError, match=r"env_cfg must be a dict"):
        make(tmp_path, env_cfg=[("cudnn_benchmark", True)])


def test_compile_option_of_the_wrong_type(tmp_path):
    cfg = toy_cfg(tmp_path, default_hooks=QUIET)
    runner = Runner(**cfg, cfg=dict(compile="yes"))
    with pytest.raises(TypeError, match=r"cfg.compile must be a bool or a dict"):
        runner.train()
