"""get_state_dict, load_state_dict and weights_to_cpu through model wrappers; key revision and
prefix selection of load_checkpoint."""

from __future__ import annotations

import logging
from collections import OrderedDict

import pytest
import torch
from torch import nn

import treadle.runner.checkpoint.state as state_module
from treadle.runner.checkpoint import (
    _load_checkpoint_with_prefix,
    get_state_dict,
    load_checkpoint,
    load_state_dict,
    save_checkpoint,
    weights_to_cpu,
)


class Net(nn.Module):
    def __init__(self, out: int = 2) -> None:
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4))
        self.head = nn.Linear(4, out)


class Holder(nn.Module):
    """A plain module holding a wrapped one: nn.Module(DataParallel(Net))."""

    def __init__(self) -> None:
        super().__init__()
        self.net = nn.DataParallel(Net())  # on a CPU machine: a wrapper that only holds .module


def randomized(module: nn.Module) -> nn.Module:
    with torch.no_grad():
        for tensor in module.state_dict().values():
            if tensor.is_floating_point():
                tensor.copy_(torch.randn_like(tensor))
    return module


def test_get_state_dict_equals_torch_for_a_plain_module():
    net = randomized(Net())
    ours, theirs = get_state_dict(net), net.state_dict()
    assert list(ours) == list(theirs)
    assert all(torch.equal(ours[k], theirs[k]) for k in theirs)
    assert ours._metadata == theirs._metadata
    assert not ours["head.weight"].requires_grad
    assert get_state_dict(net, keep_vars=True)["head.weight"].requires_grad


def test_get_state_dict_sees_through_wrappers_at_any_depth():
    holder = Holder()
    torch_names = list(holder.state_dict())
    assert torch_names[0].startswith("net.module.")
    names = list(get_state_dict(holder))
    assert names == [name.replace("net.module.", "net.") for name in torch_names]
    assert list(get_state_dict(nn.DataParallel(Net()))) == list(Net().state_dict())


def test_get_state_dict_runs_state_dict_hooks():
    net = Net()
    net.head.register_state_dict_post_hook(
        lambda module, destination, prefix, local_metadata: destination.update(
            {prefix + "extra": torch.ones(1)}
        )
    )
    assert "head.extra" in get_state_dict(net)


def test_load_state_dict_into_a_wrapped_model():
    source, holder = randomized(Net()), Holder()
    result = load_state_dict(holder, {f"net.{k}": v for k, v in source.state_dict().items()})
    assert repr(result) == "<All keys matched successfully>"
    for key, value in source.state_dict().items():
        assert torch.equal(holder.net.module.state_dict()[key], value)


def test_missing_and_unexpected_keys_are_named_under_strict():
    state = Net().state_dict()
    del state["head.bias"]
    state["head.scale"] = torch.ones(1)
    with pytest.raises(RuntimeError, match="do not match exactly") as info:
        load_state_dict(Net(), state, strict=True)
    message = str(info.value)
    assert "unexpected key in source state_dict: head.scale" in message
    assert "missing keys in source state_dict: head.bias" in message


def test_non_strict_logs_a_warning_and_returns_the_keys(caplog):
    state = Net().state_dict()
    del state["head.bias"]
    state["head.scale"] = torch.ones(1)
    logger = logging.getLogger("treadle-test-checkpoint")
    with caplog.at_level(logging.WARNING, logger=logger.name):
        result = load_state_dict(Net(), state, logger=logger)
    assert result.missing_keys == ["head.bias"]
    assert result.unexpected_keys == ["head.scale"]
    assert "missing keys in source state_dict: head.bias" in caplog.text


def test_shape_mismatch_names_parameter_and_both_shapes():
    with pytest.raises(RuntimeError, match=r"size mismatch for head\.weight.*\[3, 4\].*\[2, 4\]"):
        load_state_dict(Net(out=2), Net(out=3).state_dict(), strict=True)


def test_shape_mismatch_without_strict_skips_the_parameter(caplog):
    target = Net(out=2)
    before = target.head.weight.clone()
    source = randomized(Net(out=3))
    logger = logging.getLogger("treadle-test-checkpoint")
    with caplog.at_level(logging.WARNING, logger=logger.name):
        load_state_dict(target, source.state_dict(), logger=logger)
    assert "size mismatch for head.weight" in caplog.text
    assert torch.equal(target.head.weight, before)  # left as it was
    assert torch.equal(target.backbone[0].weight, source.backbone[0].weight)  # the rest loaded


def test_num_batches_tracked_may_be_missing():
    state = Net().state_dict()
    del state["backbone.1.num_batches_tracked"]
    assert load_state_dict(Net(), state, strict=True).missing_keys == []


def test_strict_raises_on_every_rank_and_only_rank_0_logs(monkeypatch, caplog):
    monkeypatch.setattr(state_module.dist, "get_rank", lambda *a, **k: 1)
    state = Net().state_dict()
    del state["head.bias"]
    with pytest.raises(RuntimeError, match=r"missing keys in source state_dict: head\.bias"):
        load_state_dict(Net(), state, strict=True)
    logger = logging.getLogger("treadle-test-checkpoint")
    with caplog.at_level(logging.WARNING, logger=logger.name):
        load_state_dict(Net(), state, logger=logger)
    assert caplog.text == ""


