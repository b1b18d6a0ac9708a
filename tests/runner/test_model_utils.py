"""stack_batch, merge_dict, detect_anomalous_params and the SyncBatchNorm conversions."""

from __future__ import annotations

import logging

import pytest
import torch
import torch.fx
import torch.nn as nn
from runner_toys import captured_log

from treadle.runner.model import (
    convert_sync_batchnorm,
    detect_anomalous_params,
    merge_dict,
    revert_sync_batchnorm,
    stack_batch,
)


@pytest.fixture
def logged():
    """The (level, message) pairs logged so far: ``logged()``."""
    with captured_log() as log:
        yield lambda: [(record.levelno, record.getMessage()) for record in log.records]


# --- stack_batch ---


def test_stack_batch_pads_all_but_the_first_dimension_at_the_end():
    first, second = torch.ones(2, 3, 5), torch.full((2, 4, 2), 2.0)
    batch = stack_batch([first, second], pad_size_divisor=4, pad_value=-1)
    assert batch.shape == (2, 2, 4, 8)
    assert torch.equal(batch[0, :, :3, :5], first) and torch.all(batch[0, :, 3:] == -1)
    assert torch.equal(batch[1, :, :, :2], second) and torch.all(batch[1, :, :, 2:] == -1)


def test_stack_batch_without_padding_is_torch_stack():
    tensors = [torch.randn(3, 4, 4) for _ in range(3)]
    assert torch.equal(stack_batch(tensors), torch.stack(tensors))
    assert stack_batch(tensors, pad_size_divisor=4).shape == (3, 3, 4, 4)


def test_stack_batch_works_for_other_ranks_and_promotes_dtypes():
    batch = stack_batch([torch.ones(2, 3, dtype=torch.uint8), torch.ones(2, 1)], 2)
    assert batch.shape == (2, 2, 4) and batch.dtype == torch.float32


@pytest.mark.parametrize(
    ("args", "error", "message"),
    [
        ((torch.ones(1, 2, 2),), TypeError, "takes a list of tensors, got Tensor"),
        (([],), ValueError, "empty list"),
        (([torch.ones(1, 2), torch.ones(1, 2, 2)],), ValueError, r"\[\(1, 2\), \(1, 2, 2\)\]"),
        (([torch.ones(1, 2), torch.ones(2, 2)],), ValueError, "first .channels., which must be"),
        (([torch.ones(1, 2), [1, 2]],), TypeError, "item 1 is a list"),
        (([torch.ones(1, 2)], 0), ValueError, "pad_size_divisor must be >= 1, got 0"),
        (([torch.ones(1, 2)], 1.5), TypeError, "pad_size_divisor must be an int >= 1, got float"),
    ],
)
def test_stack_batch_errors(args, error, message):
    with pytest.raises(error, match=message):
        stack_batch(*args)


# --- merge_dict ---


def test_merge_dict_merges_in_order_later_wins():
    assert merge_dict({"a": 1, "b": 1}, {"b": 2}, {"c": 3}) == {"a": 1, "b": 2, "c": 3}
    assert merge_dict() == {}


def test_merge_dict_refuses_non_dicts_by_position():
    with pytest.raises(TypeError, match=r"argument 1 is a list: \[\('a', 1\)\]"):
        merge_dict({}, [("a", 1)])


def test_merge_dict_is_a_leaf_for_fx():
    # fx.wrap patches the name in the module that defines merge_dict: calls through it
    # become one call_function node.
    from treadle.runner.model import utils as model_utils

    class TwoHeads(nn.Module):
        def forward(self, x):
            return model_utils.merge_dict({"loss_a": x.sum()}, {"loss_b": x.mean()})

    traced = torch.fx.symbolic_trace(TwoHeads())
    targets = [node.target for node in traced.graph.nodes if node.op == "call_function"]
    assert [getattr(target, "__name__", "") for target in targets] == ["merge_dict"]
    assert traced(torch.ones(2)) == {"loss_a": torch.tensor(2.0), "loss_b": torch.tensor(1.0)}


