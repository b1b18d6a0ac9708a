"""OptimWrapper: updates equal to hand-written PyTorch loops (plain, accumulated, clipped),
the counting that decides updates and gradient syncs, learning rates and momenta, state dicts,
the message hub, and every error a user can trigger."""

from __future__ import annotations

import logging

import pytest
import torch
from runner_toys import FakeDDP, captured_log
from torch import nn

from treadle.logging import MessageHub
from treadle.runner.optim import BaseOptimWrapper, OptimWrapper
from treadle.runner.registry import OPTIM_WRAPPERS

BATCHES = 10


def make_model(seed: int = 0) -> nn.Module:
    torch.manual_seed(seed)
    return nn.Sequential(nn.Linear(3, 5), nn.Tanh(), nn.Linear(5, 2))


def batches(count: int = BATCHES) -> list[tuple[torch.Tensor, torch.Tensor]]:
    generator = torch.Generator().manual_seed(1)
    return [
        (torch.randn(4, 3, generator=generator), torch.randn(4, 2, generator=generator))
        for _ in range(count)
    ]


def loss_of(model: nn.Module, batch) -> torch.Tensor:
    inputs, targets = batch
    return (model(inputs) - targets).pow(2).mean()


def sgd(model: nn.Module) -> torch.optim.Optimizer:
    return torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)


def assert_same_parameters(left: nn.Module, right: nn.Module) -> None:
    for (name, a), b in zip(left.named_parameters(), right.parameters(), strict=True):
        assert torch.equal(a, b), name


class Recorder:
    """A stand-in message hub that keeps what it is given, unread."""

    def __init__(self) -> None:
        self.updates: list[tuple[str, object]] = []

    def update_scalar(self, key, value, count=1, resumed=True):
        self.updates.append((key, value))


@pytest.fixture
def logged():
    """The records logged through the current MMLogger during the test."""
    with captured_log() as log:
        yield log.records


# --- updates equal to plain PyTorch ---------------------------------------------------------


def test_update_params_equals_backward_step_zero_grad():
    reference, model = make_model(), make_model()
    optimizer = sgd(reference)
    wrapper = OptimWrapper(sgd(model))
    for batch in batches():
        loss_of(reference, batch).backward()
        optimizer.step()
        optimizer.zero_grad()
        wrapper.update_params(loss_of(model, batch))
    assert_same_parameters(reference, model)
    assert wrapper.inner_count == BATCHES
    assert all(param.grad is None for param in model.parameters())


@pytest.mark.parametrize("accumulate", [2, 3, 4])
def test_accumulation_with_the_last_partial_one_equals_a_hand_written_loop(accumulate):
    # 10 batches, 4 per update: updates after 4, 8 and 10; the last two losses are halved.
    reference, model = make_model(), make_model()
    optimizer = sgd(reference)
    last_full = BATCHES - BATCHES % accumulate
    for index, batch in enumerate(batches()):
        factor = accumulate if index < last_full else BATCHES - last_full
        (loss_of(reference, batch) / factor).backward()
        if (index + 1) % accumulate == 0 or index + 1 == BATCHES:
            optimizer.step()
            optimizer.zero_grad()

    wrapper = OptimWrapper(sgd(model), accumulative_counts=accumulate)
    wrapper.initialize_count_status(model, init_counts=0, max_counts=BATCHES)
    updates = []
    for batch in batches():
        wrapper.update_params(loss_of(model, batch))
        updates.append(wrapper.should_update())
    assert_same_parameters(reference, model)
    assert [i + 1 for i, update in enumerate(updates) if update] == sorted(
        {*range(accumulate, BATCHES + 1, accumulate), BATCHES}
    )


def test_last_partial_accumulation_divides_by_its_own_length():
    model = make_model()
    wrapper = OptimWrapper(sgd(model), accumulative_counts=4)
    wrapper.initialize_count_status(model, 0, BATCHES)
    factors = []
    for _ in range(BATCHES):
        factors.append(float(1 / wrapper.scale_loss(torch.tensor(1.0))))
        wrapper.backward(torch.zeros((), requires_grad=True))
    assert factors == [4.0] * 8 + [2.0] * 2


def test_accumulation_without_a_known_total_divides_every_loss_by_the_count():
    reference, model = make_model(), make_model()
    optimizer = sgd(reference)
    for index, batch in enumerate(batches()):
        (loss_of(reference, batch) / 4).backward()
        if (index + 1) % 4 == 0:
            optimizer.step()
            optimizer.zero_grad()
    wrapper = OptimWrapper(sgd(model), accumulative_counts=4)
    for batch in batches():
        wrapper.update_params(loss_of(model, batch))
    assert_same_parameters(reference, model)
    assert wrapper.max_counts == -1
    # The last two batches' gradients wait for the next update, as with the hand-written loop.
    assert all(
        torch.equal(a.grad, b.grad)
        for a, b in zip(reference.parameters(), model.parameters(), strict=True)
    )