def test_load_state_dict_post_hooks_run_and_must_return_none():
    net = Net()
    seen = []
    net.head.register_load_state_dict_post_hook(
        lambda module, keys: seen.append(list(keys.missing_keys))
    )
    load_state_dict(net, Net().state_dict())
    assert seen == [[]]
    net.head.register_load_state_dict_post_hook(lambda module, keys: "changed")
    with pytest.raises(RuntimeError, match="post-hook of Linear returned a value"):
        load_state_dict(net, Net().state_dict())


def test_load_state_dict_refuses_what_is_not_a_dict():
    with pytest.raises(TypeError, match="expects a dict of tensors, got list"):
        load_state_dict(Net(), [torch.ones(1)])


def test_weights_to_cpu_copies_and_keeps_metadata():
    state = Net().state_dict()
    state["nested"] = {"t": [torch.ones(1)]}
    moved = weights_to_cpu(state)
    assert isinstance(moved, OrderedDict)
    assert moved._metadata == state._metadata
    assert moved["nested"]["t"][0].device.type == "cpu"
    assert list(moved) == list(state)


def test_revise_keys_default_strips_module_prefix(tmp_path):
    source = randomized(Net())
    state = {f"module.{k}": v for k, v in source.state_dict().items()}
    save_checkpoint({"state_dict": state}, tmp_path / "ddp.pth")
    target = Net()
    load_checkpoint(target, str(tmp_path / "ddp.pth"), strict=True)
    assert torch.equal(target.head.weight, source.head.weight)


def test_revise_keys_are_applied_in_turn(tmp_path):
    source = randomized(Net())
    state = {f"model.encoder.{k}": v for k, v in source.state_dict().items()}
    save_checkpoint(state, tmp_path / "raw.pth")  # a bare state dict, no 'state_dict' key
    target = Net()
    load_checkpoint(
        target,
        str(tmp_path / "raw.pth"),
        strict=True,
        revise_keys=[(r"^model\.", ""), (r"^encoder\.", "")],
    )
    assert torch.equal(target.backbone[0].weight, source.backbone[0].weight)


def test_no_revise_keys_loads_a_plain_dict_as_it_is(tmp_path):
    source = randomized(Net())
    save_checkpoint({"state_dict": dict(source.state_dict())}, tmp_path / "plain.pth")
    target = Net()
    load_checkpoint(target, str(tmp_path / "plain.pth"), strict=True, revise_keys=[])
    assert torch.equal(target.head.weight, source.head.weight)


def test_load_checkpoint_with_prefix_selects_a_submodule(tmp_path):
    source = randomized(Net())
    save_checkpoint({"state_dict": source.state_dict()}, tmp_path / "m.pth")
    backbone = _load_checkpoint_with_prefix("backbone", str(tmp_path / "m.pth"))
    assert sorted(backbone) == sorted(source.backbone.state_dict())
    with pytest.raises(
        ValueError, match=r"'neck' is not in the pretrained model .*'backbone', 'head'"
    ) as info:
        _load_checkpoint_with_prefix("neck.", str(tmp_path / "m.pth"))
    assert isinstance(info.value, AssertionError)  # what MMEngine raises there


class Wrapper(nn.Module):
    """A downstream project's own model wrapper: the model under ``.module``."""

    def __init__(self, module: nn.Module) -> None:
        super().__init__()
        self.module = module


@pytest.fixture
def registered_wrapper():
    from treadle.runner.registry import MODEL_WRAPPERS

    MODEL_WRAPPERS.register_module(module=Wrapper)
    yield Wrapper
    MODEL_WRAPPERS._module_dict.pop("Wrapper")


def test_a_registered_wrapper_is_seen_through(registered_wrapper):
    source = randomized(Net())
    wrapped = registered_wrapper(registered_wrapper(Net()))  # wrappers of wrappers too
    assert list(get_state_dict(wrapped)) == list(source.state_dict())
    load_state_dict(wrapped, source.state_dict(), strict=True)
    assert torch.equal(wrapped.module.module.head.weight, source.head.weight)


def test_an_unregistered_module_attribute_is_not_unwrapped():
    plain = Wrapper(Net())  # not registered: .module is an ordinary child
    assert next(iter(get_state_dict(plain))) == "module.backbone.0.weight"


def test_a_tta_model_loads_into_its_module():
    from treadle.runner.model import BaseTTAModel

    class TTA(BaseTTAModel):
        def merge_preds(self, data_samples_list):
            return data_samples_list

    class Predictor(Net):
        def test_step(self, data):
            return data

    source = randomized(Net())
    tta = TTA(module=Predictor())
    load_state_dict(tta, source.state_dict(), strict=True)
    assert torch.equal(tta.module.head.weight, source.head.weight)


def test_tensors_to_cpu_keeps_types_and_copies_when_asked():
    from collections import Counter

    from treadle.runner.checkpoint import tensors_to_cpu

    weight = torch.ones(2, requires_grad=True)
    state = OrderedDict(w=weight, seen=Counter(a=1), rows=[torch.zeros(1)], pair=(1, "x"))
    moved = tensors_to_cpu(state)
    assert type(moved) is OrderedDict and type(moved["seen"]) is Counter
    assert moved["pair"] == (1, "x") and not moved["w"].requires_grad
    assert moved["w"].data_ptr() == weight.data_ptr()  # already on the CPU: no copy
    snapshot = tensors_to_cpu(state, copy=True)
    with torch.no_grad():
        weight.add_(1)
    assert torch.equal(snapshot["w"], torch.ones(2))  # a snapshot training does not change
