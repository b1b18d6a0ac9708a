"""CheckpointHook's MMEngine API: the deprecated ``file_client``, argument errors that are also
the AssertionErrors MMEngine raises, the key lists as MMEngine keeps them, and the
``last_checkpoint`` pointer written with the full path (MMEngine's style, on under compat)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hooks_b_stub_runner import StubRunner

from treadle import fileio
from treadle.runner.checkpoint import find_latest_checkpoint
from treadle.runner.checkpoint.pointer import PointerStyle
from treadle.runner.hooks.checkpoint_hook import CheckpointHook


@pytest.fixture
def runner(tmp_path):
    return StubRunner(tmp_path / "work")


def save_epoch(runner, hook, epoch=1):
    runner.epoch, runner.iter = epoch - 1, epoch * 4 - 1
    hook.after_train_epoch(runner)


def test_file_client_is_a_deprecated_client_made_on_first_use(runner):
    hook = CheckpointHook(interval=1)
    with pytest.raises(AttributeError, match="file_client is made in before_train"):
        _ = hook.file_client
    hook.before_train(runner)
    assert isinstance(hook.file_backend, fileio.LocalBackend)
    with pytest.warns(DeprecationWarning, match="FileClient is deprecated"):
        client = hook.file_client
    assert isinstance(client, fileio.FileClient)
    assert client.join_path(hook.out_dir, "a.pth") == os.path.join(hook.out_dir, "a.pth")
    # The hook keeps writing through its own backend.
    save_epoch(runner, hook)
    assert (Path(runner.work_dir) / "epoch_1.pth").is_file()


def test_with_file_client_args_file_backend_is_the_client(runner):
    hook = CheckpointHook(interval=1, file_client_args=dict(backend="disk"))
    with pytest.warns(DeprecationWarning):
        hook.before_train(runner)
    assert isinstance(hook.file_client, fileio.FileClient)
    assert hook.file_backend is hook.file_client
    save_epoch(runner, hook)
    assert (Path(runner.work_dir) / "epoch_1.pth").is_file()


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        (dict(save_best=dict(acc="acc")), TypeError, '"save_best" should be a str'),
        (dict(save_best=["auto", "acc"]), ValueError, "Only support one key when it is 'auto'"),
        (dict(save_best=["acc"], rule=1), TypeError, '"rule" should be a str'),
        (
            dict(save_best=["acc"], rule=["greater", "less"]),
            ValueError,
            'Number of "rule" must be 1 or the number of save_best keys',
        ),
    ],
)
def test_argument_errors_are_also_assertion_errors(kwargs, error, message):
    with pytest.raises(error, match=message) as caught:
        CheckpointHook(**kwargs)
    assert isinstance(caught.value, AssertionError)


def test_key_lists_are_kept_as_given():
    assert CheckpointHook(greater_keys="acc").greater_keys == ("acc",)
    assert CheckpointHook(greater_keys=["acc"]).greater_keys == ["acc"]
    assert CheckpointHook(less_keys=("loss_cls",)).less_keys == ("loss_cls",)
    hook = CheckpointHook(save_best="top", greater_keys="top")
    assert hook.rules == ["greater"]


def test_the_pointer_holds_the_full_path_in_mmengine_style(runner):
    hook = CheckpointHook(interval=1)
    hook.before_train(runner)
    PointerStyle.full_path = True
    try:
        save_epoch(runner, hook)
    finally:
        PointerStyle.full_path = False
    path = os.path.join(runner.work_dir, "epoch_1.pth")
    assert Path(runner.work_dir, "last_checkpoint").read_text() == path
    assert find_latest_checkpoint(runner.work_dir) == path
    # treadle's own style names it relative to the work dir.
    save_epoch(runner, hook, epoch=2)
    assert Path(runner.work_dir, "last_checkpoint").read_text() == "epoch_2.pth"
