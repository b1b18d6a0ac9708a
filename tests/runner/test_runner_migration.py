"""Checkpoints written by MMEngine 0.10.7 load and resume in treadle without mmengine and
without unrestricted unpickling (treadle.runner.runner.mmengine_migration).

The files under tests/runner/data/mmengine_0_10_7 were written by make_checkpoints.py there,
with MMEngine's Runner; expected.json holds what MMEngine had in memory.
"""

from __future__ import annotations

import io
import json
import os
import pickle
import subprocess
import sys

import numpy as np
import pytest
import torch
from runner_checkpoint_stub import StubRunner

from treadle.config import ConfigDict
from treadle.logging import HistoryBuffer
from treadle.runner.checkpoint import UnsafeCheckpointError, _load_checkpoint
from treadle.runner.runner.checkpointing import (
    load_runner_checkpoint,
    read_runner_checkpoint,
    resume_runner,
    save_runner_checkpoint,
)
from treadle.runner.runner.mmengine_migration import (
    LegacyHistoryBuffer,
    migrate_mmengine_checkpoint,
    mmengine_safe_globals,
)

DATA = os.path.join(os.path.dirname(__file__), "data", "mmengine_0_10_7")
FULL = os.path.join(DATA, "full_epoch_1.pth")
WEIGHTS = os.path.join(DATA, "weights_only.pth")


@pytest.fixture(scope="module")
def expected() -> dict:
    with open(os.path.join(DATA, "expected.json")) as file:
        return json.load(file)


def test_torch_alone_refuses_the_mmengine_checkpoint():
    # The reason for the migration: weights_only loading names MMEngine's class.
    with pytest.raises(UnsafeCheckpointError, match=r"mmengine.logging.history_buffer"):
        _load_checkpoint(FULL, map_location="cpu")


def test_full_checkpoint_reads_into_treadle_objects(expected):
    checkpoint = read_runner_checkpoint(FULL)
    assert set(checkpoint) == {"meta", "state_dict", "message_hub", "optimizer", "param_schedulers"}
    hub = checkpoint["message_hub"]
    assert set(hub["log_scalars"]) == set(expected["log_scalars"])
    for key, (values, counts) in expected["log_scalars"].items():
        buffer = hub["log_scalars"][key]
        assert isinstance(buffer, HistoryBuffer)
        assert buffer.data == (values, counts)
        assert buffer.max_length == 1000000
    for key, value in expected["runtime_info"].items():
        assert hub["runtime_info"][key] == value
    # eta is a numpy scalar in MMEngine's message hub: it comes back as one.
    assert isinstance(hub["runtime_info"]["eta"], np.floating)
    assert hub["runtime_info"]["dataset_meta"] == {"classes": ("a", "b")}
    extra = checkpoint["meta"]["extra"]
    assert isinstance(extra, ConfigDict)
    assert extra.head.num_classes == 2
    for key, value in expected["meta"].items():
        assert checkpoint["meta"][key] == value
    assert checkpoint["param_schedulers"][0]["last_step"] == expected["param_scheduler_last_step"]


def test_reading_needs_no_mmengine(tmp_path):
    # A fresh interpreter, with any 'mmengine' import made to fail.
    script = tmp_path / "read.py"
    script.write_text(
        "import sys\n"
        "sys.modules['mmengine'] = None\n"
        "from treadle.runner.runner.checkpointing import read_runner_checkpoint\n"
        f"checkpoint = read_runner_checkpoint({FULL!r})\n"
        "print(type(checkpoint['message_hub']['log_scalars']['train/loss']).__module__)\n"
    )
    result = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, check=False, timeout=120
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines()[-1] == "treadle.logging.history_buffer"


def test_weights_only_checkpoint_loads_into_a_treadle_model(expected):
    runner = StubRunner()
    checkpoint = load_runner_checkpoint(runner, WEIGHTS)
    for key, value in expected["final_state_dict"].items():
        assert runner.model.state_dict()[key].tolist() == value
    assert checkpoint["meta"]["epoch"] == 2
    assert runner.calls[0][0] == "after_load_checkpoint"


