"""AmpOptimWrapper on a CUDA GPU: float16 autocast with a dynamic torch.amp.GradScaler, chosen
without being told the device. Skipped on machines without CUDA."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from treadle.runner.optim import AmpOptimWrapper

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")


def test_float16_training_with_a_dynamic_grad_scaler():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 1)).cuda()
    wrapper = AmpOptimWrapper(
        optimizer=torch.optim.Adam(model.parameters(), lr=0.01), clip_grad=dict(max_norm=10.0)
    )
    assert wrapper.cast_dtype is None and wrapper.loss_scaler.is_enabled()
    inputs = torch.randn(64, 8, device="cuda")
    targets = inputs.sum(dim=1, keepdim=True) * 0.5
    losses = []
    for _ in range(40):
        with wrapper.optim_context(model):
            prediction = model(inputs)
        assert prediction.dtype == torch.float16
        loss = (prediction.float() - targets).pow(2).mean()
        wrapper.update_params(loss)
        losses.append(loss.detach())
    assert float(losses[-1]) < float(losses[0]) * 0.5
    assert all(torch.isfinite(param).all() for param in model.parameters())
    state = wrapper.state_dict()["loss_scaler"]
    assert 0 < state["scale"] <= 65536.0  # the default start, backed off on any overflow


def test_bfloat16_training_needs_no_scaler():
    if not torch.cuda.is_bf16_supported():
        pytest.skip("this GPU has no bfloat16")
    model = nn.Linear(8, 1).cuda()
    wrapper = AmpOptimWrapper(
        optimizer=torch.optim.SGD(model.parameters(), lr=0.1), dtype="bfloat16"
    )
    assert not wrapper.loss_scaler.is_enabled()
    with wrapper.optim_context(model):
        prediction = model(torch.ones(2, 8, device="cuda"))
    assert prediction.dtype == torch.bfloat16
    wrapper.update_params(prediction.float().mean())