def test_scale_loss_is_the_loss_itself_without_accumulation():
    loss = torch.tensor(3.0)
    assert OptimWrapper(sgd(make_model())).scale_loss(loss) is loss


def test_resumed_count_continues_the_accumulation_schedule():
    model = make_model()
    wrapper = OptimWrapper(sgd(model), accumulative_counts=4)
    wrapper.initialize_count_status(model, init_counts=8, max_counts=BATCHES)
    assert wrapper.inner_count == 8
    assert float(wrapper.scale_loss(torch.tensor(1.0))) == 0.5
    assert not wrapper.should_sync()  # call 9 is not an update, call 10 is
    wrapper.update_params(loss_of(model, batches(1)[0]))
    assert not wrapper.should_update()
    assert wrapper.should_sync()


def test_update_params_passes_step_and_zero_kwargs():
    calls = []

    class Spy(torch.optim.SGD):
        def step(self, closure=None, **kwargs):
            calls.append(("step", kwargs))
            return super().step(closure)

        def zero_grad(self, set_to_none=True):
            calls.append(("zero_grad", set_to_none))
            super().zero_grad(set_to_none)

    model = make_model()
    wrapper = OptimWrapper(Spy(model.parameters(), lr=0.1))
    wrapper.update_params(loss_of(model, batches(1)[0]), zero_kwargs={"set_to_none": False})
    assert calls == [("step", {}), ("zero_grad", False)]
    assert all(torch.count_nonzero(param.grad) == 0 for param in model.parameters())


# --- should_update, should_sync and optim_context -------------------------------------------


def test_optim_context_skips_sync_on_calls_that_only_accumulate():
    model = FakeDDP(make_model())
    wrapper = OptimWrapper(sgd(model), accumulative_counts=3)
    wrapper.initialize_count_status(model, 0, 7)
    for batch in batches(7):
        with wrapper.optim_context(model):
            loss = loss_of(model, batch)
        wrapper.update_params(loss)
    # Updates after calls 3, 6 and 7 (the end of the run): only those sync.
    assert model.synced == [False, False, True, False, False, True, True]


def test_optim_context_syncs_every_call_without_accumulation():
    model = FakeDDP(make_model())
    wrapper = OptimWrapper(sgd(model))
    for batch in batches(3):
        with wrapper.optim_context(model):
            loss = loss_of(model, batch)
        wrapper.update_params(loss)
    assert model.synced == [True, True, True]


def test_optim_context_is_empty_for_a_model_without_no_sync():
    model = make_model()
    wrapper = OptimWrapper(sgd(model), accumulative_counts=2)
    with wrapper.optim_context(model):
        loss = loss_of(model, batches(1)[0])
    assert loss.requires_grad


# --- clipping --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("clip_grad", "clip"),
    [
        (dict(max_norm=0.05), lambda p: nn.utils.clip_grad_norm_(p, max_norm=0.05)),
        (
            dict(type="norm", max_norm=0.1, norm_type=1),
            lambda p: nn.utils.clip_grad_norm_(p, 0.1, norm_type=1),
        ),
        (dict(type="value", clip_value=0.01), lambda p: nn.utils.clip_grad_value_(p, 0.01)),
    ],
)
def test_clipped_updates_equal_a_hand_written_loop(clip_grad, clip):
    reference, model = make_model(), make_model()
    optimizer = sgd(reference)
    wrapper = OptimWrapper(sgd(model), clip_grad=clip_grad)
    for batch in batches():
        loss_of(reference, batch).backward()
        clip(list(reference.parameters()))
        optimizer.step()
        optimizer.zero_grad()
        wrapper.update_params(loss_of(model, batch))
    assert_same_parameters(reference, model)


def test_grad_norm_goes_to_the_hub_as_an_unread_tensor():
    model = make_model()
    wrapper = OptimWrapper(sgd(model), clip_grad=dict(max_norm=0.05))
    wrapper.message_hub = recorder = Recorder()
    reference = make_model()
    loss_of(reference, batches(1)[0]).backward()
    expected = nn.utils.clip_grad_norm_(reference.parameters(), 0.05)
    wrapper.update_params(loss_of(model, batches(1)[0]))
    [(key, value)] = recorder.updates
    assert key == "train/grad_norm"
    assert isinstance(value, torch.Tensor)  # not a float: reading it would sync the device
    assert torch.equal(value, expected)


