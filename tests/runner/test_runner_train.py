"""Running a Runner: train/val/test, the order of hook calls, reproducibility, loading and
resuming, and the environment it sets up."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest
import torch
from runner_toy_hooks import MMENGINE_STAGES, Interrupted, Points, StopAfterEpoch
from runner_toy_model import toy_cfg, toy_iter_cfg

from treadle.runner.hooks import Hook
from treadle.runner.runner import Runner, set_random_seed
from treadle.runner.runner.env import collect_env, setup_env

QUIET = dict(checkpoint=None)


class Losses(Hook):
    """Keeps the loss tensor of every training iteration (numbers only when read)."""

    def __init__(self) -> None:
        self.losses: list[torch.Tensor] = []

    def after_train_iter(self, runner, batch_idx, data_batch=None, outputs=None) -> None:
        self.losses.append(outputs["loss"])

    def values(self) -> list[float]:
        return [loss.item() for loss in self.losses]


def losses_of(cfg: dict) -> tuple[Runner, list[float]]:
    recorder = Losses()
    runner = Runner(**dict(cfg, custom_hooks=[recorder]))
    runner.train()
    return runner, recorder.values()


def test_train_returns_the_model_and_counts(tmp_path):
    runner = Runner(**toy_cfg(tmp_path, default_hooks=QUIET))
    model = runner.train()
    assert model is runner.model
    assert (runner.epoch, runner.iter) == (3, 12)
    hub = runner.message_hub
    # The hub holds the epoch as RuntimeInfoHook put it before the last epoch (0-based).
    assert hub.get_info("epoch") == 2 and hub.get_info("max_iters") == 12
    assert hub.get_scalar("train/loss").current() == pytest.approx(
        hub.get_scalar("train/loss").data[0][-1]
    )
    assert set(runner.val()) == {"mse", "acc"}
    assert set(runner.test()) == {"mse", "acc"}


def test_iteration_based_run(tmp_path):
    runner, losses = losses_of(toy_iter_cfg(tmp_path))
    assert runner.iter == 10 and len(losses) == 10
    assert sorted(p.name for p in tmp_path.glob("*.pth")) == ["iter_10.pth", "iter_5.pth"]
    scalars = (tmp_path / runner.timestamp / "vis_data" / "scalars.json").read_text()
    lines = [json.loads(line) for line in scalars.splitlines()]
    assert [line["step"] for line in lines if "loss" in line] == list(range(1, 11))
    # Two validations (iterations 5 and 10) write their metrics.
    assert sum("acc" in line for line in lines) == 2


def test_num_batch_per_epoch_shortens_each_epoch(tmp_path):
    cfg = toy_cfg(tmp_path, default_hooks=QUIET)
    cfg["train_dataloader"]["num_batch_per_epoch"] = 2
    cfg["val_dataloader"]["num_batch_per_epoch"] = 1
    runner, losses = losses_of(cfg)
    assert len(losses) == 6 and len(runner.val_dataloader) == 1


def test_the_same_seed_gives_the_same_losses(tmp_path):
    _, first = losses_of(toy_cfg(tmp_path / "a", default_hooks=QUIET))
    _, second = losses_of(toy_cfg(tmp_path / "b", default_hooks=QUIET))
    _, other = losses_of(toy_cfg(tmp_path / "c", default_hooks=QUIET, randomness=dict(seed=1)))
    assert first == second
    assert first != other


def test_seed_none_draws_one(tmp_path):
    runner = Runner(**toy_cfg(tmp_path, default_hooks=QUIET, randomness=dict(seed=None)))
    assert isinstance(runner.seed, int)


def test_hook_points_are_called_in_mmengine_order(tmp_path):
    points = Points()
    cfg = toy_cfg(
        tmp_path,
        default_hooks=QUIET,
        custom_hooks=[points],
        train_cfg=dict(by_epoch=True, max_epochs=1),
        train_dataloader=dict(toy_cfg(tmp_path)["train_dataloader"], num_batch_per_epoch=1),
        val_dataloader=dict(toy_cfg(tmp_path)["val_dataloader"], num_batch_per_epoch=1),
    )
    Runner(**cfg).train()
    # Every point of MMEngine's list, in its order, but those of testing and checkpoints.
    assert points.points == [
        stage for stage in MMENGINE_STAGES if "test" not in stage and "checkpoint" not in stage
    ]


def test_checkpoint_hooks_points(tmp_path):
    points = Points()
    cfg = toy_cfg(tmp_path, custom_hooks=[points], train_cfg=dict(by_epoch=True, max_epochs=1))
    runner = Runner(**cfg)
    runner.train()
    assert "before_save_checkpoint" in points.points
    runner.load_checkpoint(str(tmp_path / "epoch_1.pth"))
    assert points.points[-1] == "after_load_checkpoint"


def test_load_from_loads_weights_only(tmp_path):
    trained = Runner(**toy_cfg(tmp_path / "a"))
    trained.train()
    checkpoint = str(tmp_path / "a" / "epoch_3.pth")
    runner = Runner(**toy_cfg(tmp_path / "b", default_hooks=QUIET, load_from=checkpoint))
    runner.train_loop  # noqa: B018 - built before loading, as train() does
    runner.load_or_resume()
    assert (runner.epoch, runner.iter) == (0, 0)
    for name, tensor in trained.model.state_dict().items():
        assert torch.equal(runner.model.state_dict()[name], tensor), name
    # val() and test() load it too.
    tester = Runner(**toy_cfg(tmp_path / "c", default_hooks=QUIET, load_from=checkpoint))
    assert tester.test() == trained.test()


def test_resume_continues_the_run(tmp_path):
    _, whole = losses_of(toy_cfg(tmp_path / "whole"))
    first = Runner(**toy_cfg(tmp_path / "cut", custom_hooks=[StopAfterEpoch(2)]))
    with pytest.raises(Interrupted):
        first.train()
    runner, rest = losses_of(toy_cfg(tmp_path / "cut", resume=True))
    assert runner.iter == 12 and len(rest) == 4
    assert rest == whole[8:]


def test_resume_from_a_named_checkpoint(tmp_path):
    Runner(**toy_cfg(tmp_path / "a")).train()
    named = str(tmp_path / "a" / "epoch_1.pth")
    _, rest = losses_of(toy_cfg(tmp_path / "b", resume=True, load_from=named))
    assert len(rest) == 8


def test_set_random_seed_seeds_every_generator():
    set_random_seed(7)
    drawn = (random.random(), np.random.rand(), torch.rand(1).item())
    assert set_random_seed(7) == 7
    assert drawn == (random.random(), np.random.rand(), torch.rand(1).item())
    # NumPy accepts only [0, 2**32): larger or negative seeds still seed it.
    assert set_random_seed(2**40, diff_rank_seed=True) == 2**40
    assert set_random_seed(-3) == -3


def test_set_random_seed_deterministic():
    benchmark = torch.backends.cudnn.benchmark
    try:
        torch.backends.cudnn.benchmark = True
        set_random_seed(1, deterministic=True)
        assert torch.are_deterministic_algorithms_enabled()
        assert torch.backends.cudnn.deterministic and not torch.backends.cudnn.benchmark
    finally:
        torch.use_deterministic_algorithms(False)
        torch.backends.cudnn.deterministic = False
        torch.backends.cudnn.benchmark = benchmark


def test_runner_randomness_cfg(tmp_path):
    try:
        runner = Runner(
            **toy_cfg(tmp_path, randomness=dict(seed=3, diff_rank_seed=True, deterministic=True))
        )
        assert (runner.seed, runner.deterministic) == (3, True)
    finally:
        torch.use_deterministic_algorithms(False)
        torch.backends.cudnn.deterministic = False


def test_setup_env(monkeypatch):
    benchmark = torch.backends.cudnn.benchmark
    try:
        rank, world_size, timestamp = setup_env(
            dict(cudnn_benchmark=True, mp_cfg=dict(mp_start_method="fork"), resource_limit=64)
        )
        assert (rank, world_size, len(timestamp)) == (0, 1, 15)
        assert torch.backends.cudnn.benchmark
    finally:
        torch.backends.cudnn.benchmark = benchmark


def test_collect_env_reports_versions():
    info = collect_env()
    assert info["PyTorch"] == torch.__version__
    assert "treadle" in info and "Python" in info


def test_two_optimizers_train(tmp_path):
    from runner_toy_model import toy_two_optim_cfg

    recorder = Losses()
    runner = Runner(**toy_two_optim_cfg(tmp_path, custom_hooks=[recorder]))
    runner.train()
    assert len(recorder.losses) == 12
    resumed = Runner(**toy_two_optim_cfg(tmp_path, resume=True))
    resumed.load_or_resume()
    assert resumed.epoch == 3
    for name in ("a", "b"):
        assert resumed.optim_wrapper[name].get_lr() == runner.optim_wrapper[name].get_lr()


def test_worker_processes_give_the_same_losses(tmp_path):
    _, in_process = losses_of(toy_cfg(tmp_path / "a", default_hooks=QUIET))
    cfg = toy_cfg(tmp_path / "b", default_hooks=QUIET)
    cfg["train_dataloader"]["num_workers"] = 2
    _, with_workers = losses_of(cfg)
    assert with_workers == in_process


def test_set_multi_processing_limits_threads_when_distributed(monkeypatch):
    import multiprocessing as mp

    from treadle.runner.runner.env import set_multi_processing

    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    monkeypatch.setenv("MKL_NUM_THREADS", "3")
    method = mp.get_start_method(allow_none=True)
    with pytest.warns(UserWarning, match="OMP_NUM_THREADS is not set: each process uses 1"):
        set_multi_processing(mp_start_method=method or "fork", distributed=True)
    import os

    assert os.environ["OMP_NUM_THREADS"] == "1" and os.environ["MKL_NUM_THREADS"] == "3"


def test_log_processor_and_message_hub_arguments(tmp_path):
    from treadle.runner.log_processor import LogProcessor

    processor = LogProcessor(window_size=3)
    runner = Runner(**toy_cfg(tmp_path, default_hooks=QUIET, log_processor=processor))
    assert runner.log_processor is processor
    assert runner.build_log_processor(dict(window_size=5)).window_size == 5
    with pytest.raises(TypeError, match="log_processor should be a LogProcessor or a config dict"):
        runner.build_log_processor("LogProcessor")
    hub = runner.build_message_hub(dict(name=f"{runner.experiment_name}_other"))
    assert hub.instance_name.endswith("_other")
    with pytest.raises(
        TypeError, match=r"message_hub should be a dict \(MessageHub's arguments\) or None, got str"
    ):
        runner.build_message_hub("hub")


def test_resume_names_the_checkpoint_to_continue(tmp_path):
    Runner(**toy_cfg(tmp_path)).train()
    # work_dir holds epoch_3.pth, but the named checkpoint wins.
    named = str(tmp_path / "epoch_1.pth")
    runner, rest = losses_of(toy_cfg(tmp_path, resume=named, default_hooks=QUIET))
    assert len(rest) == 8 and runner.iter == 12
    # Refused when the runner is built, before anything is written to work_dir.
    with pytest.raises(FileNotFoundError, match=r"resume from .*nope.pth: no such checkpoint file"):
        Runner(**toy_cfg(tmp_path, resume=str(tmp_path / "nope.pth")))
    with pytest.raises(TypeError, match="resume must be True, False or a checkpoint path"):
        Runner(**toy_cfg(tmp_path, resume=1))
