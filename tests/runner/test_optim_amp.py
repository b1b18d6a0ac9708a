"""AmpOptimWrapper: real mixed-precision training on the CPU (bfloat16 without a scaler, float16
with torch.amp.GradScaler), loss scale settings, overflow skipping, clipping of unscaled
gradients, state dicts, the errors of bad arguments, and the ApexOptimWrapper stand-in."""

from __future__ import annotations

import math

import pytest
import torch
from runner_toys import FakeDDP, captured_log
from torch import nn

import treadle.runner.optim.optimizer.amp_optimizer_wrapper as amp_module
from treadle.runner.optim import AmpOptimWrapper, ApexOptimWrapper, OptimWrapper
from treadle.runner.registry import OPTIM_WRAPPERS


@pytest.fixture(autouse=True)
def cpu_run(monkeypatch):
    """These tests train on the CPU, also on machines with an accelerator."""
    monkeypatch.setattr(amp_module, "get_device", lambda: "cpu")


def make_model(seed: int = 0) -> nn.Module:
    torch.manual_seed(seed)
    return nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 1))


def data(seed: int = 1) -> tuple[torch.Tensor, torch.Tensor]:
    generator = torch.Generator().manual_seed(seed)
    inputs = torch.randn(64, 8, generator=generator)
    return inputs, inputs.sum(dim=1, keepdim=True) * 0.5


def train(wrapper: AmpOptimWrapper, model: nn.Module, steps: int) -> list[float]:
    inputs, targets = data()
    losses = []
    for _ in range(steps):
        with wrapper.optim_context(model):
            prediction = model(inputs)
        loss = (prediction.float() - targets).pow(2).mean()
        wrapper.update_params(loss)
        losses.append(loss.item())
    return losses


def amp(model: nn.Module, **kwargs) -> AmpOptimWrapper:
    return AmpOptimWrapper(optimizer=torch.optim.Adam(model.parameters(), lr=0.01), **kwargs)


@pytest.fixture
def logged():
    with captured_log() as log:
        yield log.records


# --- real training on the CPU ---------------------------------------------------------------


@pytest.mark.parametrize("dtype", [None, "bfloat16", torch.bfloat16])
def test_bfloat16_training_on_the_cpu(dtype):
    model = make_model()
    wrapper = amp(model, dtype=dtype)
    assert not wrapper.loss_scaler.is_enabled()  # bfloat16 needs no loss scaling
    with wrapper.optim_context(model):
        assert model(data()[0]).dtype == torch.bfloat16
    losses = train(wrapper, model, 40)
    assert losses[-1] < losses[0] * 0.5
    assert all(torch.isfinite(param).all() for param in model.parameters())
    assert all(param.dtype == torch.float32 for param in model.parameters())


def test_float16_training_on_the_cpu_with_a_grad_scaler():
    model = make_model()
    wrapper = amp(model, dtype="float16", loss_scale=dict(init_scale=256.0, growth_interval=10))
    assert wrapper.loss_scaler.is_enabled()
    with wrapper.optim_context(model):
        assert model(data()[0]).dtype == torch.float16
    losses = train(wrapper, model, 40)
    assert losses[-1] < losses[0] * 0.5
    assert all(torch.isfinite(param).all() for param in model.parameters())
    assert wrapper.loss_scaler.get_scale() == 256.0 * 2**4  # grew every 10 clean steps


def test_overflowing_float16_gradients_skip_the_step_and_back_off_the_scale():
    model = make_model()
    before = [param.detach().clone() for param in model.parameters()]
    wrapper = amp(model, dtype="float16", loss_scale=dict(init_scale=2.0**40))
    train(wrapper, model, 1)
    assert all(torch.equal(a, b) for a, b in zip(before, model.parameters(), strict=True))
    assert wrapper.loss_scaler.get_scale() == 2.0**39


@pytest.mark.parametrize("loss_scale", [512.0, 512])
def test_static_loss_scale_stays(loss_scale):
    model = make_model()
    wrapper = amp(model, dtype="float16", loss_scale=loss_scale)
    train(wrapper, model, 3)
    assert wrapper.loss_scaler.get_scale() == 512.0


def test_explicit_loss_scale_is_kept_with_bfloat16():
    wrapper = amp(make_model(), dtype="bfloat16", loss_scale=dict(init_scale=8.0))
    assert wrapper.loss_scaler.is_enabled()
    assert wrapper.loss_scaler.get_scale() == 8.0


