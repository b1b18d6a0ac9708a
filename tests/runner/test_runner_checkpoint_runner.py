"""Runner.save_checkpoint / resume / load_checkpoint through a real Runner on the toy model
(tests/support/runner_toy_model.py), and an MMEngine 0.10.7 checkpoint resumed by treadle's
Runner to the weights MMEngine reached."""

from __future__ import annotations

import json
import os

import pytest
import torch
from mmengine_checkpoint_data import TRAIN_SETTINGS, eight_points_loader
from runner_checkpoint_stub import LinearToy
from runner_toy_hooks import StopAfterEpoch
from runner_toy_model import toy_cfg, toy_two_optim_cfg, unique_name

from treadle.runner.runner import Runner

DATA = os.path.join(os.path.dirname(__file__), "data", "mmengine_0_10_7")
MMENGINE_KEYS = {"meta", "state_dict", "optimizer", "param_schedulers", "message_hub"}


def weights(runner: Runner) -> dict[str, torch.Tensor]:
    model = runner.model.module if hasattr(runner.model, "module") else runner.model
    return {key: value.clone() for key, value in model.state_dict().items()}


def test_checkpoints_of_a_run_load_with_weights_only(tmp_path):
    runner = Runner(**toy_cfg(str(tmp_path)))
    runner.train()
    checkpoint = torch.load(tmp_path / "epoch_3.pth", weights_only=True)
    assert MMENGINE_KEYS | {"loop"} <= set(checkpoint)
    assert (checkpoint["meta"]["epoch"], checkpoint["meta"]["iter"]) == (3, 12)
    assert checkpoint["meta"]["treadle_version"]
    for key, value in weights(runner).items():
        assert torch.equal(checkpoint["state_dict"][key], value)


def test_the_same_command_run_again_continues_to_the_same_weights(tmp_path):
    straight = Runner(**toy_cfg(str(tmp_path / "straight")))
    straight.train()

    # The same config interrupted after epoch 2 was saved (a changed max_epochs would change
    # the schedule, whose end is clipped to it).
    interrupted = Runner(**toy_cfg(str(tmp_path / "stopped"), custom_hooks=[StopAfterEpoch(2)]))
    with pytest.raises(RuntimeError, match="interrupted after epoch 2"):
        interrupted.train()
    again = Runner(**toy_cfg(str(tmp_path / "stopped"), resume=True))
    again.train()
    assert again.epoch == 3
    for key, value in weights(straight).items():
        assert torch.equal(weights(again)[key], value), key


def test_load_from_without_resume_takes_the_weights_only(tmp_path):
    first = Runner(**toy_cfg(str(tmp_path / "first")))
    first.train()
    cfg = toy_cfg(str(tmp_path / "second"), load_from=str(tmp_path / "first" / "epoch_3.pth"))
    second = Runner(**cfg)
    second.load_or_resume()
    assert (second.epoch, second.iter) == (0, 0)
    for key, value in weights(first).items():
        assert torch.equal(weights(second)[key], value)


def test_an_mmengine_run_resumed_by_treadle_reaches_mmengine_weights(tmp_path):
    with open(os.path.join(DATA, "expected.json")) as file:
        expected = json.load(file)
    runner = Runner(
        model=LinearToy(),
        work_dir=str(tmp_path),
        train_dataloader=eight_points_loader(),
        **TRAIN_SETTINGS,
        load_from=os.path.join(DATA, "full_epoch_1.pth"),
        resume=True,
        experiment_name=unique_name("mmengine_resume"),
    )
    runner.train()
    assert (runner.epoch, runner.iter) == (2, 8)
    for key, value in expected["final_state_dict"].items():
        assert weights(runner)[key].flatten().tolist() == pytest.approx(
            torch.tensor(value).flatten().tolist(), abs=1e-6
        )


def test_two_optimizers_and_their_schedulers_resume(tmp_path):
    straight = Runner(**toy_two_optim_cfg(str(tmp_path / "straight")))
    straight.train()
    hooks = [StopAfterEpoch(2)]
    interrupted = Runner(**toy_two_optim_cfg(str(tmp_path / "stopped"), custom_hooks=hooks))
    with pytest.raises(RuntimeError, match="interrupted"):
        interrupted.train()
    checkpoint = torch.load(tmp_path / "stopped" / "epoch_2.pth", weights_only=True)
    assert isinstance(checkpoint["param_schedulers"], dict)
    again = Runner(**toy_two_optim_cfg(str(tmp_path / "stopped"), resume=True))
    again.train()
    for key, value in weights(straight).items():
        assert torch.equal(weights(again)[key], value), key
