"""treadle.runner.optim's optimizer wrappers against MMEngine 0.10's mmengine.optim: the same
training through both (accumulation, clipping by norm and by value, several parameter groups)
gives the same parameters bit for bit, the same learning rates, momenta, state dicts, grad norms
and counting decisions, and each side loads the other's state dict.

Runs only where mmengine is installed: ``hatch run mmengine:pytest ...``.
"""

from __future__ import annotations

import uuid

import pytest

pytest.importorskip("mmengine")

import mmengine.logging as mm_logging
import mmengine.optim as mm
import torch
from torch import nn

import treadle.logging as tr_logging
import treadle.runner.optim as tr

SIDES = {"mmengine": (mm, mm_logging), "treadle": (tr, tr_logging)}
BATCHES = 10


def make_model() -> nn.Module:
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(3, 6), nn.Tanh(), nn.Linear(6, 2))


def batches():
    generator = torch.Generator().manual_seed(1)
    return [
        (torch.randn(4, 3, generator=generator), torch.randn(4, 2, generator=generator))
        for _ in range(BATCHES)
    ]


def loss_of(model, batch):
    inputs, targets = batch
    return (model(inputs) - targets).pow(2).mean()


def grouped_sgd(model):
    return torch.optim.SGD(
        [{"params": model[0].parameters(), "lr": 0.05}, {"params": model[2].parameters()}],
        lr=0.1,
        momentum=0.9,
        weight_decay=1e-4,
    )


OPTIMIZERS = {
    "sgd": lambda model: torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9),
    "adam": lambda model: torch.optim.Adam(model.parameters(), lr=0.01, betas=(0.8, 0.95)),
    "adagrad": lambda model: torch.optim.Adagrad(model.parameters(), lr=0.01),
    "grouped": grouped_sgd,
}


def train(side, optimizer="sgd", count_status=True, **kwargs):
    """Train one side: returns (model, wrapper, decisions, the hub's grad norms)."""
    module, logging = SIDES[side]
    # A name never used before: get_instance of an existing name does not make that hub the
    # current one (in either library), and id(kwargs) can repeat once a dict is freed.
    hub = logging.MessageHub.get_instance(f"parity-optim-wrapper-{side}-{uuid.uuid4().hex}")
    model = make_model()
    wrapper = module.OptimWrapper(OPTIMIZERS[optimizer](model), **kwargs)
    if count_status:
        wrapper.initialize_count_status(model, 0, BATCHES)
    decisions = []
    for batch in batches():
        decisions.append(wrapper.should_sync())
        wrapper.update_params(loss_of(model, batch))
        decisions.append(wrapper.should_update())
    norms = []
    if "train/grad_norm" in hub.log_scalars:
        norms = [float(value) for value in hub.get_scalar("train/grad_norm").data[0]]
    return model, wrapper, decisions, norms


def both(**kwargs):
    return train("mmengine", **kwargs), train("treadle", **kwargs)


def assert_same_parameters(left, right):
    for (name, a), b in zip(left.named_parameters(), right.parameters(), strict=True):
        assert torch.equal(a, b), name


def assert_same_state(left, right):
    assert left.keys() == right.keys()
    for key in left:
        a, b = left[key], right[key]
        if isinstance(a, torch.Tensor):
            assert torch.equal(a, b), key
        elif isinstance(a, dict):
            assert_same_state(a, b)
        elif isinstance(a, list):
            assert len(a) == len(b)
            for x, y in zip(a, b, strict=True):
                if isinstance(x, dict):
                    assert_same_state(x, y)
                else:
                    assert x == y, key
        else:
            assert a == b, key


@pytest.mark.parametrize("optimizer", list(OPTIMIZERS))
@pytest.mark.parametrize(
    ("kwargs", "count_status"),
    [
        ({}, True),
        ({"accumulative_counts": 4}, True),
        ({"accumulative_counts": 3}, False),
        ({"clip_grad": {"max_norm": 0.05}}, True),
        ({"clip_grad": {"type": "norm", "max_norm": 0.1, "norm_type": 1}}, True),
        ({"clip_grad": {"type": "value", "clip_value": 0.01}}, True),
        ({"accumulative_counts": 4, "clip_grad": {"max_norm": 0.05}}, True),
    ],
)
def test_same_training(optimizer, kwargs, count_status):
    # Each side gets its own copy: MMEngine pops 'type' out of the clip_grad it is given.
    import copy

    (mm_model, mm_wrapper, mm_decisions, mm_norms) = train(
        "mmengine", optimizer, count_status, **copy.deepcopy(kwargs)
    )
    (tr_model, tr_wrapper, tr_decisions, tr_norms) = train(
        "treadle", optimizer, count_status, **copy.deepcopy(kwargs)
    )
    assert_same_parameters(mm_model, tr_model)
    assert tr_decisions == mm_decisions
    assert tr_norms == mm_norms
    assert tr_wrapper.inner_count == mm_wrapper.inner_count
    assert tr_wrapper.get_lr() == mm_wrapper.get_lr()
    assert tr_wrapper.get_momentum() == mm_wrapper.get_momentum()
    assert_same_state(mm_wrapper.state_dict(), tr_wrapper.state_dict())
    assert repr(tr_wrapper) == repr(mm_wrapper)


