"""Asynchronous checkpoint writes of whole files (CheckpointIO(async_save=True)) and through
CheckpointHook(async_save=True): the written state is the one at save time, a save waits for the
one before it, errors come out of wait(), and a process that exits without waiting still leaves a
complete file. The host copy of parameters and optimizer state runs beside training and the next
optimizer step waits for it; the pointer moves and old checkpoints go in the writer's thread
after the write; a failed background write is reported at the next save or the end of training.
Sharded async saves are in test_strategies_fsdp_distributed.py; kills during async saves in
test_fault_kill_async.py."""

from __future__ import annotations

import errno
import subprocess
import sys
import threading

import pytest
import torch

from treadle.runner.checkpoint import async_writer, find_latest_checkpoint
from treadle.runner.strategies import checkpoint_io
from treadle.runner.strategies.async_sources import step_changed_tensors
from treadle.runner.strategies.checkpoint_io import CheckpointIO


def test_the_file_holds_the_state_at_save_time(tmp_path):
    io = CheckpointIO()
    weights = torch.ones(4)
    io.save(
        {"state_dict": {"w": weights}, "meta": {"iter": 1}},
        str(tmp_path / "a.pth"),
        async_save=True,
    )
    weights.mul_(3)  # the next optimizer step, in place
    io.wait()
    saved = torch.load(tmp_path / "a.pth", weights_only=True)
    assert saved["state_dict"]["w"].tolist() == [1.0] * 4
    assert saved["meta"] == {"iter": 1}


def test_a_new_save_waits_for_the_previous_one(tmp_path, monkeypatch):
    release = threading.Event()
    order = []
    real_save = checkpoint_io.save_checkpoint

    def slow_save(checkpoint, path, backend_args=None):
        if path.endswith("first.pth"):
            release.wait(timeout=30)
        real_save(checkpoint, path, backend_args=backend_args)
        order.append(path.rsplit("/", 1)[-1])

    monkeypatch.setattr(checkpoint_io, "save_checkpoint", slow_save)
    io = CheckpointIO()
    io.save({"n": 1}, str(tmp_path / "first.pth"), async_save=True)
    second = threading.Thread(
        target=io.save, args=({"n": 2}, str(tmp_path / "second.pth")), kwargs={"async_save": True}
    )
    second.start()
    second.join(0.2)
    assert second.is_alive() and order == []  # blocked behind the first write
    release.set()
    second.join(30)
    io.wait()
    assert order == ["first.pth", "second.pth"]


def test_a_failed_background_write_is_raised_by_wait(tmp_path):
    (tmp_path / "file").write_text("not a folder")
    io = CheckpointIO()
    io.save({"n": 1}, str(tmp_path / "file" / "a.pth"), async_save=True)
    with pytest.raises(OSError):
        io.wait()
    io.wait()  # reported once


def test_the_process_exits_cleanly_with_a_write_in_flight(tmp_path):
    script = (
        "import torch\n"
        "from treadle.runner.strategies.checkpoint_io import CheckpointIO\n"
        "io = CheckpointIO()\n"
        f"io.save({{'w': torch.ones(2_000_000)}}, {str(tmp_path / 'a.pth')!r}, async_save=True)\n"
        "print('returned')\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "returned"
    assert torch.load(tmp_path / "a.pth", weights_only=True)["w"].shape == (2_000_000,)


def test_checkpoint_hook_async_save_through_the_runner(tmp_path):
    from runner_toy_model import toy_cfg

    from treadle.runner.runner import Runner

    cfg = toy_cfg(
        tmp_path,
        default_hooks=dict(checkpoint=dict(type="CheckpointHook", interval=1, async_save=True)),
    )
    Runner(**cfg).train()
    assert find_latest_checkpoint(tmp_path) == str(tmp_path / "epoch_3.pth")
    for epoch in (1, 2, 3):
        saved = torch.load(tmp_path / f"epoch_{epoch}.pth", weights_only=False)
        assert saved["meta"]["epoch"] == epoch


def test_checkpoint_hook_async_save_must_be_a_bool():
    from treadle.runner.hooks import CheckpointHook

    with pytest.raises(TypeError, match="async_save must be a bool, got 'yes'"):
        CheckpointHook(async_save="yes")


# ---------------------------------------------------------------- the copy overlaps the step


def _blocked_copy(monkeypatch):
    """Hold the background copy until the returned event is set."""
    release = threading.Event()
    copy_all = async_writer._copy_all

    def held(copies, ready):
        release.wait(timeout=30)
        copy_all(copies, ready)

    monkeypatch.setattr(async_writer, "_copy_all", held)
    return release


def _linear_and_sgd():
    torch.manual_seed(0)
    model = torch.nn.Linear(1024, 512)  # 2 MiB of weights: copied in the background
    model.register_buffer("seen", torch.zeros(3))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.5, momentum=0.9)
    return model, optimizer


