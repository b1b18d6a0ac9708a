"""Non-finite losses through a real Runner: named with the iteration and the loss term; the
user picks stop (default), skip or rollback in train_cfg."""

from __future__ import annotations

import pytest
import torch
from runner_toy_model import toy_iter_cfg
from runner_toys import captured_log
from storage_toys import StorageToyModel  # noqa: F401 (registers the toys)

from treadle.runner.loops import NonFiniteLossError
from treadle.runner.runner import Runner


def iter_cfg(tmp_path, model: dict, **train: object) -> dict:
    return toy_iter_cfg(
        tmp_path,
        model=dict(type="StorageToyModel", **model),
        train_cfg=dict(by_epoch=False, max_iters=10, val_interval=100, **train),
        val_dataloader=None,
        val_evaluator=None,
        val_cfg=None,
        default_hooks=dict(checkpoint=dict(type="CheckpointHook", interval=4, by_epoch=False)),
    )


def test_stop_names_the_iteration_and_the_loss_term(tmp_path):
    runner = Runner(**iter_cfg(tmp_path, dict(nan_at=[6])))
    with pytest.raises(NonFiniteLossError) as info:
        runner.train()
    message = str(info.value)
    assert "the training loss is nan at iteration 7;" in message
    assert "from the loss term loss_reg=nan" in message
    assert "nonfinite_loss='skip' or 'rollback'" in message
    assert (info.value.iteration, info.value.terms) == (7, ("loss_reg",))


def test_a_total_without_a_bad_term_says_so(tmp_path):
    runner = Runner(**iter_cfg(tmp_path, dict(nan_at=[2], bad_term="loss_missing")))
    # The model adds a NaN key that is no loss term of its outputs: only the total is NaN.
    runner.model.nan_at = set()
    runner.model.head.register_forward_hook(
        lambda m, i, o: o * float("nan") if runner.model.loss_calls == 2 else o
    )
    with pytest.raises(NonFiniteLossError, match=r"iteration 3;.*from the loss terms? "):
        runner.train()


def test_skip_by_name_drops_the_batch(tmp_path):
    runner = Runner(**iter_cfg(tmp_path, dict(nan_at=[3]), nonfinite_loss="skip"))
    with captured_log(runner.logger) as log:
        runner.train()
    assert runner.iter == 10
    assert "skipped a batch whose loss is nan at iteration 4" in "\n".join(log.messages)
    assert all(torch.isfinite(p).all() for p in runner.model.parameters())


def test_rollback_restores_the_last_checkpoint_and_goes_on(tmp_path):
    seen = {}

    class Probe:
        priority = "LOWEST"

        def after_train_iter(self, runner, batch_idx, data_batch=None, outputs=None):
            if runner.iter == 5:  # the step whose loss was NaN, after the rollback
                seen["weights"] = {k: v.clone() for k, v in runner.model.state_dict().items()}
                seen["lr"] = runner.optim_wrapper.get_lr()["lr"]

    cfg = iter_cfg(
        tmp_path, dict(nan_at=[5]), nonfinite_loss="rollback", nonfinite_check_interval=1
    )
    runner = Runner(**cfg)
    probe = Probe()
    runner.register_hook(_as_hook(probe), priority="LOWEST")
    with captured_log(runner.logger) as log:
        runner.train()
    assert runner.iter == 10
    assert "the training loss is nan at iteration 6;" in "\n".join(log.messages)
    assert "rolled back the weights and the optimizer state to" in "\n".join(log.messages)
    assert "iter_4.pth (iteration 4)" in "\n".join(log.messages)
    assert runner.message_hub.get_info("nonfinite_rollbacks") == 1
    saved = torch.load(tmp_path / "iter_4.pth", weights_only=False)
    for key, value in saved["state_dict"].items():
        assert torch.equal(seen["weights"][key], value), key
    # The learning rate kept its schedule (MultiStepLR at 4: 0.001 from iteration 5 on).
    assert seen["lr"] == pytest.approx([0.001])
    assert all(torch.isfinite(p).all() for p in runner.model.parameters())


def _as_hook(probe):
    from treadle.runner.hooks import Hook

    class ProbeHook(Hook):
        def after_train_iter(self, runner, batch_idx, data_batch=None, outputs=None):
            probe.after_train_iter(runner, batch_idx, data_batch, outputs)

    return ProbeHook()


def test_rollback_without_a_checkpoint_stops(tmp_path):
    cfg = iter_cfg(
        tmp_path, dict(nan_at=[1]), nonfinite_loss="rollback", nonfinite_check_interval=1
    )
    with pytest.raises(
        NonFiniteLossError, match=r"iteration 2;.*cannot roll back: no checkpoint was saved in"
    ):
        Runner(**cfg).train()


def test_rollback_gives_up_after_max_rollbacks(tmp_path):
    cfg = iter_cfg(
        tmp_path,
        dict(nan_from=5),
        nonfinite_loss="rollback",
        nonfinite_check_interval=1,
        max_rollbacks=2,
    )
    with pytest.raises(
        NonFiniteLossError,
        match=r"iteration 8;.*cannot roll back: it happened again after 2 rollback\(s\) "
        r"\(train_cfg max_rollbacks=2\)",
    ):
        Runner(**cfg).train()


@pytest.mark.parametrize(
    ("train", "error", "words"),
    [
        (dict(nonfinite_loss="rollbak"), ValueError, "did you mean 'rollback'?"),
        (dict(nonfinite_loss=1), ValueError, "nonfinite_loss must be one of 'stop'"),
        (
            dict(nonfinite_loss="rollback", skip_nonfinite_loss=True),
            ValueError,
            "keep one of them",
        ),
        (dict(nonfinite_loss="rollback", max_rollbacks=0), ValueError, "max_rollbacks must be"),
        (dict(nonfinite_loss="rollback", max_rollbacks="3"), TypeError, "max_rollbacks must be"),
    ],
)
def test_bad_choices_name_the_train_cfg_key(tmp_path, train, error, words):
    runner = Runner(**iter_cfg(tmp_path, dict(), **train))
    with pytest.raises(error, match=words.replace("(", r"\(").replace("?", r"\?")):
        runner.train()


def test_rollback_in_an_epoch_based_run(tmp_path):
    from runner_toy_model import toy_cfg

    cfg = toy_cfg(
        tmp_path,
        model=dict(type="StorageToyModel", nan_at=[5]),
        train_cfg=dict(
            by_epoch=True, max_epochs=3, nonfinite_loss="rollback", nonfinite_check_interval=1
        ),
        default_hooks=dict(checkpoint=dict(type="CheckpointHook", interval=1)),
    )
    runner = Runner(**cfg)
    with captured_log(runner.logger) as log:
        runner.train()
    text = "\n".join(log.messages)
    assert "nan at iteration 6 (epoch 2, batch 2);" in text
    assert "epoch_1.pth (iteration 4)" in text
    assert runner.epoch == 3 and runner.iter == 12
    assert all(torch.isfinite(p).all() for p in runner.model.parameters())