def test_scale_loss_factors_are_the_same():
    factors = {}
    for side, (module, _) in SIDES.items():
        model = make_model()
        wrapper = module.OptimWrapper(OPTIMIZERS["sgd"](model), accumulative_counts=4)
        wrapper.initialize_count_status(model, 2, BATCHES)
        factors[side] = []
        for _ in range(BATCHES - 2):
            factors[side].append(float(wrapper.scale_loss(torch.tensor(1.0))))
            wrapper.backward(torch.zeros((), requires_grad=True))
    assert factors["treadle"] == factors["mmengine"]


@pytest.mark.parametrize("optimizer", ["sgd", "grouped"])
def test_each_side_loads_the_others_state_dict(optimizer):
    (_, mm_wrapper, _, _), (_, tr_wrapper, _, _) = both(optimizer=optimizer)
    into_treadle = tr.OptimWrapper(OPTIMIZERS[optimizer](make_model()))
    into_treadle.load_state_dict(mm_wrapper.state_dict())
    assert_same_state(into_treadle.state_dict(), mm_wrapper.state_dict())
    into_mmengine = mm.OptimWrapper(OPTIMIZERS[optimizer](make_model()))
    into_mmengine.load_state_dict(tr_wrapper.state_dict())
    assert_same_state(into_mmengine.state_dict(), tr_wrapper.state_dict())


def test_optim_wrapper_dict_reports_the_same():
    results = {}
    for side, (module, _) in SIDES.items():
        gen, disc = make_model(), make_model()
        wrappers = module.OptimWrapperDict(
            gen=module.OptimWrapper(OPTIMIZERS["adam"](gen)),
            disc=module.OptimWrapper(grouped_sgd(disc)),
        )
        wrappers["gen"].update_params(loss_of(gen, batches()[0]))
        wrappers["disc"].update_params(loss_of(disc, batches()[1]))
        results[side] = wrappers
    mm_dict, tr_dict = results["mmengine"], results["treadle"]
    assert tr_dict.get_lr() == mm_dict.get_lr()
    assert tr_dict.get_momentum() == mm_dict.get_momentum()
    assert_same_state(mm_dict.state_dict(), tr_dict.state_dict())
    assert list(tr_dict.keys()) == list(mm_dict.keys())
    assert repr(tr_dict) == repr(mm_dict)
    for call in ("update_params", "backward"):
        for wrappers in (mm_dict, tr_dict):
            with pytest.raises(NotImplementedError):
                getattr(wrappers, call)(torch.tensor(1.0))


@pytest.mark.parametrize(
    "clip_grad", [{"type": "l2", "max_norm": 1.0}, {"type": "Norm", "max_norm": 1.0}]
)
def test_unknown_clip_type_is_a_value_error_on_both(clip_grad):
    for module, _ in SIDES.values():
        with pytest.raises(ValueError, match=r"l2|Norm"):
            module.OptimWrapper(OPTIMIZERS["sgd"](make_model()), clip_grad=dict(clip_grad))


def test_difference_clip_grad_is_checked_at_construction():
    # MMEngine accepts a misspelt argument and fails inside torch at the first step.
    model = make_model()
    mm_wrapper = mm.OptimWrapper(OPTIMIZERS["sgd"](model), clip_grad={"max_nrom": 1})
    with pytest.raises(TypeError):
        mm_wrapper.update_params(loss_of(model, batches()[0]))
    with pytest.raises(TypeError, match="did you mean 'max_norm'"):
        tr.OptimWrapper(OPTIMIZERS["sgd"](make_model()), clip_grad={"max_nrom": 1})


def test_difference_grad_norm_is_kept_on_the_device():
    # MMEngine logs float(norm), a host sync at every step; treadle logs the tensor unread
    # (test_optim_wrapper.py checks that), and both read back the same number.
    stored = {}
    for side, (module, logging) in SIDES.items():
        hub = logging.MessageHub.get_instance(f"parity-optim-wrapper-norm-{side}")
        model = make_model()
        wrapper = module.OptimWrapper(OPTIMIZERS["sgd"](model), clip_grad={"max_norm": 0.05})
        wrapper.message_hub = hub
        wrapper.update_params(loss_of(model, batches()[0]))
        stored[side] = hub.get_scalar("train/grad_norm")
    assert stored["treadle"].current() == stored["mmengine"].current()


def test_bfloat16_amp_training_on_the_cpu_is_the_same(monkeypatch):
    # MMEngine refuses AMP without an accelerator; told there is one, it autocasts the CPU in
    # bfloat16 with a disabled (CUDA) scaler: what treadle does on the CPU by design.
    import mmengine.optim.optimizer.amp_optimizer_wrapper as mm_amp

    import treadle.runner.optim.optimizer.amp_optimizer_wrapper as tr_amp

    monkeypatch.setattr(mm_amp, "is_cuda_available", lambda: True)
    monkeypatch.setattr(tr_amp, "get_device", lambda: "cpu")
    models, wrappers = {}, {}
    for side, (module, _) in SIDES.items():
        model = make_model()
        wrapper = module.AmpOptimWrapper(
            optimizer=OPTIMIZERS["adam"](model),
            dtype="bfloat16",
            accumulative_counts=2,
            clip_grad={"max_norm": 0.5},
        )
        wrapper.initialize_count_status(model, 0, BATCHES)
        for batch in batches():
            with wrapper.optim_context(model):
                loss = loss_of(model, batch)
            wrapper.update_params(loss)
        models[side], wrappers[side] = model, wrapper
    assert_same_parameters(models["mmengine"], models["treadle"])
    assert_same_state(wrappers["mmengine"].state_dict(), wrappers["treadle"].state_dict())