def test_clipping_sees_unscaled_gradients():
    inputs, targets = data()

    def scaled_backward(wrapper, model):
        with wrapper.optim_context(model):
            prediction = model(inputs)
        wrapper.backward((prediction.float() - targets).pow(2).mean())

    model = make_model()
    reference = amp(model, dtype="float16", loss_scale=1024.0)
    scaled_backward(reference, model)
    reference.loss_scaler.unscale_(reference.optimizer)
    expected = nn.utils.clip_grad_norm_(model.parameters(), max_norm=float("inf"))

    model = make_model()
    wrapper = amp(model, dtype="float16", loss_scale=1024.0, clip_grad=dict(max_norm=0.01))
    recorded = []
    wrapper.message_hub = type("Hub", (), {"update_scalar": lambda s, k, v: recorded.append(v)})()
    scaled_backward(wrapper, model)
    wrapper.step()
    assert torch.equal(recorded[0], expected)
    assert float(expected) > 0.01
    total = math.sqrt(sum(float(p.grad.pow(2).sum()) for p in model.parameters()))
    assert total == pytest.approx(0.01, rel=1e-3)  # clipped after unscaling


def test_optim_context_combines_no_sync_and_autocast():
    model = FakeDDP(make_model())
    wrapper = amp(model, accumulative_counts=2)
    outputs = []
    for _ in range(4):
        with wrapper.optim_context(model):
            prediction = model(data()[0])
        outputs.append(prediction.dtype)
        wrapper.update_params(prediction.float().mean())
    assert model.synced == [False, True, False, True]
    assert outputs == [torch.bfloat16] * 4


# --- state ----------------------------------------------------------------------------------


def test_state_dict_holds_the_loss_scaler_and_loads_back():
    model = make_model()
    wrapper = amp(model, dtype="float16", loss_scale=dict(init_scale=64.0, growth_interval=1))
    train(wrapper, model, 3)
    state = wrapper.state_dict()
    assert state["loss_scaler"]["scale"] == 512.0
    fresh = amp(make_model(), dtype="float16")
    fresh.load_state_dict(state)
    assert fresh.loss_scaler.get_scale() == 512.0
    assert "loss_scaler" in state  # the caller's dict is left whole
    assert fresh.optimizer.state_dict()["state"].keys() == state["state"].keys()


def test_loading_a_bfloat16_state_into_a_float16_wrapper_warns(logged):
    bf16 = amp(make_model(), dtype="bfloat16")
    state = bf16.state_dict()
    assert state["loss_scaler"] == {}
    fp16 = amp(make_model(), dtype="float16")
    fp16.load_state_dict(state)
    assert fp16.loss_scaler.get_scale() == 65536.0
    assert any("loss scaler was disabled" in record.getMessage() for record in logged)


def test_built_from_the_registry():
    model = make_model()
    wrapper = OPTIM_WRAPPERS.build(
        dict(
            type="AmpOptimWrapper",
            optimizer=torch.optim.SGD(model.parameters(), lr=0.1),
            dtype="float16",
            accumulative_counts=2,
        )
    )
    assert isinstance(wrapper, AmpOptimWrapper) and isinstance(wrapper, OptimWrapper)
    assert wrapper.cast_dtype is torch.float16
    assert wrapper.valid_dtypes == ("float16", "bfloat16")


def test_use_fsdp_takes_the_sharded_scaler():
    from torch.distributed.fsdp.sharded_grad_scaler import ShardedGradScaler

    wrapper = amp(make_model(), dtype="float16", use_fsdp=True)
    assert isinstance(wrapper.loss_scaler, ShardedGradScaler)


# --- errors ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        (
            dict(loss_scale="dyanmic"),
            ValueError,
            r"loss_scale 'dyanmic': the only string accepted is 'dynamic'",
        ),
        (
            dict(loss_scale=[2.0]),
            TypeError,
            r"loss_scale must be 'dynamic', a number or a dict "
            r"of GradScaler arguments, got list",
        ),
        (dict(loss_scale=True), TypeError, r"got bool"),
        (dict(loss_scale=0.0), ValueError, r"loss_scale must be positive, got 0.0"),
        (
            dict(loss_scale=dict(init_scal=2.0)),
            TypeError,
            r"GradScaler does not take 'init_scal' \(did you mean 'init_scale'\?\); it takes "
            r"init_scale, growth_factor",
        ),
        (dict(dtype="float32"), ValueError, r"'float32' is not one of 'float16', 'bfloat16'"),
        (dict(dtype="fp16"), ValueError, r"autocast dtype 'fp16' is not one of"),
        (dict(dtype=torch.float64), ValueError, r"not torch.float64"),
    ],
)
def test_bad_arguments(kwargs, error, match):
    with pytest.raises(error, match=match):
        amp(make_model(), **kwargs)


def test_apex_is_not_supported_and_points_at_amp():
    optimizer = torch.optim.SGD(make_model().parameters(), lr=0.1)
    with pytest.raises(
        NotImplementedError,
        match=r"does not support NVIDIA Apex .* For "
        r"opt_level='O1' use AmpOptimWrapper",
    ):
        ApexOptimWrapper(optimizer=optimizer)
    with pytest.raises(NotImplementedError, match=r"opt_level='O0' use OptimWrapper"):
        OPTIM_WRAPPERS.build(dict(type="ApexOptimWrapper", optimizer=optimizer, opt_level="O0"))
