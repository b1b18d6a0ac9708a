"""treadle.runner.analysis against MMEngine 0.10's mmengine.analysis: the same model and inputs
through both give the same flops, activations and parameters, by operator and by module, and the
same tables and model printouts.

MMEngine counts what a jit trace records; treadle records the same operators while the model
runs. Deliberate differences (the README's "Differences from MMEngine") are the
``test_deliberate_*`` tests: attention through scaled_dot_product_attention, which MMEngine
leaves uncounted.

Runs only where mmengine is installed: ``hatch run mmengine:parity``.
"""

from __future__ import annotations

import pytest

mm = pytest.importorskip("mmengine.analysis")

import torch  # noqa: E402
from analysis_toys import (  # noqa: E402
    AttentionNet,
    ConvNet,
    LinearNet,
    MatmulNet,
    NormNet,
    SdpaNet,
    TinyResNet,
    UpsampleNet,
)
from mmengine.analysis import print_helper as mm_print  # noqa: E402

import treadle.runner.analysis as tr  # noqa: E402
from treadle.runner.analysis import print_helper as tr_print  # noqa: E402


def _case(name):
    torch.manual_seed(0)
    cases = {
        "conv": (ConvNet(), (torch.randn(2, 3, 8, 8),)),
        "linear_2d": (LinearNet(), (torch.randn(4, 16),)),
        "linear_3d": (LinearNet(), (torch.randn(2, 5, 16),)),
        "norm_train": (NormNet().train(), (torch.randn(2, 3, 8, 8),)),
        "norm_eval": (NormNet().eval(), (torch.randn(2, 3, 8, 8),)),
        "matmul": (MatmulNet(), (torch.randn(2, 3, 4), torch.randn(2, 4, 5))),
        "attention": (AttentionNet(), (torch.randn(6, 2, 16),)),
        "attention_eval": (AttentionNet().eval(), (torch.randn(6, 2, 16),)),
        "resnet": (TinyResNet(), (torch.randn(2, 3, 16, 16),)),
        "resnet_eval": (TinyResNet().eval(), (torch.randn(1, 3, 16, 16),)),
        "upsample": (UpsampleNet(), (torch.randn(1, 2, 4, 4),)),
    }
    return cases[name]


CASES = [
    "conv", "linear_2d", "linear_3d", "norm_train", "norm_eval", "matmul", "attention",
    "attention_eval", "resnet", "resnet_eval", "upsample",
]  # fmt: skip


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("analyzer", ["FlopAnalyzer", "ActivationAnalyzer"])
def test_counts_equal(case, analyzer):
    model, inputs = _case(case)
    ours = getattr(tr, analyzer)(model, inputs)
    theirs = getattr(mm, analyzer)(model, inputs)
    assert ours.total() == theirs.total()
    assert dict(ours.by_operator()) == dict(theirs.by_operator())
    assert dict(ours.by_module()) == dict(theirs.by_module())
    assert ours.uncalled_modules() == theirs.uncalled_modules()


@pytest.mark.parametrize("case", ["conv", "resnet", "attention"])
def test_flop_count_and_activation_count_equal(case):
    model, inputs = _case(case)
    for name in ("flop_count", "activation_count"):
        ours, _ = getattr(tr, name)(model, inputs)
        theirs, _ = getattr(mm, name)(model, inputs)
        assert dict(ours) == pytest.approx(dict(theirs))


@pytest.mark.parametrize("case", ["conv", "linear_3d", "resnet", "attention"])
def test_parameter_count_and_table_equal(case):
    model, _ = _case(case)
    assert dict(tr.parameter_count(model)) == dict(mm.parameter_count(model))
    for depth in (1, 3):
        assert tr.parameter_count_table(model, depth) == mm.parameter_count_table(model, depth)


@pytest.mark.parametrize(
    "case", ["conv", "linear_2d", "norm_eval", "resnet", "resnet_eval", "attention"]
)
def test_get_model_complexity_info_equal(case):
    model, inputs = _case(case)
    ours = tr.get_model_complexity_info(model, inputs=inputs)
    theirs = mm.get_model_complexity_info(model, inputs=inputs)
    assert ours == theirs


