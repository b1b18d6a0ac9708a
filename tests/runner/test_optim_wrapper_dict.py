"""OptimWrapperDict: dict-like access, learning rates and momenta by name, state per name, and
the methods that belong to one wrapper raising with directions."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from treadle.runner.optim import OptimWrapper, OptimWrapperDict


def make_wrappers():
    torch.manual_seed(0)
    gen, disc = nn.Linear(3, 3), nn.Linear(3, 1)
    gen_wrapper = OptimWrapper(torch.optim.SGD(gen.parameters(), lr=0.1, momentum=0.5))
    two_groups = torch.optim.Adam(
        [{"params": [disc.weight], "lr": 0.02}, {"params": [disc.bias]}],
        lr=0.01,
        betas=(0.7, 0.9),
    )
    disc_wrapper = OptimWrapper(two_groups)
    return (gen, disc), OptimWrapperDict(gen=gen_wrapper, disc=disc_wrapper)


def test_dict_like_access():
    _, wrappers = make_wrappers()
    assert len(wrappers) == 2
    assert list(wrappers.keys()) == ["gen", "disc"] == list(wrappers)
    assert "gen" in wrappers and "critic" not in wrappers
    assert wrappers["gen"] is wrappers.optim_wrappers["gen"]
    assert [name for name, _ in wrappers.items()] == ["gen", "disc"]
    assert list(wrappers.values()) == [wrappers["gen"], wrappers["disc"]]


def test_lr_and_momentum_are_prefixed_by_name():
    _, wrappers = make_wrappers()
    assert wrappers.get_lr() == {
        "gen.lr": [0.1],
        "disc.base_lr": [0.01],
        "disc.lr": [0.02, 0.01],
    }
    assert wrappers.get_momentum() == {"gen.momentum": [0.5], "disc.momentum": [0.7, 0.7]}


def test_param_groups_and_defaults_per_name():
    _, wrappers = make_wrappers()
    groups = wrappers.param_groups
    assert list(groups) == ["gen", "disc"]
    assert len(groups["gen"]) == 1 and len(groups["disc"]) == 3  # with base_param_settings
    assert wrappers.defaults["gen"]["lr"] == 0.1


def test_state_dict_per_name_round_trip():
    (gen, disc), wrappers = make_wrappers()
    wrappers["gen"].update_params(gen(torch.ones(2, 3)).sum())
    wrappers["disc"].update_params(disc(torch.ones(2, 3)).sum())
    state = wrappers.state_dict()
    assert list(state) == ["gen", "disc"]
    assert "base_param_settings" in state["disc"]
    _, fresh = make_wrappers()
    fresh.load_state_dict(state)
    assert fresh["gen"].optimizer.state_dict()["state"].keys() == state["gen"]["state"].keys()
    momentum = fresh["gen"].optimizer.state_dict()["state"][0]["momentum_buffer"]
    assert torch.equal(momentum, state["gen"]["state"][0]["momentum_buffer"])


def test_zero_grad_clears_every_wrapper():
    (gen, disc), wrappers = make_wrappers()
    gen(torch.ones(1, 3)).sum().backward()
    disc(torch.ones(1, 3)).sum().backward()
    wrappers.zero_grad()
    assert all(p.grad is None for p in [*gen.parameters(), *disc.parameters()])


def test_initialize_count_status_does_nothing():
    (gen, _), wrappers = make_wrappers()
    wrappers.initialize_count_status(gen, 0, 10)
    assert wrappers["gen"].max_counts == -1


@pytest.mark.parametrize(
    "call",
    [
        lambda w: w.update_params(torch.tensor(1.0)),
        lambda w: w.backward(torch.tensor(1.0)),
        lambda w: w.step(),
        lambda w: w.optim_context(nn.Linear(1, 1)),
        lambda w: w.scale_loss(torch.tensor(1.0)),
        lambda w: w.should_update(),
        lambda w: w.should_sync(),
    ],
)
def test_update_methods_belong_to_one_wrapper(call):
    _, wrappers = make_wrappers()
    with pytest.raises(
        NotImplementedError,
        match=r"`(\w+)` should be called by each optimizer wrapper separately \(a loss belongs "
        r"to one optimizer\), e\.g\. optim_wrapper\['gen'\]\.\1\(",
    ) as info:
        call(wrappers)
    assert "the wrappers here: gen, disc" in str(info.value)


def test_unknown_name_lists_the_known_ones():
    _, wrappers = make_wrappers()
    with pytest.raises(KeyError, match=r"no wrapper 'gne' \(did you mean 'gen'\?\); it has 'gen'"):
        wrappers["gne"]


def test_loading_an_unknown_name_loads_nothing():
    _, wrappers = make_wrappers()
    _, other = make_wrappers()
    state = other.state_dict()
    state["critic"] = state.pop("disc")
    before = wrappers.state_dict()
    with pytest.raises(
        KeyError,
        match=r"holds 'critic', which this OptimWrapperDict lacks; it "
        r"has 'gen', 'disc'",
    ):
        wrappers.load_state_dict(state)
    assert wrappers.state_dict()["gen"]["param_groups"] == before["gen"]["param_groups"]


def test_only_optimizer_wrappers_are_accepted():
    with pytest.raises(
        TypeError,
        match=r"`OptimWrapperDict` only accept optimizer wrappers, but gen= is a SGD; wrap an "
        r"optimizer first",
    ) as caught:
        OptimWrapperDict(gen=torch.optim.SGD(nn.Linear(1, 1).parameters(), lr=0.1))
    assert isinstance(caught.value, AssertionError)  # MMEngine asserts there


def test_repr_lists_each_wrapper_by_name():
    _, wrappers = make_wrappers()
    text = repr(wrappers)
    assert text.startswith("name: gen\nType: OptimWrapper\n")
    assert "name: disc\nType: OptimWrapper\n" in text
