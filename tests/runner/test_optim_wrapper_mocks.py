"""Mocks standing in for an optimizer wrapper, as downstream tests pass them: treadle calls
them as MMEngine does (MMEngine duck-types the wrapper)."""

from __future__ import annotations

from unittest.mock import MagicMock, Mock

import pytest
import torch
from torch import nn

from treadle.logging import MessageHub
from treadle.runner.hooks import ParamSchedulerHook, RuntimeInfoHook
from treadle.runner.model import BaseModel
from treadle.runner.optim import OptimWrapper


class TwoLosses(BaseModel):
    def __init__(self) -> None:
        super().__init__()
        self.linear = nn.Linear(2, 1)

    def forward(self, inputs, data_samples=None, mode="tensor"):
        out = self.linear(inputs).sum()
        if mode == "loss":
            return dict(loss=out, acc=torch.tensor(1.0))
        return out


@pytest.mark.parametrize("make", [MagicMock, lambda: MagicMock(spec=OptimWrapper)])
def test_train_step_calls_the_mock_as_mmengine_does(make):
    model, optim_wrapper = TwoLosses(), make()
    log_vars = model.train_step(dict(inputs=torch.ones(1, 2)), optim_wrapper)
    assert sorted(log_vars) == ["acc", "loss"]
    optim_wrapper.optim_context.assert_called_once_with(model)
    optim_wrapper.update_params.assert_called_once()
    (loss,), _ = optim_wrapper.update_params.call_args
    assert torch.equal(loss.detach(), log_vars["loss"])


def _runner(optim_wrapper: object) -> MagicMock:
    runner = MagicMock()
    runner.optim_wrapper, runner.iter, runner.epoch = optim_wrapper, 0, 0
    runner.message_hub = MessageHub.get_instance(f"mocks-{id(runner)}")
    return runner


@pytest.mark.parametrize("make", [MagicMock, lambda: Mock(spec=OptimWrapper)])
def test_param_scheduler_hook_steps_with_a_mock_optim_wrapper(make):
    runner = _runner(make())
    scheduler = MagicMock(by_epoch=False)
    runner.param_schedulers = [scheduler]
    hook = ParamSchedulerHook()
    hook.after_train_iter(runner, 0)
    hook.after_train_iter(runner, 1)
    assert scheduler.step.call_count == 2


def test_runtime_info_hook_reads_the_lr_of_a_mock_on_a_mock_runner():
    runner = _runner(MagicMock())
    runner.optim_wrapper.get_lr.return_value = dict(lr=[0.1])
    RuntimeInfoHook().before_train_iter(runner, 0)
    assert runner.message_hub.get_scalar("train/lr").current() == 0.1


def test_runtime_info_hook_refuses_lrs_that_are_no_dict_as_mmengine_does():
    runner = _runner(MagicMock())  # get_lr() returns a MagicMock
    with pytest.raises(AssertionError, match=r"get_lr\(\)` should return a dict") as raised:
        RuntimeInfoHook().before_train_iter(runner, 0)
    assert isinstance(raised.value, TypeError)


def test_update_params_calls_methods_patched_on_the_instance():
    model = nn.Linear(1, 1)
    optim_wrapper = OptimWrapper(optimizer=torch.optim.SGD(model.parameters(), lr=0.1))
    optim_wrapper.backward, optim_wrapper.step = MagicMock(), MagicMock()
    optim_wrapper.zero_grad = MagicMock()
    loss = model(torch.ones(1)).sum()
    optim_wrapper.update_params(loss)
    optim_wrapper.backward.assert_called_once_with(loss)
    optim_wrapper.step.assert_called_once_with()
    optim_wrapper.zero_grad.assert_called_once_with()


def test_update_params_with_a_mock_optimizer():
    optimizer = MagicMock()
    optimizer.param_groups = [dict(lr=0.1, momentum=0.9)]
    optim_wrapper = OptimWrapper(optimizer=optimizer)
    optim_wrapper.update_params(MagicMock())
    optimizer.step.assert_called_once_with()
    optimizer.zero_grad.assert_called_once_with()
    assert optim_wrapper.get_lr() == dict(lr=[0.1])