# --- detect_anomalous_params ---


def test_detect_anomalous_params_names_and_logs_unused(logged):
    model = nn.ModuleDict({"used": nn.Linear(2, 1), "unused": nn.Linear(2, 1)})
    model["used"].bias.requires_grad_(False)
    loss = model["used"](torch.ones(1, 2)).sum()
    assert detect_anomalous_params(loss, model) == ["unused.weight", "unused.bias"]
    messages = logged()
    assert len(messages) == 2 and all(level == logging.ERROR for level, _ in messages)
    assert "unused.weight with shape (1, 2) is not in the computational graph" in messages[0][1]


def test_detect_anomalous_params_finds_nothing_when_all_are_used(logged):
    model = nn.Linear(2, 2)
    assert detect_anomalous_params(model(torch.ones(1, 2)).sum(), model) == []
    assert logged() == []


def test_detect_anomalous_params_walks_deep_graphs_without_recursion():
    layer = nn.Linear(1, 1)
    out = torch.ones(1, 1)
    for _ in range(3000):
        out = layer(out) * 0.5
    assert detect_anomalous_params(out.sum(), layer) == []


# --- SyncBatchNorm ---


def bn_model():
    return nn.Sequential(
        nn.Conv2d(3, 4, 1), nn.BatchNorm2d(4), nn.Sequential(nn.BatchNorm1d(4)), nn.ReLU()
    )


def test_convert_sync_batchnorm_replaces_nested_layers_keeping_their_state():
    model = bn_model()
    model[1].running_mean.fill_(3.0)
    model[1].eval()
    weight = model[1].weight
    converted = convert_sync_batchnorm(model)
    assert type(converted[1]) is nn.SyncBatchNorm
    assert type(converted[2][0]) is nn.SyncBatchNorm
    assert converted[1].weight is weight
    assert torch.all(converted[1].running_mean == 3.0)
    assert converted[1].training is False
    assert type(converted[0]) is nn.Conv2d


def test_convert_sync_batchnorm_of_a_batchnorm_itself():
    assert type(convert_sync_batchnorm(nn.BatchNorm2d(3))) is nn.SyncBatchNorm


def test_convert_sync_batchnorm_unknown_implementation():
    with pytest.raises(ValueError, match="must be 'torch' or 'mmcv', got 'apex'"):
        convert_sync_batchnorm(bn_model(), implementation="apex")


def test_convert_sync_batchnorm_mmcv_needs_mmcv():
    try:
        import mmcv.ops  # noqa: F401

        pytest.skip("mmcv with ops is installed")
    except ImportError:
        pass
    with pytest.raises(ImportError, match="needs mmcv with its compiled ops"):
        convert_sync_batchnorm(bn_model(), implementation="mmcv")


def test_revert_sync_batchnorm_gives_dimension_free_batchnorm_with_same_state():
    synced = convert_sync_batchnorm(bn_model())
    synced[1].running_var.fill_(4.0)
    reverted = revert_sync_batchnorm(synced)
    assert not any(isinstance(m, nn.SyncBatchNorm) for m in reverted.modules())
    assert torch.all(reverted[1].running_var == 4.0)
    # Runs in one process; 2D input to what was a BatchNorm2d passes the dimension check.
    reverted.eval()
    assert reverted[1](torch.ones(2, 4)).shape == (2, 4)
    assert reverted(torch.ones(1, 3, 2, 2)).shape == (1, 4, 2, 2)


def test_revert_keeps_a_child_that_refuses_replacement_and_warns(logged):
    class Stubborn(nn.Module):
        def __init__(self):
            super().__init__()
            self.norm = nn.SyncBatchNorm(2)

        def add_module(self, name, module):
            raise RuntimeError("frozen container")

    model = nn.Sequential(Stubborn())
    reverted = revert_sync_batchnorm(model)
    assert isinstance(reverted[0], Stubborn)
    assert any(
        level == logging.WARNING
        and "could not replace '0.norm'" in message
        and "frozen container" in message
        for level, message in logged()
    )