def _train_step(model, optimizer):
    model.seen.add_(1)  # a buffer the forward pass changes (as BatchNorm's statistics)
    model(torch.ones(2, 1024)).sum().backward()
    optimizer.step()
    optimizer.zero_grad()


def test_the_copy_runs_beside_training_and_the_next_step_waits_for_it(tmp_path, monkeypatch):
    model, optimizer = _linear_and_sgd()
    _train_step(model, optimizer)  # the optimizer has momentum buffers to save
    expected = {k: v.clone() for k, v in model.state_dict().items()}
    momentum = optimizer.state[model.weight]["momentum_buffer"].clone()
    release = _blocked_copy(monkeypatch)
    io = CheckpointIO()
    io.copy_in_background([optimizer], step_changed_tensors(model, [optimizer]))
    io.save(
        {"state_dict": model.state_dict(), "optimizer": optimizer.state_dict()},
        str(tmp_path / "a.pth"),
        async_save=True,
    )
    # save returned with the copy still to do: the next forward and backward run meanwhile,
    # and the step, which would change what is being copied, waits for it.
    step = threading.Thread(target=_train_step, args=(model, optimizer))
    step.start()
    step.join(0.3)
    assert step.is_alive()
    assert torch.equal(model.weight, expected["weight"])
    release.set()
    step.join(30)
    assert not step.is_alive()
    assert not torch.equal(model.weight, expected["weight"])  # the step went on
    io.wait()
    saved = torch.load(tmp_path / "a.pth", weights_only=True)
    for key, value in expected.items():
        assert torch.equal(saved["state_dict"][key], value), key
    assert saved["state_dict"]["seen"].tolist() == [1.0] * 3  # copied before save returned
    state = saved["optimizer"]["state"][0]["momentum_buffer"]
    assert torch.equal(state, momentum)


def test_without_a_guarded_optimizer_everything_is_copied_before_save_returns(
    tmp_path, monkeypatch
):
    model, _ = _linear_and_sgd()
    release = _blocked_copy(monkeypatch)
    io = CheckpointIO()
    # Parameters named, but no optimizer step waits: nothing may be left to the background.
    io.copy_in_background([], step_changed_tensors(model, []))
    io.save({"state_dict": model.state_dict()}, str(tmp_path / "a.pth"), async_save=True)
    before = model.weight.detach().clone()
    with torch.no_grad():
        model.weight.mul_(2)
    release.set()
    io.wait()
    saved = torch.load(tmp_path / "a.pth", weights_only=True)
    assert torch.equal(saved["state_dict"]["weight"], before)


def test_host_buffers_are_reused_from_one_save_to_the_next(tmp_path):
    model, optimizer = _linear_and_sgd()
    io = CheckpointIO()
    pointers = []
    for name in ("a.pth", "b.pth"):
        io.copy_in_background([optimizer], step_changed_tensors(model, [optimizer]))
        io.save({"w": model.weight.detach()}, str(tmp_path / name), async_save=True)
        pointers.append(io._writer._job.buffers[0].data_ptr())
        io.wait()
        _train_step(model, optimizer)
    assert pointers[0] == pointers[1]
    assert not torch.equal(
        torch.load(tmp_path / "a.pth", weights_only=True)["w"],
        torch.load(tmp_path / "b.pth", weights_only=True)["w"],
    )


# ---------------------------------------------------------------- CheckpointHook(async_save)


