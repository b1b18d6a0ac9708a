"""capture_rng_state / restore_rng_state: every generator, in a weights_only checkpoint."""

from __future__ import annotations

import io
import random

import numpy as np
import pytest
import torch

from treadle.runner.loops import capture_rng_state, restore_rng_state


def _draws():
    return (random.random(), np.random.rand(), np.random.randn(), torch.rand(3).tolist())


def test_restore_brings_back_python_numpy_and_torch():
    np.random.randn()  # leaves a cached gaussian in NumPy's state
    state = capture_rng_state()
    first = _draws()
    _draws()
    restore_rng_state(state)
    assert _draws() == first


def test_state_survives_a_weights_only_round_trip():
    state = capture_rng_state()
    first = _draws()
    buffer = io.BytesIO()
    torch.save(state, buffer)
    buffer.seek(0)
    loaded = torch.load(buffer, weights_only=True)
    restore_rng_state(loaded)
    assert _draws() == first
    # Accelerator generators are kept only once the accelerator is in use.
    assert ("device" in state) == (torch.cuda.is_available() and torch.cuda.is_initialized())


def test_a_state_of_another_device_type_is_not_applied_and_is_warned_about():
    from runner_toys import captured_log

    from treadle.runner.device import get_device

    current = get_device()
    other = "npu" if current == "cuda" else "cuda"
    state = capture_rng_state()
    state["device"] = {"type": other, "states": [torch.zeros(16, dtype=torch.uint8)]}
    first = _draws()
    with captured_log() as log:
        restore_rng_state(state)
    assert _draws() == first  # the host generators are restored all the same
    expected = f"random state of {other} devices, but this run uses {current}"
    assert any(expected in m for m in log.messages)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_cuda_generators_are_captured_and_restored():
    torch.cuda.init()
    state = capture_rng_state()
    assert state["device"]["type"] == "cuda"
    assert len(state["device"]["states"]) == torch.cuda.device_count()
    first = torch.rand(4, device="cuda").tolist()
    torch.rand(4, device="cuda")
    restore_rng_state(state)
    assert torch.rand(4, device="cuda").tolist() == first