def test_get_model_complexity_info_from_input_shape_equal():
    model, _ = _case("resnet_eval")
    ours = tr.get_model_complexity_info(model, input_shape=(3, 16, 16), show_arch=False)
    theirs = mm.get_model_complexity_info(model, input_shape=(3, 16, 16), show_arch=False)
    assert ours == theirs

    class TwoInputs(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = torch.nn.Linear(4, 5)

        def forward(self, a, b):
            return self.fc(a) @ b

    two = TwoInputs()
    shapes = ((3, 4), (5, 2))
    ours = tr.get_model_complexity_info(two, input_shape=shapes)
    assert ours == mm.get_model_complexity_info(two, input_shape=shapes)


def test_deliberate_input_shape_for_a_model_without_parameters():
    # MMEngine takes the device from next(model.parameters()): a model without parameters
    # raises StopIteration. treadle builds the inputs on the CPU then.
    with pytest.raises(StopIteration):
        mm.get_model_complexity_info(MatmulNet(), input_shape=((3, 4), (4, 5)))
    info = tr.get_model_complexity_info(MatmulNet(), input_shape=((3, 4), (4, 5)))
    assert info["flops"] == 4 * 3 * 4 * 5 and info["params"] == 0


@pytest.mark.parametrize("depth", [1, 2, 4])
def test_stats_table_depth_and_shapes_equal(depth):
    model, inputs = _case("resnet")
    for shapes in (True, False):
        ours = tr_print.complexity_stats_table(tr.FlopAnalyzer(model, inputs), depth, None, shapes)
        theirs = mm_print.complexity_stats_table(
            mm.FlopAnalyzer(model, inputs), depth, None, shapes
        )
        assert ours == theirs


def test_set_op_handle_equal():
    model, inputs = _case("resnet_eval")
    ours = tr.FlopAnalyzer(model, inputs).set_op_handle("aten::linear", lambda i, o: 7)
    theirs = mm.FlopAnalyzer(model, inputs).set_op_handle("aten::linear", lambda i, o: 7)
    assert dict(ours.by_module()) == dict(theirs.by_module())


def test_deliberate_a_none_handle_ignores_the_operator():
    # MMEngine's FlopAnalyzer says set_op_handle("aten::batch_norm", None) leaves batch norm
    # out, but it keeps the default handle and goes on counting; treadle leaves it out.
    model, inputs = _case("resnet_eval")
    ours = tr.FlopAnalyzer(model, inputs).set_op_handle("aten::batch_norm", None)
    theirs = mm.FlopAnalyzer(model, inputs).set_op_handle("aten::batch_norm", None)
    assert "batch_norm" in theirs.by_operator()
    assert dict(ours.by_operator()) == {
        k: v for k, v in theirs.by_operator().items() if k != "batch_norm"
    }


def test_ancestor_mode_caller_equal_for_a_shared_module():
    class Shared(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = torch.nn.Linear(4, 4)
            self.inner = torch.nn.Sequential(self.fc)

        def forward(self, x):
            return self.inner(self.fc(x))

    model, inputs = Shared(), (torch.randn(2, 4),)
    for mode in ("owner", "caller"):
        ours = tr.FlopAnalyzer(model, inputs).ancestor_mode(mode)
        theirs = mm.FlopAnalyzer(model, inputs).ancestor_mode(mode)
        assert dict(ours.by_module()) == dict(theirs.by_module()), mode


def test_deliberate_scaled_dot_product_attention_is_counted():
    # MMEngine has no handle for aten::scaled_dot_product_attention: it reports it unsupported
    # and counts 0. treadle counts its two matrix products, as for nn.MultiheadAttention's bmm.
    model, inputs = SdpaNet(), (torch.randn(2, 6, 16),)
    theirs = mm.FlopAnalyzer(model, inputs)
    ours = tr.FlopAnalyzer(model, inputs)
    assert "scaled_dot_product_attention" not in theirs.by_operator()
    assert theirs.unsupported_ops()["aten::scaled_dot_product_attention"] == 1
    assert ours.by_operator()["linear"] == theirs.by_operator()["linear"]
    # q·kᵀ and weights·v: 2 batches x 4 heads x 6 queries x 6 keys x 4 dims, twice.
    assert ours.by_operator()["scaled_dot_product_attention"] == 2 * 2 * 4 * 6 * 6 * 4
    assert ours.unsupported_ops() == {}


def test_deliberate_mm_has_activations():
    # MMEngine counts aten::mm's flops but has no activation handle for it; treadle counts its
    # output like matmul's.
    class MM(torch.nn.Module):
        def forward(self, a, b):
            return torch.mm(a, b)

    inputs = (torch.randn(3, 4), torch.randn(4, 5))
    assert tr.FlopAnalyzer(MM(), inputs).total() == mm.FlopAnalyzer(MM(), inputs).total() == 60
    assert mm.ActivationAnalyzer(MM(), inputs).total() == 0
    assert tr.ActivationAnalyzer(MM(), inputs).total() == 15


def test_deliberate_matmul_counts_a_broadcast_batch():
    class Broadcast(torch.nn.Module):
        def forward(self, m, b):
            return torch.matmul(m, b)

    inputs = (torch.randn(3, 4), torch.randn(2, 4, 5))
    # Two products of (3, 4) by (4, 5); MMEngine takes the batch of the first operand only.
    assert mm.FlopAnalyzer(Broadcast(), inputs).total() == 60
    assert tr.FlopAnalyzer(Broadcast(), inputs).total() == 120


def test_deliberate_identity_is_called():
    class WithIdentity(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = torch.nn.Linear(4, 4)
            self.skip = torch.nn.Identity()

        def forward(self, x):
            return self.fc(x) + self.skip(x)

    model, inputs = WithIdentity(), (torch.randn(1, 4),)
    assert mm.FlopAnalyzer(model, inputs).uncalled_modules() == {"skip"}
    assert tr.FlopAnalyzer(model, inputs).uncalled_modules() == set()
    assert tr.FlopAnalyzer(model, inputs).by_module() == mm.FlopAnalyzer(model, inputs).by_module()


def test_deliberate_the_model_is_left_unchanged():
    model, inputs = _case("resnet")
    before = model.stem[1].running_mean.clone()
    tr.FlopAnalyzer(model, inputs).total()
    assert torch.equal(model.stem[1].running_mean, before)
    mm.FlopAnalyzer(model, inputs).total()
    assert not torch.equal(model.stem[1].running_mean, before)


def test_attention_in_eval_under_no_grad_equal():
    # nn.MultiheadAttention's fused fast path is not taken by either.
    model, inputs = _case("attention_eval")
    with torch.no_grad():
        ours = tr.FlopAnalyzer(model, inputs)
        theirs = mm.FlopAnalyzer(model, inputs)
        assert dict(ours.by_operator()) == dict(theirs.by_operator())


def test_deliberate_unsupported_ops_before_a_total():
    model, inputs = _case("matmul")
    with pytest.raises(RuntimeError):
        mm.FlopAnalyzer(model, inputs).unsupported_ops()
    assert tr.FlopAnalyzer(model, inputs).unsupported_ops() == {}
