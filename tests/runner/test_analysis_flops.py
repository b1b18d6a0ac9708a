"""FlopAnalyzer, ActivationAnalyzer and their settings: counts checked against hand-computed
numbers (one multiply-add is one flop), module attribution, handles, and every error a user
can trigger."""

from __future__ import annotations

import logging
from collections import Counter

import pytest
import torch
import torch.nn.functional as F
from analysis_toys import AttentionNet, ConvNet, LinearNet, NormNet, SdpaNet, TinyResNet
from torch import nn

from treadle.logging import MMLogger
from treadle.runner.analysis import ActivationAnalyzer, FlopAnalyzer
from treadle.runner.analysis.handles import get_shape
from treadle.runner.analysis.model_analysis import JitModelAnalysis, ModelAnalysis


@pytest.fixture
def warnings_log(caplog):
    # The analysis warns through the current treadle logger; let caplog see its records.
    logger = MMLogger.get_current_instance()
    logger.addHandler(caplog.handler)
    caplog.set_level(logging.WARNING)
    yield caplog
    logger.removeHandler(caplog.handler)


def test_conv_linear_and_by_module():
    model, x = ConvNet(), torch.randn(2, 3, 8, 8)
    flops = FlopAnalyzer(model, (x,))
    conv = 2 * (8 * 3 * 3 * 3) * 8 * 8  # batch x weight elements x output positions
    grouped = 2 * (8 * 2 * 3 * 3) * 3 * 3
    up = 2 * (8 * 4 * 2 * 2) * 3 * 3  # transposed: the input's positions
    assert flops.by_module() == Counter(
        {"": conv + grouped + up, "conv": conv, "grouped": grouped, "up": up}
    )
    assert flops.by_operator() == Counter({"conv": conv + grouped + up})
    assert flops.total("grouped") == grouped
    acts = ActivationAnalyzer(model, (x,))
    assert acts.by_module()["conv"] == 2 * 8 * 8 * 8
    assert acts.total() == 2 * 8 * 8 * 8 + 2 * 8 * 3 * 3 + 2 * 4 * 6 * 6


def test_linear_on_3d_inputs_counts_every_position():
    flops = FlopAnalyzer(LinearNet(), (torch.randn(2, 5, 16),))
    assert flops.by_operator() == Counter({"linear": 2 * 5 * (16 * 32 + 32 * 4)})
    assert flops.unsupported_ops() == Counter()  # relu costs nothing


def test_norm_layers_in_training_and_inference():
    x = torch.randn(2, 3, 8, 8)
    n = x.numel()
    train = FlopAnalyzer(NormNet().train(), (x,)).by_module()
    assert (train["bn"], train["bn_plain"], train["ln"], train["gn"], train["inorm"]) == (
        5 * n, 4 * n, 5 * n, 5 * n, 4 * n,
    )  # fmt: skip
    infer = FlopAnalyzer(NormNet().eval(), (x,)).by_module()
    assert (infer["bn"], infer["bn_plain"]) == (2 * n, n)


def test_matmul_broadcasts_its_batch_and_bmm_einsum_agree():
    class Products(nn.Module):
        def forward(self, a, b, m):
            return torch.matmul(m, b), torch.bmm(a, b), torch.einsum("bij,bjk->bik", a, b), a @ b

    a, b, m = torch.randn(2, 3, 4), torch.randn(2, 4, 5), torch.randn(3, 4)
    ops = FlopAnalyzer(Products(), (a, b, m)).by_operator()
    # (3, 4) @ (2, 4, 5) is two products of 3x4 by 4x5 (MMEngine counts one of them).
    assert ops == Counter({"matmul": 2 * 60 + 2 * 60, "bmm": 120, "einsum": 120})


def test_einsum_with_three_operands_and_implicit_output():
    class Chain(nn.Module):
        def forward(self, a, b, c):
            return torch.einsum("ij,jk,kl->il", a, b, c), torch.einsum("ij,jk", a, b)

    a, b, c = torch.randn(2, 30), torch.randn(30, 40), torch.randn(40, 5)
    ops = FlopAnalyzer(Chain(), (a, b, c)).by_operator()
    # The cheapest order: (a·b) costs 2*30*40, then (ab)·c 2*40*5; plus a·b once more.
    assert ops["einsum"] == (2 * 30 * 40 + 2 * 40 * 5) + 2 * 30 * 40