def test_clip_by_value_records_nothing():
    model = make_model()
    wrapper = OptimWrapper(sgd(model), clip_grad=dict(type="value", clip_value=0.1))
    wrapper.message_hub = recorder = Recorder()
    wrapper.update_params(loss_of(model, batches(1)[0]))
    assert recorder.updates == []
    assert wrapper.grad_name == "grad_value"


def test_grad_norm_reaches_a_hub_created_after_the_wrapper():
    model = make_model()
    wrapper = OptimWrapper(sgd(model), clip_grad=dict(max_norm=1.0))
    hub = MessageHub.get_instance("optim-wrapper-test-later-hub")
    wrapper.update_params(loss_of(model, batches(1)[0]))
    assert wrapper.message_hub is hub
    assert len(hub.get_scalar("train/grad_norm").data[0]) == 1


def test_no_gradient_means_nothing_to_clip():
    model = make_model()
    wrapper = OptimWrapper(sgd(model), clip_grad=dict(max_norm=1.0))
    wrapper.message_hub = recorder = Recorder()
    wrapper.step()
    assert recorder.updates == []


def test_clip_grad_config_is_not_modified():
    clip_grad = dict(type="norm", max_norm=1.0)
    wrapper = OptimWrapper(sgd(make_model()), clip_grad=clip_grad)
    assert clip_grad == dict(type="norm", max_norm=1.0)
    assert wrapper.clip_grad_kwargs == dict(max_norm=1.0)


@pytest.mark.parametrize(
    ("clip_grad", "error", "match"),
    [
        ([1.0], TypeError, r"clip_grad must be a dict .* got list"),
        (
            dict(type="nrom", max_norm=1),
            ValueError,
            r"clip_grad type 'nrom' is not one of 'norm', 'value'; did you mean 'norm'\?",
        ),
        (dict(type="l2", max_norm=1), ValueError, r"type 'l2' is not one of 'norm', 'value'$"),
        (
            dict(max_nrom=1),
            TypeError,
            r"does not take 'max_nrom' \(did you mean 'max_norm'\?\); it takes max_norm, "
            r"norm_type, error_if_nonfinite, foreach",
        ),
        (dict(type="value", max_norm=1), TypeError, r"type 'value' does not take 'max_norm'"),
        (dict(type="value"), TypeError, r"type 'value' needs clip_value"),
        ({}, TypeError, r"type 'norm' needs max_norm"),
    ],
)
def test_bad_clip_grad_fails_at_construction(clip_grad, error, match):
    with pytest.raises(error, match=match):
        OptimWrapper(sgd(make_model()), clip_grad=clip_grad)


# --- learning rates, momenta, groups, state ---------------------------------------------------


def test_get_lr_and_momentum_of_one_group():
    model = make_model()
    wrapper = OptimWrapper(sgd(model))
    assert wrapper.get_lr() == {"lr": [0.1]}
    assert wrapper.get_momentum() == {"momentum": [0.9]}
    assert wrapper.param_groups is wrapper.optimizer.param_groups
    assert wrapper.defaults is wrapper.optimizer.defaults


@pytest.mark.parametrize(
    ("optimizer", "momentum"),
    [
        (lambda p: torch.optim.Adam(p, lr=0.01, betas=(0.8, 0.99)), 0.8),
        (lambda p: torch.optim.Adagrad(p, lr=0.01), 0),
        (lambda p: torch.optim.RMSprop(p, lr=0.01, momentum=0.5), 0.5),
    ],
)
def test_momentum_is_momentum_or_the_first_beta_or_zero(optimizer, momentum):
    wrapper = OptimWrapper(optimizer(make_model().parameters()))
    assert wrapper.get_momentum() == {"momentum": [momentum]}


def test_several_groups_add_base_param_settings():
    model = make_model()
    optimizer = torch.optim.SGD(
        [{"params": model[0].parameters(), "lr": 0.5}, {"params": model[2].parameters()}],
        lr=0.1,
        momentum=0.9,
    )
    wrapper = OptimWrapper(optimizer)
    assert wrapper.get_lr() == {"base_lr": [0.1], "lr": [0.5, 0.1]}
    assert wrapper.get_momentum() == {"momentum": [0.9, 0.9]}
    groups = wrapper.param_groups
    assert len(groups) == 3 and groups[-1] is wrapper.base_param_settings
    # A scheduler writes into every group, the base one included.
    for group in groups:
        group["lr"] *= 0.1
    lrs = wrapper.get_lr()
    assert lrs["base_lr"] == pytest.approx([0.01]) and lrs["lr"] == pytest.approx([0.05, 0.01])
    state = wrapper.state_dict()
    assert state["base_param_settings"]["lr"] == pytest.approx(0.01)

    fresh = OptimWrapper(
        torch.optim.SGD(
            [{"params": model[0].parameters(), "lr": 0.5}, {"params": model[2].parameters()}],
            lr=0.1,
        )
    )
    fresh.load_state_dict(state)
    lrs = fresh.get_lr()
    assert lrs["base_lr"] == pytest.approx([0.01]) and lrs["lr"] == pytest.approx([0.05, 0.01])
    assert "base_param_settings" in state  # the caller's dict is left whole


