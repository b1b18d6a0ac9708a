"""FSDPStrategy and MMFullyShardedDataParallel without a process group: their arguments and
the errors a config can trigger, which submodules an auto-wrap policy makes FSDP units, and
optimizer states re-keyed between parameter indices and names. Sharding and checkpoints in a
real group are in test_strategies_fsdp_distributed.py."""

from __future__ import annotations

import pytest
import torch
from fsdp_toys import make_model
from torch import nn

from treadle.runner.model import MMFullyShardedDataParallel
from treadle.runner.model.wrappers.fsdp_wrap_policy import units_to_shard
from treadle.runner.registry import STRATEGIES
from treadle.runner.strategies import FSDPStrategy
from treadle.runner.strategies.checkpoint_io import CheckpointIO, ShardedCheckpointIO
from treadle.runner.strategies.fsdp_optim_keys import rekey_optimizer_state


def test_registered_and_picks_its_checkpoint_io():
    strategy = STRATEGIES.build(dict(type="FSDPStrategy"))
    assert isinstance(strategy, FSDPStrategy)
    assert type(strategy.checkpoint_io) is ShardedCheckpointIO
    assert type(FSDPStrategy(state_dict_cfg="full").checkpoint_io) is CheckpointIO
    assert strategy.checkpoint_on_every_rank
    # MMEngine's dict form
    full = FSDPStrategy(state_dict_cfg=dict(state_dict_type="FULL_STATE_DICT"))
    assert full.state_dict_kind == "full"
    assert FSDPStrategy(state_dict_cfg=dict()).state_dict_kind == "local"


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        (dict(state_dict_cfg="sharded"), ValueError, "state_dict_cfg must be 'local'"),
        (
            dict(state_dict_cfg=dict(state_dict_type="HALF_STATE_DICT")),
            ValueError,
            "state_dict_type'\\] must be one of LOCAL_STATE_DICT, SHARDED_STATE_DICT",
        ),
        (dict(state_dict_cfg=3), TypeError, "state_dict_cfg must be 'local', 'full' or a dict"),
        (dict(skip_init_weights="yes"), TypeError, "skip_init_weights must be a bool"),
        (dict(model_wrapper="MMFullyShardedDataParallel"), TypeError, "model_wrapper must be"),
        (dict(state_dict_cgf="full"), TypeError, "did you mean 'state_dict_cfg'"),
    ],
)
def test_strategy_argument_errors(kwargs, error, message):
    with pytest.raises(error, match=message):
        FSDPStrategy(**kwargs)


def test_unknown_strategy_name_lists_fsdp_among_the_closest():
    with pytest.raises(KeyError, match="FSDPStrategy"):
        STRATEGIES.build(dict(type="FSDPStrategi"))


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        (dict(limit_all_gather=True), TypeError, "unexpected argument\\(s\\) limit_all_gather"),
        (
            dict(mixed_precision=dict(param_dtype="bfloat16", keep_grads=True)),
            KeyError,
            "mixed_precision has no field keep_grads",
        ),
        (dict(cpu_offload="yes"), TypeError, "cpu_offload must be None, a bool"),
        (dict(backward_prefetch="AFTER"), ValueError, "backward_prefetch='AFTER' is not one of"),
    ],
)
def test_wrapper_argument_errors(kwargs, error, message):
    with pytest.raises(error, match=message):
        MMFullyShardedDataParallel(make_model(), **kwargs)


def test_wrapper_needs_a_process_group():
    with pytest.raises(RuntimeError, match="there is none: launch with torchrun"):
        # FSDP1-only arguments of MMEngine configs are accepted.
        MMFullyShardedDataParallel(make_model(), use_orig_params=False, limit_all_gathers=True)


def names(model, units):
    named = {id(module): name for name, module in model.named_modules()}
    return [named[id(unit)] for unit in units]


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.inner = nn.Linear(4, 4)
        self.extra = nn.Linear(4, 4)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = nn.ModuleList([Block(), Block()])
        self.head = nn.Linear(4, 1)


def test_units_by_class_names_children_first():
    model = Net()
    assert names(model, units_to_shard(model, ["Block"], set())) == ["blocks.1", "blocks.0"]
    assert names(model, units_to_shard(model, None, set())) == []


def test_units_by_fsdp1_policies_named_in_a_config():
    from treadle.runner.model.wrappers.fully_sharded import _function

    model = Net()
    size = _function(
        "auto_wrap_policy", dict(type="size_based_auto_wrap_policy", min_num_params=30)
    )
    # Each block (40 parameters) is big enough; the head (5) stays with the root.
    assert names(model, units_to_shard(model, size, set())) == ["blocks.0", "blocks.1"]
    by_class = _function(
        "auto_wrap_policy",
        dict(type="transformer_auto_wrap_policy", transformer_layer_cls=["Block"]),
    )
    assert names(model, units_to_shard(model, by_class, set())) == ["blocks.0", "blocks.1"]
    module_policy = _function(
        "auto_wrap_policy", dict(type="ModuleWrapPolicy", module_classes=["Linear"])
    )
    assert len(units_to_shard(model, module_policy, set())) == 5


def test_policy_class_name_not_in_the_model_names_the_closest():
    with pytest.raises(KeyError, match=r"names 'Blok', .* did you mean 'Block'"):
        units_to_shard(Net(), ["Blok"], set())


def test_optimizer_state_rekeyed_between_indices_and_names():
    by_name = {
        "state": {"a.weight": {"step": 1}, "b.weight": {"step": 2}},
        "param_groups": [{"lr": 1, "params": ["a.weight"]}, {"lr": 2, "params": ["b.weight"]}],
        "loss_scaler": {"scale": 4.0},
    }
    by_index = {"state": {}, "param_groups": [{"lr": 1, "params": [0]}, {"lr": 2, "params": [1]}]}
    indexed = rekey_optimizer_state(by_name, by_index)
    assert indexed["state"] == {0: {"step": 1}, 1: {"step": 2}}
    assert [g["params"] for g in indexed["param_groups"]] == [[0], [1]]
    assert indexed["loss_scaler"] == {"scale": 4.0}
    assert rekey_optimizer_state(indexed, by_name)["state"] == by_name["state"]
    # An OptimWrapperDict's states, per name; groups that do not line up stay as they are.
    assert rekey_optimizer_state({"gen": by_name}, {"gen": by_index})["gen"]["state"][0]
    other = {"state": {}, "param_groups": [{"params": [0, 1]}]}
    assert rekey_optimizer_state(by_name, other) is by_name


def test_prepare_refuses_an_optimizer_that_has_stepped(monkeypatch):
    strategy = FSDPStrategy()
    model = make_model()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    model(torch.ones(1, 6)).sum().backward()
    optimizer.step()
    from treadle.runner.optim import OptimWrapper

    wrapper = OptimWrapper(optimizer)
    replacement = make_model()  # what sharding would put in place: other parameter objects
    strategy.model = replacement
    names = {id(p): n for n, p in model.named_parameters()}
    with pytest.raises(RuntimeError, match="has stepped before the model was sharded"):
        strategy._rebind_optimizer(wrapper, names)


def test_amp_optim_wrapper_configs_get_the_sharded_scaler():
    strategy = FSDPStrategy()
    amp = strategy.adjust_optim_wrapper_cfg(dict(type="AmpOptimWrapper", optimizer={}))
    assert amp["use_fsdp"] is True
    assert "use_fsdp" not in strategy.adjust_optim_wrapper_cfg(dict(optimizer={}))