def test_attention_through_multihead_attention_and_sdpa():
    flops = FlopAnalyzer(AttentionNet(), (torch.randn(6, 2, 16),))
    tokens = 6 * 2
    assert flops.by_operator() == Counter(
        {
            "linear": tokens * 16 * 48 + tokens * 16 * 16 + tokens * 16 * 16,
            "bmm": 2 * 2 * 6 * 6 * 16,
        }
    )
    assert flops.uncalled_modules() == {"attn.out_proj"}  # used by its weight, not called
    sdpa = FlopAnalyzer(SdpaNet(), (torch.randn(2, 6, 16),)).by_operator()
    assert sdpa["scaled_dot_product_attention"] == 2 * 2 * 4 * 6 * 6 * 4


def test_attention_with_a_mask_and_cross_attention():
    mha = nn.MultiheadAttention(8, 2, kdim=4, vdim=6)
    q, k, v = torch.randn(3, 1, 8), torch.randn(5, 1, 4), torch.randn(5, 1, 6)
    mask = torch.zeros(3, 5, dtype=torch.bool)
    ops = FlopAnalyzer(mha, (q, k, v, None, True, mask)).by_operator()
    in_proj = 3 * 8 * 8 + 5 * 4 * 8 + 5 * 6 * 8
    assert ops == Counter({"linear": in_proj + 3 * 8 * 8, "baddbmm": 3 * 5 * 8, "bmm": 3 * 5 * 8})
    no_weights = FlopAnalyzer(mha, (q, k, v, None, False)).by_operator()
    assert no_weights["scaled_dot_product_attention"] == 2 * 3 * 5 * 8


def test_the_fused_fast_path_of_attention_is_counted_too():
    layer = nn.TransformerEncoderLayer(16, 4, dim_feedforward=32).eval()
    with torch.no_grad():
        ops = FlopAnalyzer(layer, (torch.randn(6, 2, 16),)).by_operator()
    # The layer asks for no attention weights: scaled_dot_product_attention runs.
    assert ops["scaled_dot_product_attention"] == 2 * 2 * 6 * 6 * 16
    assert ops["linear"] == 12 * 16 * (48 + 16 + 32) + 12 * 32 * 16


def test_a_resnet_counts_each_block_under_its_name():
    flops = FlopAnalyzer(TinyResNet().eval(), (torch.randn(1, 3, 16, 16),))
    by_module = flops.by_module()
    assert by_module["layer1"] == by_module["layer1.0"] + by_module["layer1.1"]
    assert by_module["layer2.0.downsample"] == 16 * 8 * 8 * 8 + 2 * 16 * 8 * 8
    assert by_module["pool"] == 16 * 8 * 8  # adaptive average pooling reads each input once
    assert flops.total() == sum(by_module[n] for n in ("stem", "layer1", "layer2", "pool", "fc"))


def test_upsampling_and_grid_sampling():
    class Up(nn.Module):
        def forward(self, x):
            grid = torch.zeros(1, 3, 3, 2)
            return (
                F.interpolate(x, scale_factor=2),
                F.interpolate(x, scale_factor=2, mode="bilinear"),
                F.grid_sample(x, grid, align_corners=False),
                F.interpolate(x, scale_factor=2, mode="bicubic"),
            )

    flops = FlopAnalyzer(Up(), (torch.randn(1, 2, 4, 4),))
    assert flops.by_operator() == Counter(
        {"upsample_nearest2d": 128, "upsample_bilinear2d": 4 * 128, "grid_sampler": 4 * 18}
    )
    assert flops.unsupported_ops() == Counter({"aten::upsample_bicubic2d": 1})


def test_inputs_need_not_be_tensors_and_the_forward_may_branch():
    class Dicts(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 4)

        def forward(self, batch):
            x = batch["x"]
            return self.fc(x) if x.sum() > 0 else self.fc(self.fc(x))

    assert FlopAnalyzer(Dicts(), {"x": torch.ones(1, 4)}).total() == 16
    assert FlopAnalyzer(Dicts(), ({"x": -torch.ones(1, 4)},)).total() == 32


def test_the_model_is_left_as_it_was():
    model = TinyResNet().train()
    before = {k: v.clone() for k, v in model.state_dict().items()}
    FlopAnalyzer(model, (torch.randn(2, 3, 16, 16),)).total()
    after = model.state_dict()
    assert all(torch.equal(before[k], after[k]) for k in before)
    assert not model._forward_hooks and not model.fc._forward_pre_hooks


def test_shared_modules_and_ancestor_modes():
    class Shared(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 4)
            self.inner = nn.Sequential(self.fc)

        def forward(self, x):
            return self.inner(self.fc(x))

    owner = FlopAnalyzer(Shared(), (torch.randn(1, 4),))
    assert owner.canonical_module_name("inner.0") == "fc"
    assert owner.by_module() == Counter({"": 32, "fc": 32, "inner": 0})
    caller = owner.copy().ancestor_mode("caller")
    assert caller.by_module() == Counter({"": 32, "fc": 32, "inner": 16})