def _iter_cfg(tmp_path, val_interval=100, **checkpoint):
    from runner_toy_model import toy_cfg

    hook = dict(type="CheckpointHook", interval=2, by_epoch=False, async_save=True)
    hook.update(checkpoint)
    return toy_cfg(
        tmp_path,
        train_cfg=dict(by_epoch=False, max_iters=8, val_interval=val_interval),
        param_scheduler=None,
        default_hooks=dict(checkpoint=hook),
        log_level="INFO",
    )


def test_async_saves_leave_what_synchronous_saves_leave(tmp_path, monkeypatch):
    from treadle.runner.hooks import Hook
    from treadle.runner.runner import Runner

    # Every parameter through the background copy, small as the toy model is; the copy runs
    # in the middle of validation (while EMAHook has the averaged weights swapped in) unless
    # validation waits for it, which it must: the copy then gives up waiting after 0.5 s.
    monkeypatch.setattr(async_writer, "_BACKGROUND_BYTES", 0)
    copy_all = async_writer._copy_all
    validating, copied = threading.Event(), threading.Event()

    def copy_during_validation(copies, ready):
        validating.wait(timeout=0.5)
        copy_all(copies, ready)
        copied.set()

    class HoldValidation(Hook):
        def after_val_iter(self, runner, batch_idx, data_batch=None, outputs=None):
            if batch_idx == 0:
                validating.set()
                copied.wait(timeout=5)
                validating.clear()
                copied.clear()

    monkeypatch.setattr(async_writer, "_copy_all", copy_during_validation)
    finals = {}
    for mode in (False, True):
        work_dir = tmp_path / str(mode)
        # Validation after every save, with EMAHook swapping the averaged weights in (in
        # place) while the save's copy may still be going on.
        cfg = _iter_cfg(work_dir, val_interval=2, async_save=mode, max_keep_ckpts=2)
        cfg["custom_hooks"] = [dict(type="EMAHook", momentum=0.5)]
        if mode:
            cfg["custom_hooks"].append(HoldValidation())
        Runner(**cfg).train()
        finals[mode] = work_dir
        assert sorted(p.name for p in work_dir.glob("iter_*.pth")) == ["iter_6.pth", "iter_8.pth"]
        assert find_latest_checkpoint(work_dir) == str(work_dir / "iter_8.pth")
    for name in ("iter_6.pth", "iter_8.pth"):
        sync = torch.load(finals[False] / name, weights_only=False)
        asyn = torch.load(finals[True] / name, weights_only=False)
        for part in ("state_dict", "ema_state_dict"):
            assert asyn[part].keys() == sync[part].keys()
            for key, value in sync[part].items():
                assert torch.equal(asyn[part][key], value), (name, part, key)
        assert asyn["optimizer"] == sync["optimizer"]
        assert asyn["meta"]["iter"] == sync["meta"]["iter"]
        for key in ("keep_ckpt_ids", "last_ckpt", "stale_ckpt_ids"):
            got = asyn["message_hub"]["runtime_info"][key]
            want = sync["message_hub"]["runtime_info"][key]
            assert str(got).replace("True", "False") == str(want), key


def test_the_pointer_moves_and_old_files_go_after_the_write_off_the_training_thread(
    tmp_path, monkeypatch
):
    from treadle.runner.checkpoint.pointer import read_pointer
    from treadle.runner.hooks import checkpoint_hook
    from treadle.runner.runner import Runner

    seen = []
    real_save = checkpoint_io.save_checkpoint
    real_remove = checkpoint_hook.remove_checkpoint

    def recording_save(checkpoint, path, backend_args=None):
        # While a checkpoint is written, the pointer still names the one before it.
        seen.append(("write", path.rsplit("/", 1)[-1], read_pointer(str(tmp_path))))
        real_save(checkpoint, path, backend_args=backend_args)

    def recording_remove(path, backend):
        seen.append(("remove", path.rsplit("/", 1)[-1], threading.current_thread().name))
        return real_remove(path, backend)

    monkeypatch.setattr(checkpoint_io, "save_checkpoint", recording_save)
    monkeypatch.setattr(checkpoint_hook, "remove_checkpoint", recording_remove)
    Runner(**_iter_cfg(tmp_path, max_keep_ckpts=1)).train()
    writes = [entry for entry in seen if entry[0] == "write"]
    assert [(name, pointer and pointer.rsplit("/", 1)[-1]) for _, name, pointer in writes] == [
        ("iter_2.pth", None),
        ("iter_4.pth", "iter_2.pth"),
        ("iter_6.pth", "iter_4.pth"),
        ("iter_8.pth", "iter_6.pth"),
    ]
    removals = [entry for entry in seen if entry[0] == "remove"]
    assert [name for _, name, _ in removals] == ["iter_2.pth", "iter_4.pth", "iter_6.pth"]
    assert {thread for _, _, thread in removals} == {"treadle-checkpoint-writer"}
    assert find_latest_checkpoint(tmp_path) == str(tmp_path / "iter_8.pth")
    assert sorted(p.name for p in tmp_path.glob("iter_*.pth")) == ["iter_8.pth"]


