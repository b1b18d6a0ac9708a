"""``save_best`` outside training and on the keys validation reports, through real Runners:
``runner.val()``, ``runner.test()`` and ``treadle test`` with save_best configured
(MMEngine #1587), the error for a key validation never reports, and ``val/loss``
(``val_cfg=dict(compute_loss=True)``) with its inferred 'less' rule."""

from __future__ import annotations

import pytest
from hooks_b_stub_runner import files
from runner_toys import captured_log

runner_module = pytest.importorskip("treadle.runner.runner")
Runner = runner_module.Runner

from best_checkpoint_toys import hooks, metric  # noqa: E402
from runner_toy_model import toy_cfg  # noqa: E402 (after the guard)


def best_files(directory):
    return [name for name in files(directory) if name.startswith("best")]


@pytest.fixture
def trained(tmp_path):
    """A work dir with a finished run (best acc 0.5 at epoch 2) and its last checkpoint."""
    Runner(
        **toy_cfg(
            tmp_path,
            val_evaluator=metric(0.1, 0.5, 0.2),
            default_hooks=hooks(interval=1, save_best="acc", best_with_state=True),
        )
    ).train()
    assert best_files(tmp_path) == ["best_acc_epoch_2.pth"]
    return tmp_path


def _eval_runner(work_dir, load_from, **overrides):
    cfg = toy_cfg(
        work_dir,
        load_from=str(load_from),
        train_dataloader=None,
        train_cfg=None,
        optim_wrapper=None,
        param_scheduler=None,
        default_hooks=hooks(interval=1, save_best="acc", best_with_state=True),
        # 0.9 passes the threshold: inside training it would stop the run; outside, it has
        # no train loop to stop and must leave validation alone.
        custom_hooks=[dict(type="EarlyStoppingHook", monitor="acc", stopping_threshold=0.5)],
    )
    cfg.update(overrides)
    return Runner(**cfg)


def test_val_with_save_best_reports_and_saves_nothing(trained, tmp_path):
    out = tmp_path / "val_only"
    # 0.9 would beat every score of the training run: still no best file outside training.
    runner = _eval_runner(out, trained / "epoch_3.pth", val_evaluator=metric(0.9))
    with captured_log(runner.logger) as log:
        metrics = runner.val()
    assert metrics == {"acc": 0.9}
    assert not out.exists() or best_files(out) == []
    assert best_files(trained) == ["best_acc_epoch_2.pth"]
    assert any(
        "CheckpointHook: acc: 0.9 (save_best); no best checkpoint is saved outside training"
        in message
        for message in log.messages
    )


def test_val_with_save_best_auto_names_the_first_metric(trained, tmp_path):
    runner = _eval_runner(
        tmp_path / "auto",
        trained / "epoch_3.pth",
        val_evaluator=metric(0.7),
        default_hooks=hooks(save_best="auto"),
    )
    with captured_log(runner.logger) as log:
        assert runner.val() == {"acc": 0.7}
    assert any("acc: 0.7 (save_best)" in message for message in log.messages)


def test_val_with_a_key_validation_never_reports_is_an_error(trained, tmp_path):
    runner = _eval_runner(
        tmp_path / "typo",
        trained / "epoch_3.pth",
        default_hooks=hooks(save_best="accuracy"),
    )
    with pytest.raises(KeyError, match=r"save_best names 'accuracy'.*\['acc', 'mse'\]"):
        runner.val()


def test_test_with_save_best_runs(trained, tmp_path):
    out = tmp_path / "test_only"
    runner = _eval_runner(out, trained / "best_acc_epoch_2.pth", test_evaluator=metric(0.3))
    assert runner.test() == {"acc": 0.3}
    assert not out.exists() or best_files(out) == []