def test_data_parallel_is_analysed_as_the_model_it_wraps():
    model = LinearNet()
    wrapped = nn.DataParallel(model)
    assert FlopAnalyzer(wrapped, (torch.randn(2, 16),)).by_module()["module.fc1"] == 2 * 16 * 32


def test_set_op_handle_replaces_ignores_and_clears():
    model, inputs = LinearNet(), (torch.randn(2, 16),)
    flops = FlopAnalyzer(model, inputs)
    assert flops.total() == 2 * (16 * 32 + 32 * 4)
    flops.set_op_handle("aten::linear", None)
    assert flops.total() == 0 and flops.unsupported_ops() == Counter()

    seen = []

    def shapes_handle(inputs, outputs):
        # written as for MMEngine: it reads torch._C.Value-style arguments
        seen.append((inputs[0].type().sizes(), inputs[2].isCompleteTensor()))
        return Counter({"fc": get_shape(outputs[0])[-1]})

    flops.set_op_handle("aten::linear", shapes_handle, "aten::relu", lambda i, o: 1)
    assert flops.by_operator() == Counter({"fc": 36, "relu": 1})
    assert seen == [([2, 16], True), ([2, 32], False)]
    flops.clear_op_handles()
    assert flops.total() == 0
    assert flops.unsupported_ops() == Counter({"aten::linear": 2})


def test_copy_keeps_the_settings_on_new_inputs():
    flops = FlopAnalyzer(LinearNet(), (torch.randn(1, 16),)).set_op_handle(
        "aten::linear", lambda i, o: 5
    )
    other = flops.copy(new_inputs=(torch.randn(3, 16),))
    assert isinstance(other, FlopAnalyzer) and other.total() == 10
    assert JitModelAnalysis is ModelAnalysis


def test_warnings_for_unsupported_ops_and_uncalled_modules(warnings_log):
    class Odd(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(2, 2)
            self.unused = nn.Linear(2, 2)

        def forward(self, x):
            return torch.softmax(self.fc.forward(x), -1)

    flops = FlopAnalyzer(Odd(), (torch.randn(1, 2),))
    assert flops.total() == 4
    assert flops.uncalled_modules() == {"fc", "unused"}
    text = warnings_log.text
    assert "Unsupported operator aten::softmax encountered 1 time(s)" in text
    assert "never called" in text and "fc, unused" in text
    warnings_log.clear()
    quiet = FlopAnalyzer(Odd(), (torch.randn(1, 2),))
    quiet.unsupported_ops_warnings(False).uncalled_modules_warnings(False).total()
    assert warnings_log.text == ""


def test_errors_name_what_was_given():
    flops = FlopAnalyzer(LinearNet(), (torch.randn(1, 16),))
    with pytest.raises(
        KeyError, match=r"'fc3' is not a submodule of the analysed LinearNet; closest: 'fc2', 'fc1'"
    ):
        flops.total("fc3")
    with pytest.raises(TypeError, match="module names are str, got Linear"):
        flops.canonical_module_name(nn.Linear(1, 1))
    with pytest.raises(TypeError, match="pairs, got an odd number"):
        flops.set_op_handle("aten::linear")
    with pytest.raises(TypeError, match="the handle of 'aten::mm' must be callable"):
        flops.set_op_handle("aten::mm", 3)
    with pytest.raises(ValueError, match="tracer_warnings: mode 'some'"):
        flops.tracer_warnings("some")
    with pytest.raises(ValueError, match="ancestor_mode: mode 'parent'"):
        flops.ancestor_mode("parent")
    flops.set_op_handle("aten::linear", lambda i, o: torch.tensor(3))
    with pytest.raises(ValueError, match="the handle of aten::linear returned Tensor"):
        flops.total()
    flops.set_op_handle("aten::linear", lambda i, o: Counter({"x": torch.tensor(3)}))
    with pytest.raises(ValueError, match="the handle of aten::linear counted a Tensor"):
        flops.total()


def test_a_call_the_argument_reader_does_not_understand_does_not_fail_the_forward(monkeypatch):
    from treadle.runner.analysis import op_table

    def broken(args, kwargs, result):
        raise TypeError("an argument from a newer torch")

    monkeypatch.setitem(op_table.READERS, torch.bmm, broken)

    class Bmm(nn.Module):
        def forward(self, a, b):
            return torch.bmm(a, b)

    # It is recorded under its own name with its arguments as given: bmm's handle reads them.
    flops = FlopAnalyzer(Bmm(), (torch.randn(1, 2, 3), torch.randn(1, 3, 4)))
    assert flops.total() == 24
    flops.set_op_handle("aten::bmm", None)
    assert flops.total() == 0
