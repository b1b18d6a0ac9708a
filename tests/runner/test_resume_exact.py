"""Exact resume through the real Runner: a run resumed from a checkpoint written mid-epoch (or
mid-run) logs the same per-iteration losses, bit for bit on CPU, as the run never stopped.
Covers epoch- and iteration-based loops, DataLoader workers, AMP bf16, EMA, two optimizers."""

from __future__ import annotations

import copy
import os

import pytest
import torch

runner_module = pytest.importorskip("treadle.runner.runner")
Runner = getattr(runner_module, "Runner", None)
if Runner is None:
    pytest.skip("treadle.runner.runner has no Runner yet", allow_module_level=True)

from runner_toy_model import toy_cfg, toy_iter_cfg, toy_two_optim_cfg, unique_name  # noqa: E402

from treadle.runner.hooks import Hook  # noqa: E402


class LossTrace(Hook):
    """The loss of every train iteration, with the iteration number."""

    priority = "VERY_LOW"

    def __init__(self) -> None:
        self.losses: dict[int, float] = {}

    def after_train_iter(self, runner, batch_idx, data_batch=None, outputs=None) -> None:
        self.losses[runner.iter + 1] = outputs["loss"].item()


def _train(cfg: dict) -> dict[int, float]:
    trace = LossTrace()
    cfg = copy.deepcopy(cfg)
    cfg["custom_hooks"] = [*cfg.get("custom_hooks", []), trace]
    cfg["experiment_name"] = unique_name("resume")
    Runner(**cfg).train()
    return trace.losses


def _check(make_cfg, tmp_path, checkpoint: str, **overrides) -> None:
    full = _train(make_cfg(tmp_path / "full", **overrides))
    saved = tmp_path / "full" / checkpoint
    assert saved.exists(), sorted(os.listdir(tmp_path / "full"))
    resumed = _train(make_cfg(tmp_path / "resumed", load_from=str(saved), resume=True, **overrides))
    assert resumed, "the resumed run trained nothing"
    assert min(resumed) > 1, "the resumed run started from the beginning"
    assert resumed == {it: loss for it, loss in full.items() if it in resumed}
    assert max(resumed) == max(full)


EVERY_5_ITERS = dict(
    logger=dict(type="LoggerHook", interval=1),
    checkpoint=dict(type="CheckpointHook", interval=5, by_epoch=False),
)


@pytest.mark.parametrize("num_workers", [0, 2])
def test_epoch_based_run_resumed_mid_epoch(tmp_path, num_workers):
    loader = toy_cfg(tmp_path)["train_dataloader"]
    loader["num_workers"] = num_workers
    _check(
        toy_cfg,
        tmp_path,
        "iter_5.pth",
        default_hooks=EVERY_5_ITERS,
        train_dataloader=loader,
    )


@pytest.mark.parametrize("num_workers", [0, 2])
def test_iteration_based_run_resumed(tmp_path, num_workers):
    loader = toy_cfg(tmp_path)["train_dataloader"]
    loader["num_workers"] = num_workers
    _check(toy_iter_cfg, tmp_path, "iter_5.pth", train_dataloader=loader)


def test_iteration_based_run_with_infinite_sampler_resumed(tmp_path):
    loader = toy_cfg(tmp_path)["train_dataloader"]
    loader["sampler"] = dict(type="InfiniteSampler", shuffle=True)
    _check(toy_iter_cfg, tmp_path, "iter_5.pth", train_dataloader=loader)


def test_epoch_based_run_resumed_at_an_epoch_end(tmp_path):
    _check(toy_cfg, tmp_path, "epoch_1.pth")


def test_amp_bf16_run_resumed(tmp_path):
    optim_wrapper = dict(
        type="AmpOptimWrapper", dtype="bfloat16", optimizer=dict(type="SGD", lr=0.01)
    )
    _check(
        toy_cfg,
        tmp_path,
        "iter_5.pth",
        default_hooks=EVERY_5_ITERS,
        optim_wrapper=optim_wrapper,
    )


def test_ema_run_resumed(tmp_path):
    _check(
        toy_cfg,
        tmp_path,
        "iter_5.pth",
        default_hooks=EVERY_5_ITERS,
        custom_hooks=[dict(type="EMAHook", momentum=0.5)],
    )


def test_two_optimizer_run_resumed(tmp_path):
    _check(toy_two_optim_cfg, tmp_path, "iter_5.pth", default_hooks=EVERY_5_ITERS)


def test_checkpoint_holds_the_loop_position(tmp_path):
    _train(toy_cfg(tmp_path, default_hooks=EVERY_5_ITERS))
    checkpoint = torch.load(tmp_path / "iter_5.pth", weights_only=True)
    loop = checkpoint["loop"]
    # 4 iterations an epoch: iteration 5 is the first batch of epoch 2.
    assert (loop["epoch"], loop["iter"], loop["batch_idx"]) == (1, 5, 1)
    assert loop["sampler"]["position"] == 3


def _noisy_loader(tmp_path, workers: int, persistent: bool, infinite: bool = False) -> dict:
    import worker_noise_toys  # noqa: F401  (registers WorkerNoiseToyDataset)

    loader = toy_cfg(tmp_path)["train_dataloader"]
    loader["dataset"] = dict(type="WorkerNoiseToyDataset", length=24)
    loader["num_workers"] = workers
    loader["persistent_workers"] = persistent
    if infinite:
        loader["sampler"] = dict(type="InfiniteSampler", shuffle=True)
    return loader


@pytest.mark.filterwarnings("ignore:This DataLoader will create")
@pytest.mark.parametrize("persistent", [False, True])
@pytest.mark.parametrize("checkpoint", ["iter_5.pth", "iter_10.pth"])
def test_random_transforms_in_workers_resume_exactly_mid_epoch(tmp_path, persistent, checkpoint):
    """Three workers, 8 batches an epoch, checkpoints mid-epoch (iteration 5: one batch past a
    round of three; iteration 10: in the second epoch, persistent workers carrying their
    streams across it): the resumed run draws the uninterrupted run's jitter."""
    _check(
        toy_cfg,
        tmp_path,
        checkpoint,
        default_hooks=EVERY_5_ITERS,
        train_dataloader=_noisy_loader(tmp_path, 3, persistent),
    )


@pytest.mark.filterwarnings("ignore:This DataLoader will create")
def test_random_transforms_in_workers_resume_exactly_by_iteration(tmp_path):
    _check(
        toy_iter_cfg,
        tmp_path,
        "iter_5.pth",
        train_dataloader=_noisy_loader(tmp_path, 2, persistent=True, infinite=True),
    )
