"""BaseStrategy's MMEngine 0.10 methods (model/optim/scheduler states, save_checkpoint,
load_checkpoint, resume, prepare, constructor arguments), in one process with
SingleDeviceStrategy, the base versions' concrete form."""

from __future__ import annotations

import logging

import pytest
import torch
from runner_toys import captured_log
from torch import nn

from treadle.runner.optim import MultiStepLR, OptimWrapper
from treadle.runner.strategies import BaseStrategy, SingleDeviceStrategy
from treadle.runner.strategies.checkpoint_io import CheckpointIO


class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.linear = nn.Linear(2, 1)

    def forward(self, x):
        return self.linear(x)


def trained(steps: int = 2, **wrapper_kwargs) -> SingleDeviceStrategy:
    torch.manual_seed(0)
    model = Net()
    wrapper = OptimWrapper(
        torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9), **wrapper_kwargs
    )
    strategy = SingleDeviceStrategy()
    strategy.prepare(
        model,
        optim_wrapper=wrapper,
        param_scheduler=[MultiStepLR(wrapper, milestones=[1], by_epoch=False)],
    )
    for _ in range(steps):
        wrapper.update_params(model(torch.ones(3, 2)).sum())
        strategy.param_schedulers[0].step()
    return strategy


def fresh(**wrapper_kwargs) -> SingleDeviceStrategy:
    torch.manual_seed(1)
    model = Net()
    wrapper = OptimWrapper(
        torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9), **wrapper_kwargs
    )
    strategy = SingleDeviceStrategy()
    strategy.prepare(
        model,
        optim_wrapper=wrapper,
        param_scheduler=[MultiStepLR(wrapper, milestones=[1], by_epoch=False)],
    )
    return strategy


def test_save_load_and_resume_round_trip(tmp_path):
    saved = trained()
    path = str(tmp_path / "a.pth")
    edited = []
    saved.save_checkpoint(
        path, extra_ckpt=dict(meta=dict(epoch=1, iter=2), note="x"), callback=edited.append
    )
    checkpoint = torch.load(path, weights_only=True)
    assert set(checkpoint) == {"state_dict", "optimizer", "param_schedulers", "meta", "note"}
    assert checkpoint["meta"]["iter"] == 2 and "treadle_version" in checkpoint["meta"]
    assert edited and edited[0]["note"] == "x"

    loaded = fresh()
    rest = loaded.resume(path)
    assert "state_dict" not in rest and "optimizer" not in rest and rest["note"] == "x"
    assert torch.equal(loaded.model.linear.weight, saved.model.linear.weight)
    assert loaded.optim_state_dict()["state"][0]["momentum_buffer"].tolist() == (
        saved.optim_state_dict()["state"][0]["momentum_buffer"].tolist()
    )
    assert loaded.param_schedulers[0].last_step == saved.param_schedulers[0].last_step
    assert loaded.optim_wrapper.get_lr() == saved.optim_wrapper.get_lr()


def test_save_without_optimizer_and_schedulers(tmp_path):
    path = str(tmp_path / "w.pth")
    trained().save_checkpoint(path, save_optimizer=False, save_param_scheduler=False)
    assert set(torch.load(path, weights_only=True)) == {"state_dict", "meta"}


def test_load_checkpoint_revises_keys_and_reads_bare_weights(tmp_path):
    source = trained()
    prefixed = {f"module.{k}": v for k, v in source.model_state_dict().items()}
    path = str(tmp_path / "ddp.pth")
    torch.save({"state_dict": prefixed}, path)
    target = fresh()
    target.load_checkpoint(path)  # the default strips 'module.'
    assert torch.equal(target.model.linear.weight, source.model.linear.weight)

    renamed = {k.replace("linear", "fc"): v for k, v in source.model_state_dict().items()}
    bare = str(tmp_path / "bare.pth")
    torch.save(renamed, bare)  # weights alone, no 'state_dict' key
    target = fresh()
    assert target.load_checkpoint(bare, revise_keys=[(r"^fc", "linear")]) == {}
    assert torch.equal(target.model.linear.weight, source.model.linear.weight)
    with pytest.raises(RuntimeError, match=r"missing keys in source state_dict: linear"):
        fresh().load_checkpoint(bare, strict=True, revise_keys=[])


def test_callback_sees_the_checkpoint_before_loading(tmp_path):
    path = str(tmp_path / "a.pth")
    trained().save_checkpoint(path)

    def zero(checkpoint):
        checkpoint["state_dict"]["linear.bias"].zero_()

    target = fresh()
    target.load_checkpoint(path, callback=zero)
    assert target.model.linear.bias.tolist() == [0.0]


def test_read_checkpoint_refuses_a_file_that_is_not_a_dict(tmp_path):
    path = str(tmp_path / "list.pth")
    torch.save([1, 2], path)
    with pytest.raises(RuntimeError, match=r"list.pth: it holds a list, not a dict"):
        fresh().read_checkpoint(path)