def test_full_checkpoint_resumes_a_runner(expected):
    runner = StubRunner()
    resume_runner(runner, FULL)
    for key, value in expected["epoch_1_state_dict"].items():
        assert runner.model.state_dict()[key].tolist() == value
    # MMEngine's checkpoint has no 'loop': the counters come from meta.
    assert (runner.epoch, runner.iter) == (1, 4)
    assert runner.train_loop.loaded is None
    optimizer = runner.optim_wrapper.optimizer
    assert optimizer.param_groups[0]["lr"] == pytest.approx(expected["lr_after_epoch_1"])
    assert all("momentum_buffer" in optimizer.state[p] for p in runner.model.parameters())
    assert runner.param_schedulers[0].last_step == expected["param_scheduler_last_step"]
    loss = runner.message_hub.get_scalar("train/loss")
    assert loss.data[0] == expected["log_scalars"]["train/loss"][0]
    assert runner.message_hub.get_info("max_iters") == 8


def test_resumed_mmengine_run_continues_as_mmengine_did(expected):
    # The same epoch 2 MMEngine trained (same batches: no shuffling) gives the same losses.
    runner = StubRunner()
    resume_runner(runner, FULL)
    losses = []
    for batch in range(4):
        inputs, labels = [], []
        for index in (2 * batch, 2 * batch + 1):
            generator = torch.Generator().manual_seed(index)
            inputs.append(torch.randn(2, generator=generator))
            labels.append(torch.randn(1, generator=generator))
        losses.append(runner.model(torch.stack(inputs), torch.stack(labels), mode="loss")["loss"])
        runner.optim_wrapper.update_params(losses[-1])
    assert [loss.item() for loss in losses] == pytest.approx(expected["all_losses"][4:], abs=1e-6)
    for key, value in expected["final_state_dict"].items():
        assert runner.model.state_dict()[key].flatten().tolist() == pytest.approx(
            torch.tensor(value).flatten().tolist(), abs=1e-6
        )


def test_treadle_checkpoint_of_a_migrated_run_loads_without_safe_globals(tmp_path):
    runner = StubRunner()
    resume_runner(runner, FULL)
    path = str(tmp_path / "treadle.pth")
    save_runner_checkpoint(runner, path)
    checkpoint = torch.load(path, weights_only=True)
    assert checkpoint["meta"]["treadle_version"]
    assert checkpoint["message_hub"]["log_scalars"]["train/loss"]["__history_buffer__"] is True


class _GetattrOnAString:
    def __reduce__(self):
        return (getattr, ("abc", "upper"))


class _OsSystem:
    def __reduce__(self):
        return (os.system, ("true",))


def _saved(obj) -> io.BytesIO:
    buffer = io.BytesIO()
    torch.save({"meta": {"x": obj}}, buffer)
    buffer.seek(0)
    return buffer


def test_getattr_is_allowed_only_on_the_history_buffer_stand_in():
    with mmengine_safe_globals(), pytest.raises(pickle.UnpicklingError, match=r"getattr\('abc'"):
        torch.load(_saved(_GetattrOnAString()), weights_only=True)


def test_other_globals_stay_refused():
    with mmengine_safe_globals(), pytest.raises(pickle.UnpicklingError, match="system"):
        torch.load(_saved(_OsSystem()), weights_only=True)


def test_numpy_object_arrays_stay_refused():
    with mmengine_safe_globals(), pytest.raises(pickle.UnpicklingError):
        torch.load(_saved(np.array([object()], dtype=object)), weights_only=True)


def test_legacy_buffer_keeps_the_last_max_length_values():
    legacy = LegacyHistoryBuffer()
    legacy.__dict__.update(
        _log_history=np.array([1.0, 2.0, 6.0]), _count_history=np.array([1, 1, 2]), max_length=2
    )
    buffer = migrate_mmengine_checkpoint({"message_hub": {"log_scalars": {"a": legacy}}})[
        "message_hub"
    ]["log_scalars"]["a"]
    assert buffer.data == ([2.0, 6.0], [1, 2])
    assert buffer.mean() == pytest.approx(8 / 3)


def test_checkpoint_without_legacy_objects_is_returned_unchanged():
    checkpoint = {"meta": {"epoch": 1}, "state_dict": {"w": torch.ones(1)}}
    assert migrate_mmengine_checkpoint(checkpoint) is checkpoint
