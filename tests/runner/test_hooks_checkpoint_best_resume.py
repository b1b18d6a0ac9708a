"""Best checkpoints across a resume, through real Runners on the toy model: the best score and
file come back (MMEngine #1166), and ``best_with_state=True`` gives the best checkpoint what a
run resumes from (MMEngine #1409)."""

from __future__ import annotations

import pytest
import torch

from treadle.runner.hooks.checkpoint_hook import CheckpointHook

runner_module = pytest.importorskip("treadle.runner.runner")
Runner = runner_module.Runner

from best_checkpoint_toys import checkpoints, hooks, metric  # noqa: E402
from runner_toy_model import toy_cfg, toy_iter_cfg  # noqa: E402 (after the guard)


def load(path):
    return torch.load(path, weights_only=True)


def test_resume_restores_the_best_score_and_file_by_epoch(tmp_path):
    first = toy_cfg(
        tmp_path,
        val_evaluator=metric(0.5, 0.2, 0.3),
        default_hooks=hooks(interval=1, save_best="acc"),
    )
    Runner(**first).train()
    # 0.4 at epoch 4 is worse than the restored 0.5: without the restored score it would be a
    # new best, and two best files would be left.
    resumed = toy_cfg(
        tmp_path,
        resume=True,
        train_cfg=dict(by_epoch=True, max_epochs=5, val_interval=1),
        val_evaluator=metric(0.4, 0.7),
        default_hooks=hooks(interval=1, save_best="acc"),
    )
    runner = Runner(**resumed)
    runner.train()
    assert [name for name in checkpoints(tmp_path) if name.startswith("best")] == [
        "best_acc_epoch_5.pth"
    ]
    info = runner.message_hub.runtime_info
    assert info["best_score"] == 0.7
    assert info["best_ckpt"] == str(tmp_path / "best_acc_epoch_5.pth")


def test_resume_restores_each_best_by_iteration(tmp_path):
    def values(*pairs):
        return dict(type="RunnerToyMetric", values=[dict(acc=a, mse=m) for a, m in pairs])

    checkpoint = dict(
        interval=5, by_epoch=False, save_best=["acc", "mse"], rule=["greater", "less"]
    )
    first = toy_iter_cfg(
        tmp_path, val_evaluator=values((0.5, 1.0), (0.6, 2.0)), default_hooks=hooks(**checkpoint)
    )
    Runner(**first).train()
    assert sorted(n for n in checkpoints(tmp_path) if n.startswith("best")) == [
        "best_acc_iter_10.pth",
        "best_mse_iter_5.pth",
    ]
    # Iterations 15 and 20: mse improves at 15 only, acc at 20 only.
    resumed = toy_iter_cfg(
        tmp_path,
        resume=True,
        train_cfg=dict(by_epoch=False, max_iters=20, val_interval=5),
        val_evaluator=values((0.55, 0.5), (0.9, 3.0)),
        default_hooks=hooks(**checkpoint),
    )
    Runner(**resumed).train()
    assert sorted(n for n in checkpoints(tmp_path) if n.startswith("best")) == [
        "best_acc_iter_20.pth",
        "best_mse_iter_15.pth",
    ]


def _weights(runner):
    return {k: v.clone() for k, v in runner.model.state_dict().items()}


# Momentum: the optimizer has state that a resume must restore.
MOMENTUM = dict(type="OptimWrapper", optimizer=dict(type="SGD", lr=0.01, momentum=0.9))


def test_best_with_state_resumes_exactly(tmp_path, with_state=True):
    straight_dir, resumed_dir = tmp_path / "straight", tmp_path / "resumed"
    checkpoint = dict(interval=1, save_best="acc", best_with_state=with_state)
    straight = Runner(
        **toy_cfg(
            straight_dir,
            optim_wrapper=MOMENTUM,
            train_cfg=dict(by_epoch=True, max_epochs=4, val_interval=1),
            val_evaluator=metric(0.1, 0.9, 0.2, 0.3),
            default_hooks=hooks(**checkpoint),
        )
    )
    straight.train()
    best = straight_dir / "best_acc_epoch_2.pth"
    saved = load(best)
    assert {"optimizer", "param_schedulers", "loop", "message_hub"} <= set(saved)
    assert saved["meta"]["epoch"] == 2 and saved["loop"]["epoch"] == 2
    # The best checkpoint names itself, so a run resumed from it replaces it when it improves.
    assert saved["message_hub"]["runtime_info"]["best_ckpt"] == str(best)

    resumed = Runner(
        **toy_cfg(
            resumed_dir,
            optim_wrapper=MOMENTUM,
            resume=str(best),
            train_cfg=dict(by_epoch=True, max_epochs=4, val_interval=1),
            val_evaluator=metric(0.2, 0.3),
            default_hooks=hooks(**checkpoint),
        )
    )
    resumed.train()
    assert resumed.epoch == 4
    expected, got = _weights(straight), _weights(resumed)
    for key in expected:
        torch.testing.assert_close(got[key], expected[key], rtol=0, atol=0)
    assert resumed.optim_wrapper.get_lr() == straight.optim_wrapper.get_lr()
    assert resumed.optim_wrapper.state_dict()["state"].keys() == (
        straight.optim_wrapper.state_dict()["state"].keys()
    )
    # The resumed run's scores never beat 0.9: it wrote no best of its own.
    assert not any(name.startswith("best") for name in checkpoints(resumed_dir))


def test_a_run_resumed_from_its_best_replaces_it_when_it_improves(tmp_path):
    checkpoint = dict(interval=1, save_best="acc", best_with_state=True)
    Runner(
        **toy_cfg(
            tmp_path,
            val_evaluator=metric(0.1, 0.9, 0.2),
            default_hooks=hooks(**checkpoint),
        )
    ).train()
    Runner(
        **toy_cfg(
            tmp_path,
            resume=str(tmp_path / "best_acc_epoch_2.pth"),
            train_cfg=dict(by_epoch=True, max_epochs=4, val_interval=1),
            val_evaluator=metric(0.95, 0.1),
            default_hooks=hooks(**checkpoint),
        )
    ).train()
    assert [name for name in checkpoints(tmp_path) if name.startswith("best")] == [
        "best_acc_epoch_3.pth"
    ]
    assert "optimizer" in load(tmp_path / "best_acc_epoch_3.pth")


def test_without_best_with_state_the_best_holds_weights_only(tmp_path):
    Runner(
        **toy_cfg(tmp_path, val_evaluator=metric(0.3), default_hooks=hooks(save_best="acc"))
    ).train()
    saved = load(tmp_path / "best_acc_epoch_1.pth")
    assert "optimizer" not in saved and "param_schedulers" not in saved


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        (
            dict(best_with_state=True),
            ValueError,
            r"best_with_state=True keeps the optimizer, scheduler and loop state in the best "
            r"checkpoint, but save_best is not set",
        ),
        (
            dict(save_best="acc", best_with_state="yes"),
            TypeError,
            r"best_with_state must be a bool, got 'yes'",
        ),
    ],
)
def test_best_with_state_errors(kwargs, error, message):
    with pytest.raises(error, match=message):
        CheckpointHook(**kwargs)


def test_best_with_state_without_save_best_fails_when_the_runner_is_built(tmp_path):
    cfg = toy_cfg(tmp_path, default_hooks=hooks(best_with_state=True))
    with pytest.raises(ValueError, match="save_best is not set"):
        Runner(**cfg)
