"""torch.compile from the Runner and FlexibleRunner (``cfg.compile`` / ``compile=``): the model
is compiled after wrapping, the train/val/test steps run it compiled, and the main job's model
(examples/digits) trains with the same losses compiled and not.

The digits test runs inductor on the CPU (a C++ compiler is on this machine; it is skipped with
the reason where inductor cannot compile); the other tests use the 'eager' backend (dynamo
traces, no code generation) to stay fast.
"""

from __future__ import annotations

import copy
import shutil
from pathlib import Path

import pytest
import torch
from runner_toy_model import toy_cfg, unique_name

from treadle.config import Config
from treadle.runner.runner import FlexibleRunner, Runner
from treadle.runner.strategies import SingleDeviceStrategy

QUIET = dict(checkpoint=None)
DIGITS = Path(__file__).resolve().parents[2] / "examples" / "digits"


def losses(runner) -> list[float]:
    values, _ = runner.message_hub.get_scalar("train/loss").data
    return [float(value) for value in values]


def test_runner_compiles_the_forward_after_wrapping(tmp_path):
    eager = Runner(**toy_cfg(tmp_path / "eager", default_hooks=QUIET))
    eager.train()
    compiled = Runner(
        **toy_cfg(tmp_path / "compiled", default_hooks=QUIET),
        cfg=dict(compile=dict(backend="eager")),
    )
    compiled.train()
    forward = compiled.model.forward
    assert getattr(forward, "__treadle_compiled__", False)
    assert losses(compiled) == pytest.approx(losses(eager), rel=1e-5)
    # val and test reuse the compiled forward, compiling nothing twice.
    assert compiled.val() == pytest.approx(eager.val(), rel=1e-5)
    assert compiled.test() == pytest.approx(eager.test(), rel=1e-5)
    assert compiled.model.forward is forward


def test_flexible_runner_compile_argument(tmp_path):
    cfg = toy_cfg(tmp_path, default_hooks=QUIET, val_dataloader=None, val_cfg=None)
    cfg.pop("val_evaluator")
    model = cfg.pop("model")
    runner = FlexibleRunner(model, compile=dict(backend="eager"), **cfg)
    runner.train()
    assert getattr(runner.model.forward, "__treadle_compiled__", False)
    assert runner.iter == 12


def test_compile_target_names_a_method(tmp_path):
    runner = Runner(
        **toy_cfg(tmp_path, default_hooks=QUIET, val_dataloader=None, val_cfg=None,
                  val_evaluator=None),
        cfg=dict(compile=dict(backend="eager", target="train_step")),
    )  # fmt: skip
    runner.train()
    assert getattr(runner.model.train_step, "__treadle_compiled__", False)
    assert not getattr(runner.model.forward, "__treadle_compiled__", False)


def test_compile_errors_name_what_was_written(tmp_path):
    strategy = SingleDeviceStrategy()
    model = torch.nn.Linear(2, 1)
    with pytest.raises(TypeError, match=r"'backnd' \(did you mean 'backend'\?\)"):
        strategy.compile_model(model, dict(backnd="eager"))
    with pytest.raises(AttributeError, match=r"target='trian_step': Linear has no method"):
        strategy.compile_model(model, dict(target="trian_step"))
    with pytest.raises(TypeError, match=r"compile must be a bool or a dict.*got str"):
        strategy.compile_model(model, "yes")
    runner = Runner(**toy_cfg(tmp_path, default_hooks=QUIET), cfg=dict(compile="yes"))
    with pytest.raises(TypeError, match=r"cfg.compile must be a bool or a dict"):
        runner.train()


def _inductor_compiles() -> str | None:
    if shutil.which("g++") is None and shutil.which("cc") is None:
        return "inductor needs a C++ compiler on the CPU, and none is on PATH"
    return None


def digits_runner(tmp_path, monkeypatch, compile_cfg) -> Runner:
    monkeypatch.syspath_prepend(str(DIGITS))
    cfg = Config.fromfile(str(DIGITS / "config.py"))
    cfg = copy.deepcopy(cfg)
    cfg.work_dir = str(tmp_path)
    cfg.experiment_name = unique_name("digits")
    cfg.train_cfg = dict(by_epoch=True, max_epochs=1, val_interval=1)
    cfg.param_scheduler = [dict(type="LinearLR", start_factor=0.1, by_epoch=False, begin=0, end=45)]
    cfg.default_hooks = dict(checkpoint=None, logger=dict(type="LoggerHook", interval=15))
    cfg.custom_hooks = []
    cfg.visualizer = None
    if compile_cfg is not None:
        cfg.compile = compile_cfg
    return Runner.from_cfg(cfg)


def test_main_job_trains_the_same_compiled(tmp_path, monkeypatch):
    pytest.importorskip("sklearn")  # the digits example's data set
    reason = _inductor_compiles()
    if reason:
        pytest.skip(reason)
    eager = digits_runner(tmp_path / "eager", monkeypatch, None)
    eager.train()
    # fallback_random: dropout draws from torch's generator as in eager mode, so the two runs
    # see the same masks and their losses can be compared.
    compiled = digits_runner(
        tmp_path / "compiled", monkeypatch, dict(options=dict(fallback_random=True))
    )
    compiled.train()
    assert getattr(compiled.model.forward, "__treadle_compiled__", False)
    expected, got = losses(eager), losses(compiled)
    assert len(got) == len(expected) == 45
    assert got == pytest.approx(expected, rel=1e-3, abs=1e-4)
    metric = "accuracy/top1"
    assert compiled.message_hub.get_scalar(f"val/{metric}").current() == pytest.approx(
        eager.message_hub.get_scalar(f"val/{metric}").current(), abs=0.5
    )
