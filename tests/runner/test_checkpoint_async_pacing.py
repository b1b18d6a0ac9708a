"""The background write of an asynchronous save is spread over the training steps that follow
it (treadle.runner.checkpoint.write_pacing): each guarded optimizer step lets a share go; the
share follows the steps seen between saves; a write nobody steps for (validation, the end of
training) goes on by itself; waiting for the write lets the rest go at once; the file is the
same as an unpaced write's."""

from __future__ import annotations

import os
import threading
import time

import torch

from treadle.runner.checkpoint import async_writer
from treadle.runner.checkpoint.async_writer import AsyncCheckpointWriter, storage_keys
from treadle.runner.checkpoint.write_pacing import MIN_SHARE_BYTES, PacedFile, WritePace

MIB = 1 << 20


def _in_thread(function, *args):
    results = []
    thread = threading.Thread(target=lambda: results.append(function(*args)), daemon=True)
    thread.start()
    return thread, results


def test_a_step_lets_its_share_go():
    pace = WritePace(share=32 * MIB, step_seconds=10.0)
    thread, granted = _in_thread(pace.take, 8 * MIB)
    thread.join(0.2)
    assert thread.is_alive()  # the step that copies the weights carries no write
    pace.tick()
    thread.join(5)
    assert granted == [8 * MIB]
    assert pace.take(64 * MIB) == 24 * MIB  # what is left of the step's share


def test_the_share_is_never_below_the_minimum():
    pace = WritePace(share=1, step_seconds=10.0)
    pace.tick()
    assert pace.take(64 * MIB) == MIN_SHARE_BYTES


def test_release_lets_everything_go():
    pace = WritePace(share=32 * MIB, step_seconds=10.0)
    thread, granted = _in_thread(pace.take, 8 * MIB)
    pace.release()
    thread.join(5)
    assert granted == [8 * MIB]
    assert pace.take(1 << 40) == 1 << 40


def test_without_steps_the_write_goes_on_by_itself():
    pace = WritePace(share=32 * MIB, step_seconds=0.02)
    started = time.monotonic()
    assert pace.take(1 << 40) == 1 << 40  # no step for 4 step times: not stepping
    assert time.monotonic() - started < 5


def test_a_paced_file_writes_everything_in_pieces(tmp_path):
    pace = WritePace(share=16 * MIB, step_seconds=10.0)
    data = os.urandom(3 * MIB) * 13  # 39 MiB: three steps' shares
    done = threading.Event()
    path = tmp_path / "out.bin"

    def write():
        with open(path, "wb") as file:
            assert PacedFile(file, pace).write(data) == len(data)
        done.set()

    threading.Thread(target=write, daemon=True).start()
    for _ in range(3):
        assert not done.wait(0.1)
        pace.tick()
    assert done.wait(10)
    assert path.read_bytes() == data


def _big_save(writer, tmp_path, weights, optimizer, name):
    writer.save(
        {"state_dict": {"w": weights}},
        str(tmp_path / name),
        background=storage_keys([weights]),
    )
    writer.guard([optimizer])


def _written_bytes(tmp_path) -> int:
    return sum(path.stat().st_size for path in tmp_path.iterdir())  # the temporary file too


def test_the_write_follows_the_optimizer_steps(tmp_path):
    weights = torch.nn.Parameter(torch.zeros(24 * MIB // 4))  # 24 MiB, under one share
    optimizer = torch.optim.SGD([weights], lr=1.0)
    weights.grad = torch.ones_like(weights)
    writer = AsyncCheckpointWriter()
    _big_save(writer, tmp_path, weights, optimizer, "a.pth")
    time.sleep(0.3)  # the copy is done; the write waits for a step
    assert _written_bytes(tmp_path) < MIN_SHARE_BYTES // 2
    optimizer.step()  # waits for the copy, then lets a share (16 MiB) go
    deadline = time.monotonic() + 10
    # (less the file's first bytes, which wait in the file object's buffer)
    while _written_bytes(tmp_path) < MIN_SHARE_BYTES - MIB and time.monotonic() < deadline:
        time.sleep(0.01)
    time.sleep(0.2)
    assert MIN_SHARE_BYTES - MIB <= _written_bytes(tmp_path) <= MIN_SHARE_BYTES  # one share
    writer.wait()  # the rest at once
    saved = torch.load(tmp_path / "a.pth", weights_only=True)
    assert torch.equal(saved["state_dict"]["w"], torch.zeros_like(weights))  # before the step
    assert torch.equal(weights.detach(), -torch.ones_like(weights))


def test_the_share_follows_the_steps_between_saves(tmp_path, monkeypatch):
    shares = []
    real = async_writer.WritePace

    def recorded(share, step_seconds):
        shares.append(share)
        return real(share, step_seconds)

    monkeypatch.setattr(async_writer, "WritePace", recorded)
    weights = torch.nn.Parameter(torch.zeros(64 * MIB // 4))
    optimizer = torch.optim.SGD([weights], lr=1.0)
    weights.grad = torch.zeros_like(weights)
    writer = AsyncCheckpointWriter()
    _big_save(writer, tmp_path, weights, optimizer, "a.pth")
    for _ in range(16):
        optimizer.step()
    _big_save(writer, tmp_path, weights, optimizer, "b.pth")
    writer.wait()
    # The first save: spread over 4 steps; the second: over half of the 16 steps seen.
    assert [share // MIB for share in shares] == [16, 8]
    for name in ("a.pth", "b.pth"):
        assert torch.load(tmp_path / name, weights_only=True)["state_dict"]["w"].numel()


def test_a_write_without_steps_completes(tmp_path, monkeypatch):
    monkeypatch.setattr(async_writer, "_FIRST_STEP_SECONDS", 0.05)
    weights = torch.nn.Parameter(torch.ones(24 * MIB // 4))
    optimizer = torch.optim.SGD([weights], lr=1.0)
    writer = AsyncCheckpointWriter()
    written = threading.Event()
    _big_save(writer, tmp_path, weights, optimizer, "a.pth")
    writer.after_write(written.set)
    assert written.wait(10)  # no optimizer step came: the write went on by itself
    writer.wait()
    assert torch.equal(torch.load(tmp_path / "a.pth")["state_dict"]["w"], weights.detach())