def test_val_after_training_on_the_same_runner_saves_no_best(tmp_path):
    runner = Runner(
        **toy_cfg(
            tmp_path,
            val_evaluator=metric(0.1, 0.2, 0.3, 0.99),
            default_hooks=hooks(interval=1, save_best="acc"),
            custom_hooks=[dict(type="EarlyStoppingHook", monitor="acc", patience=1)],
        )
    )
    runner.train()
    assert best_files(tmp_path) == ["best_acc_epoch_3.pth"]
    stopper = next(h for h in runner.hooks if type(h).__name__ == "EarlyStoppingHook")
    state = stopper.state_dict()
    assert runner.val() == {"acc": 0.99}
    assert best_files(tmp_path) == ["best_acc_epoch_3.pth"]
    assert runner.message_hub.runtime_info["best_score"] == 0.3
    # Nor does a standalone validation count toward early stopping's patience or best.
    assert stopper.state_dict() == state


def test_treadle_test_command_with_save_best(trained, tmp_path):
    from treadle.runner.cli import main

    cfg = toy_cfg(
        tmp_path / "cli",
        default_hooks=hooks(interval=1, save_best="acc", best_with_state=True),
    )
    for key in ("train_dataloader", "train_cfg", "optim_wrapper", "param_scheduler"):
        cfg.pop(key)
    cfg["custom_imports"] = dict(imports=["runner_toy_model"], allow_failed_imports=False)
    path = tmp_path / "toy_test.py"
    path.write_text("".join(f"{key} = {value!r}\n" for key, value in cfg.items()))
    checkpoint = trained / "best_acc_epoch_2.pth"
    assert main(["test", str(path), str(checkpoint), "--no-progress"]) == 0
    assert not (tmp_path / "cli").exists() or best_files(tmp_path / "cli") == []


# --- a key that validation never reports ---


def test_training_with_a_key_validation_never_reports_names_the_reported_ones(tmp_path):
    cfg = toy_cfg(
        tmp_path,
        val_evaluator=dict(type="RunnerToyMetric"),
        default_hooks=hooks(interval=1, save_best="accuracy/top1"),
    )
    with pytest.raises(
        KeyError,
        match=r"save_best names 'accuracy/top1', but the evaluation returned \['acc', 'mse'\]",
    ):
        Runner(**cfg).train()


# --- val/loss (val_cfg compute_loss=True) ---


def _loss_cfg(work_dir, **checkpoint):
    return toy_cfg(
        work_dir,
        val_cfg=dict(type="ValLoop", compute_loss=True),
        default_hooks=hooks(interval=1, **checkpoint),
    )


def _needs_compute_loss(work_dir):
    try:
        Runner(**_loss_cfg(work_dir)).build_val_loop(dict(type="ValLoop", compute_loss=True))
    except TypeError as error:  # an eval loop without compute_loss
        pytest.skip(f"ValLoop has no compute_loss yet: {error}")


def test_save_best_val_loss_infers_less(tmp_path):
    _needs_compute_loss(tmp_path / "probe")
    runner = Runner(**_loss_cfg(tmp_path, save_best="val/loss"))
    hook = next(h for h in runner.hooks if type(h).__name__ == "CheckpointHook")
    assert hook.rules == ["less"]
    runner.train()
    best = best_files(tmp_path)
    assert len(best) == 1 and best[0].startswith("best_val_loss_epoch_")
    info = runner.message_hub.runtime_info
    assert info["best_ckpt"].endswith(best[0])
    # The best is the smallest validation loss of the run.
    losses, _ = runner.message_hub.get_scalar("val/val/loss").data
    assert info["best_score"] == pytest.approx(min(losses))


def test_save_best_auto_after_compute_loss_takes_the_evaluator_metric_first(tmp_path):
    _needs_compute_loss(tmp_path / "probe")
    runner = Runner(**_loss_cfg(tmp_path, save_best="auto", rule="less"))
    runner.train()
    hook = next(h for h in runner.hooks if type(h).__name__ == "CheckpointHook")
    # The evaluator's first metric, not one of the losses the loop adds after it.
    assert hook.key_indicators == ["mse"]
    assert best_files(tmp_path)[0].startswith("best_mse_epoch_")


def test_save_best_loss_without_the_prefix_points_at_val_loss(tmp_path):
    _needs_compute_loss(tmp_path / "probe")
    with pytest.raises(KeyError, match=r"save_best names 'loss'.*'val/loss'.*did you mean"):
        Runner(**_loss_cfg(tmp_path, save_best="loss")).train()