def test_state_dict_round_trip_continues_identically():
    reference, model = make_model(), make_model()
    wrapper = OptimWrapper(sgd(model))
    reference_wrapper = OptimWrapper(sgd(reference))
    data = batches()
    for batch in data[:5]:
        wrapper.update_params(loss_of(model, batch))
        reference_wrapper.update_params(loss_of(reference, batch))
    state = wrapper.state_dict()
    assert "base_param_settings" not in state
    resumed = OptimWrapper(sgd(model))
    resumed.load_state_dict(state)
    for batch in data[5:]:
        resumed.update_params(loss_of(model, batch))
        reference_wrapper.update_params(loss_of(reference, batch))
    assert_same_parameters(reference, model)


def test_built_from_the_registry():
    model = make_model()
    wrapper = OPTIM_WRAPPERS.build(
        dict(
            type="OptimWrapper",
            optimizer=sgd(model),
            accumulative_counts=2,
            clip_grad=dict(max_norm=1.0),
        )
    )
    assert isinstance(wrapper, OptimWrapper) and isinstance(wrapper, BaseOptimWrapper)
    assert wrapper._accumulative_counts == 2


def test_repr_names_the_type_the_accumulation_and_the_optimizer():
    wrapper = OptimWrapper(sgd(make_model()), accumulative_counts=2)
    text = repr(wrapper)
    assert text.startswith("Type: OptimWrapper\n_accumulative_counts: 2\noptimizer: \nSGD (")


def test_base_optim_wrapper_is_abstract():
    with pytest.raises(TypeError, match="abstract"):
        BaseOptimWrapper(sgd(make_model()))


# --- warnings and errors ---------------------------------------------------------------------


def test_resuming_inside_an_accumulation_warns(logged):
    model = make_model()
    OptimWrapper(sgd(model), accumulative_counts=4).initialize_count_status(model, 6, BATCHES)
    [record] = logged
    assert record.levelno == logging.WARNING
    assert "resuming at count 6, inside an accumulation of 4" in record.getMessage()


def test_accumulation_with_batch_norm_warns(logged):
    model = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4))
    OptimWrapper(sgd(model), accumulative_counts=2).initialize_count_status(model, 0, 4)
    assert any("BatchNorm" in record.getMessage() for record in logged)
    logged.clear()
    OptimWrapper(sgd(model)).initialize_count_status(model, 0, 4)
    assert logged == []


@pytest.mark.parametrize("value", [0, -1, 1.5, True, "2"])
def test_bad_accumulative_counts(value):
    with pytest.raises(ValueError, match=r"accumulative_counts must be an int >= 1, got"):
        OptimWrapper(sgd(make_model()), accumulative_counts=value)


def test_config_instead_of_optimizer():
    with pytest.raises(TypeError, match=r"must be a built optimizer, got the config \{'type'"):
        OptimWrapper(dict(type="SGD", lr=0.1))


def test_not_an_optimizer():
    with pytest.raises(TypeError, match=r"got Linear, which lacks param_groups, step"):
        OptimWrapper(nn.Linear(1, 1))


@pytest.mark.parametrize(
    ("init_counts", "max_counts", "match"),
    [
        (-1, 10, r"init_counts must be an int >= 0, got -1"),
        (0, 0, r"max_counts must be an int >= 1, got 0"),
        (0, 2.5, r"max_counts must be an int >= 1, got 2.5"),
        (11, 10, r"init_counts \(11\) is past max_counts \(10\)"),
    ],
)
def test_bad_count_status(init_counts, max_counts, match):
    model = make_model()
    with pytest.raises(ValueError, match=match):
        OptimWrapper(sgd(model), accumulative_counts=2).initialize_count_status(
            model, init_counts, max_counts
        )


def test_calls_past_max_counts_fail():
    model = make_model()
    wrapper = OptimWrapper(sgd(model), accumulative_counts=2)
    wrapper.initialize_count_status(model, 0, 2)
    for batch in batches(2):
        wrapper.update_params(loss_of(model, batch))
    with pytest.raises(RuntimeError, match=r"call 3 is past max_counts \(2\)"):
        wrapper.update_params(loss_of(model, batches(1)[0]))