def test_states_need_prepared_parts():
    strategy = SingleDeviceStrategy()
    with pytest.raises(RuntimeError, match=r"model_state_dict needs a prepared model"):
        strategy.model_state_dict()
    with pytest.raises(TypeError, match=r"needs a built optimizer wrapper.*optim_wrapper is None"):
        strategy.optim_state_dict()
    with pytest.raises(RuntimeError, match=r"the strategy has no param_schedulers"):
        strategy.load_scheduler_state_dict([])
    assert strategy.scheduler_state_dict() == []


def test_scheduler_states_that_do_not_match():
    strategy = fresh()
    with pytest.raises(TypeError, match=r"param_schedulers per optimizer \(a\), but this run"):
        strategy.load_scheduler_state_dict({"a": []})
    state = strategy.scheduler_state_dict()
    with captured_log() as log:
        strategy.load_scheduler_state_dict(state * 2)
    assert any(
        "has 2 parameter schedulers and this run has 1" in m for m in log.at(logging.WARNING)
    )
    strategy.param_schedulers = {"a": list(strategy.param_schedulers)}
    with pytest.raises(TypeError, match=r"param_schedulers is a list, but this run has .*\(a\)"):
        strategy.load_scheduler_state_dict(state)
    strategy.load_scheduler_state_dict({"a": state})
    assert strategy.scheduler_state_dict() == {"a": state}


def test_resume_restarts_the_accumulation_counters(tmp_path):
    path = str(tmp_path / "a.pth")
    trained().save_checkpoint(path, extra_ckpt=dict(meta=dict(iter=6)))
    strategy = fresh(accumulative_counts=4)
    with pytest.raises(ValueError, match=r"accumulates gradients over 4 iterations.*max_iters"):
        strategy.resume(path)
    strategy = fresh(accumulative_counts=4)
    strategy.prepare(strategy.model, dispatch_kwargs=dict(max_iters=10))
    strategy.optim_wrapper = fresh(accumulative_counts=4).optim_wrapper
    strategy.resume(path, resume_optimizer=False)
    assert strategy.optim_wrapper._inner_count == 6
    assert strategy.optim_wrapper._max_counts == 10


def test_mmengine_constructor_arguments_and_unknown_ones(tmp_path):
    strategy = SingleDeviceStrategy(
        work_dir=str(tmp_path),
        experiment_name="exp",
        env_kwargs=dict(dist_cfg=dict(backend="gloo")),
        log_kwargs=dict(log_level="INFO"),
        auto_scale_lr=dict(enable=False),
    )
    assert strategy.work_dir == str(tmp_path) and strategy.experiment_name == "exp"
    assert strategy.dist_cfg == {"backend": "gloo"}
    with pytest.raises(
        TypeError, match=r"SingleDeviceStrategy got unknown arguments 'work_dri' \(did you mean "
        r"'work_dir'\?\); it takes model_wrapper_cfg, "
    ):  # fmt: skip
        SingleDeviceStrategy(work_dri="w")


def test_prepare_builds_configs_and_does_not_wrap_twice():
    from runner_toy_model import ToyModel  # noqa: F401 - registers RunnerToyModel

    strategy = SingleDeviceStrategy()
    model, wrapper = strategy.prepare(
        dict(type="RunnerToyModel"), optim_wrapper=dict(optimizer=dict(type="SGD", lr=0.1))
    )
    assert type(model).__name__ == "ToyModel" and isinstance(wrapper, OptimWrapper)
    assert strategy.prepare(model) is model


def test_base_convert_model_changes_nothing():
    model = nn.Sequential(nn.BatchNorm1d(2))
    assert BaseStrategy().convert_model(model) is model


class RecordingIO(CheckpointIO):
    def __init__(self) -> None:
        super().__init__()
        self.calls: list = []

    def save(self, checkpoint, filepath, *, backend_args=None, async_save=False):
        self.calls.append(("save", filepath, async_save, sorted(checkpoint)))

    def load(self, filepath, *, map_location="cpu", template=None):
        self.calls.append(("load", filepath, map_location, sorted(template or {})))
        return {"state_dict": template["state_dict"]}

    def wait(self):
        self.calls.append(("wait",))


def test_whole_checkpoints_go_through_checkpoint_io():
    strategy = trained()
    io = strategy.checkpoint_io = RecordingIO()
    strategy.write_checkpoint({"a": 1}, "x.pth", async_save=True)
    strategy.read_checkpoint("x.pth", map_location="default")
    strategy.wait_for_checkpoint()
    assert io.calls == [
        ("save", "x.pth", True, ["a"]),
        ("load", "x.pth", "cpu", ["optimizer", "state_dict"]),
        ("wait",),
    ]


def test_checkpoint_on_every_rank_follows_what_the_strategy_overrides():
    class Gathering(SingleDeviceStrategy):
        def model_state_dict(self):
            return {}

    assert SingleDeviceStrategy().checkpoint_on_every_rank is False
    assert Gathering().checkpoint_on_every_rank is True
    strategy = SingleDeviceStrategy()
    strategy.checkpoint_io = RecordingIO()
    assert strategy.checkpoint_on_every_rank is True
