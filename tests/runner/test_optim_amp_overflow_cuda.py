"""fp16 loss-scale overflows on a CUDA GPU: the same counting, logging and collapse error as the
CPU tests of test_optim_amp_overflow.py, with the GradScaler chosen for the device (not forced
to the CPU) and the model, batches and scaler state on the GPU. Skipped without CUDA."""

from __future__ import annotations

import pytest
import torch
from amp_overflow_toys import amp_overflow_cfg, logged, train

from treadle.runner.optim.optimizer.amp_overflow import LossScaleCollapseError
from treadle.runner.runner import Runner

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")


def test_skipped_steps_are_counted_on_the_gpu(tmp_path):
    k, max_iters = 3, 8
    runner = Runner(**amp_overflow_cfg(tmp_path, overflow_steps=k, max_iters=max_iters))
    lines, _ = train(runner)
    assert next(runner.model.parameters()).device.type == "cuda"
    scaler = runner.optim_wrapper.loss_scaler
    assert scaler.is_enabled() and scaler.get_scale() > 0
    assert scaler._scale.device.type == "cuda"  # the scale lives beside the gradients
    assert runner.optim_wrapper.skipped_steps == k
    assert logged(lines, "skipped_steps") == [1] * k + [0] * (max_iters - k)
    assert logged(lines, "loss_scale")[: k + 1] == [2.0**15, 2.0**14, 2.0**13, 2.0**13]
    (scheduler,) = runner.param_schedulers
    assert scheduler.last_step == max_iters - k


def test_a_collapsing_scale_stops_the_run_on_the_gpu(tmp_path):
    cfg = amp_overflow_cfg(
        tmp_path, overflow_steps=None, max_iters=20, amp=dict(max_consecutive_skips=6)
    )
    with pytest.raises(LossScaleCollapseError, match="collapsed at iteration 6: the last 6"):
        train(Runner(**cfg))
