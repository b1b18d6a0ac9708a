"""ValLoop and TestLoop through a stub runner: hooks, metrics, reported losses, fp16, errors."""

from __future__ import annotations

import pytest
import torch
from loop_stub_runner import LoopToyMetric, StubRunner, build_loop, default_loader
from runner_toys import captured_log

from treadle.runner.evaluator import Evaluator
from treadle.runner.loops import TestLoop as EvalTestLoop
from treadle.runner.loops import ValLoop


@pytest.mark.parametrize(("loop_type", "stage"), [("ValLoop", "val"), ("TestLoop", "test")])
def test_eval_loop_hooks_and_metrics(loop_type, stage):
    runner = StubRunner()
    loop = build_loop(
        runner,
        dict(type=loop_type, evaluator=Evaluator(LoopToyMetric())),
        default_loader(shuffle=False),
    )
    runner.model.train()
    metrics = loop.run()
    assert set(metrics) == {"toy/mse"}
    assert not runner.model.training
    names = runner.hook_names()
    iters = [f"before_{stage}_iter", f"after_{stage}_iter"] * 4
    assert names == [f"before_{stage}", f"before_{stage}_epoch", *iters,
                     f"after_{stage}_epoch", f"after_{stage}"]  # fmt: skip
    assert runner.calls[-2][1] == {"metrics": metrics}
    after_iter = [kw for name, kw in runner.calls if name == f"after_{stage}_iter"]
    assert [kw["batch_idx"] for kw in after_iter] == [0, 1, 2, 3]
    assert len(after_iter[0]["outputs"]) == 3
    assert loop.evaluator.dataset_meta == {"classes": ("loop-toy",)}


def test_losses_reported_by_val_step_are_averaged_into_the_metrics():
    runner = StubRunner(model=dict(val_loss=True))
    loop = ValLoop(runner, default_loader(shuffle=False), Evaluator(LoopToyMetric()))
    metrics = loop.run()
    assert set(metrics) == {"toy/mse", "loss_mse", "val_loss"}
    # The loss element is taken off the outputs before the evaluator sees them.
    outputs = [kw["outputs"] for name, kw in runner.calls if name == "after_val_iter"]
    assert all(isinstance(o, dict) for batch in outputs for o in batch)
    assert metrics["val_loss"] == metrics["loss_mse"]
    assert loop.val_loss


def test_test_loop_names_its_loss_key():
    runner = StubRunner(model=dict(val_loss=True))
    runner.model.test_step = runner.model.val_step
    loop = EvalTestLoop(runner, default_loader(shuffle=False), Evaluator(LoopToyMetric()))
    assert "test_loss" in loop.run() and loop.test_loss


def test_fp16_predicts_under_autocast():
    runner = StubRunner()
    dtypes = []
    runner.model.net[0].register_forward_hook(lambda m, i, o: dtypes.append(o.dtype))
    ValLoop(runner, default_loader(), Evaluator(LoopToyMetric()), fp16=True).run()
    assert set(dtypes) == {torch.bfloat16}  # autocast's dtype on the CPU


def test_an_evaluator_config_is_built_by_the_runner():
    loop = ValLoop(StubRunner(), default_loader(), [dict(type="Anything")])
    assert isinstance(loop.evaluator, Evaluator)


def test_a_wrong_evaluator_is_named():
    with pytest.raises(TypeError, match=r"val_evaluator must be an Evaluator.*got int: 3"):
        ValLoop(StubRunner(), default_loader(), 3)
    with pytest.raises(TypeError, match="test_cfg fp16 must be True or False"):
        EvalTestLoop(StubRunner(), default_loader(), Evaluator(LoopToyMetric()), fp16="yes")


def test_a_dataset_without_metainfo_is_warned_about():
    runner = StubRunner()
    loader = StubRunner.build_dataloader(default_loader())
    loader.dataset.__class__ = type("Plain", (torch.utils.data.Dataset,), {
        "__len__": lambda self: 10, "__getitem__": lambda self, i: i})  # fmt: skip
    with captured_log() as log:
        ValLoop(runner, loader, Evaluator(LoopToyMetric()))
    assert any("dataset Plain has no metainfo" in m for m in log.messages)