def _failing_write(monkeypatch, name):
    real_save = checkpoint_io.save_checkpoint

    def save(checkpoint, path, backend_args=None):
        if path.endswith(name):
            raise OSError(errno.ENOSPC, "No space left on device")
        real_save(checkpoint, path, backend_args=backend_args)

    monkeypatch.setattr(checkpoint_io, "save_checkpoint", save)


def test_a_failed_background_write_is_logged_at_the_next_save_and_training_goes_on(
    tmp_path, monkeypatch
):
    from runner_toys import captured_log

    from treadle.runner.runner import Runner

    _failing_write(monkeypatch, "iter_4.pth")
    runner = Runner(**_iter_cfg(tmp_path, max_keep_ckpts=2))
    with captured_log(runner.logger) as log:
        runner.train()
    text = "\n".join(log.messages)
    assert (
        f"CheckpointHook: the background write of {tmp_path / 'iter_4.pth'} (saved at iteration "
        "4, async_save=True) failed: no space left on the device" in text
    )
    assert f"the previous checkpoint {tmp_path / 'iter_2.pth'} is intact" in text
    assert "training goes on" in text
    # As after a failed synchronous save: iter_2 was kept in its place, the steps go on.
    assert sorted(p.name for p in tmp_path.glob("iter_*.pth")) == ["iter_6.pth", "iter_8.pth"]
    saved = torch.load(tmp_path / "iter_6.pth", weights_only=False)
    assert saved["message_hub"]["runtime_info"]["keep_ckpt_ids"] == [2, 6]
    assert find_latest_checkpoint(tmp_path) == str(tmp_path / "iter_8.pth")


def test_a_failed_background_write_stops_training_with_on_save_error_stop(tmp_path, monkeypatch):
    from treadle.runner.hooks.checkpoint_failure import CheckpointSaveError
    from treadle.runner.runner import Runner

    _failing_write(monkeypatch, "iter_8.pth")  # the last save: reported at the end of train()
    runner = Runner(**_iter_cfg(tmp_path, on_save_error="stop"))
    with pytest.raises(CheckpointSaveError, match=r"background write of .*iter_8\.pth.*stops"):
        runner.train()
    assert find_latest_checkpoint(tmp_path) == str(tmp_path / "iter_6.pth")


def test_a_failed_write_whose_error_another_waiter_took_still_counts_as_failed(
    tmp_path, monkeypatch
):
    from runner_toys import captured_log

    from treadle.runner.hooks import Hook
    from treadle.runner.runner import Runner

    class Rollback(Hook):
        """Waits for the writer as a non-finite rollback does, and takes its error."""

        priority = "LOWEST"  # after CheckpointHook's save of the same iteration

        def after_train_iter(self, runner, batch_idx, data_batch=None, outputs=None):
            if runner.iter + 1 == 4:
                with pytest.raises(OSError, match="No space left"):
                    runner.strategy.wait_for_checkpoint()

    _failing_write(monkeypatch, "iter_4.pth")
    cfg = _iter_cfg(tmp_path, max_keep_ckpts=2)
    cfg["custom_hooks"] = [Rollback()]
    runner = Runner(**cfg)
    with captured_log(runner.logger) as log:
        runner.train()
    errors = [m for m in log.messages if "background write of" in m]
    assert len(errors) == 1, log.messages
    assert "iter_4.pth (saved at iteration 4, async_save=True) failed" in errors[0]
    assert "the write did not complete" in errors[0]
    saved = torch.load(tmp_path / "iter_6.pth", weights_only=False)
    assert saved["message_hub"]["runtime_info"]["keep_ckpt_ids"] == [2, 6]
