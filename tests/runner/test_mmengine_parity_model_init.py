"""treadle.runner.model's weight init, BaseModule and averaged models against MMEngine 0.10's
mmengine.model: the same calls through both with the same seeds give the same tensors, the
same per-parameter init record and the same errors.

Runs only where mmengine is installed: ``hatch run mmengine:pytest ...``.
"""

from __future__ import annotations

import copy
import pickle
import re

import pytest

pytest.importorskip("mmengine")

import mmengine.logging as mm_logging
import mmengine.model as mm
import mmengine.model.weight_init as mm_weight_init
import torch
from runner_toys import LogCapture
from torch import nn

import treadle.logging as tr_logging
import treadle.runner.model as tr

SIDES = {"mmengine": (mm, mm_logging.MMLogger), "treadle": (tr, tr_logging.MMLogger)}


def toy():
    torch.manual_seed(0)
    return nn.Sequential(
        nn.Conv2d(3, 4, 3),
        nn.BatchNorm2d(4),
        nn.Linear(4, 5),
        nn.Sequential(nn.Conv1d(2, 2, 1), nn.Linear(5, 5, bias=False)),
    )


def assert_same_state(a: nn.Module, b: nn.Module, skip: tuple[str, ...] = ()):
    sa, sb = a.state_dict(), b.state_dict()
    assert sa.keys() == sb.keys()
    for key in sa:
        if not key.endswith(skip):
            assert torch.equal(sa[key], sb[key]), key


CFGS = [
    dict(type="Constant", val=2, bias=1, layer=["Conv2d", "Linear"]),
    dict(type="Xavier", layer="Conv2d", distribution="uniform", gain=2),
    dict(type="Xavier", layer=["Linear", "Conv1d"]),
    dict(type="Normal", layer="Linear", std=0.3, bias_prob=0.01),
    dict(type="TruncNormal", layer=["Linear", "Conv1d"], std=0.3, a=-0.2, b=0.2),
    dict(type="Uniform", layer=["Linear", "Conv1d"], a=-0.2, b=0.2),
    dict(type="Kaiming", layer=["Linear", "Conv2d"]),
    dict(type="Kaiming", layer="Conv1d", mode="fan_in", distribution="uniform", a=0.1),
    dict(type="Caffe2Xavier", layer=["Linear", "Conv2d"]),
    dict(type="Normal", layer="Conv2d", override=dict(name="2", type="Kaiming")),
    dict(type="Uniform", layer="Conv2d", override=[dict(name="3"), dict(name="1")]),
    [dict(type="Normal", layer="Linear"), dict(type="Constant", val=3, layer="BatchNorm2d")],
]


@pytest.mark.parametrize("cfg", CFGS, ids=lambda c: str(c)[:60])
def test_initialize_gives_identical_tensors(cfg):
    ours, theirs = toy(), toy()
    torch.manual_seed(1)
    mm.initialize(theirs, copy.deepcopy(cfg))
    torch.manual_seed(1)
    tr.initialize(ours, copy.deepcopy(cfg))
    assert_same_state(ours, theirs)


@pytest.mark.parametrize(
    "name,args",
    [
        ("constant_init", (0.5, 0.1)),
        ("xavier_init", (2, 0.1, "uniform")),
        ("normal_init", (1, 0.5, 0.2)),
        ("trunc_normal_init", (0, 1, -0.5, 0.5, 0.3)),
        ("uniform_init", (-1, 1, 0.4)),
        ("kaiming_init", (0.2, "fan_in", "leaky_relu", 0.1, "uniform")),
        ("caffe2_xavier_init", (0.5,)),
    ],
)
def test_init_functions(name, args):
    ours, theirs = nn.Conv2d(3, 8, 3), nn.Conv2d(3, 8, 3)
    torch.manual_seed(2)
    getattr(mm, name)(theirs, *args)
    torch.manual_seed(2)
    getattr(tr, name)(ours, *args)
    assert_same_state(ours, theirs)


def test_bias_init_with_prob_and_trunc_normal_():
    for prob in (1e-5, 0.01, 0.1, 0.3, 0.5, 0.77, 0.999):
        assert tr.bias_init_with_prob(prob) == mm.bias_init_with_prob(prob)
    theirs, ours = torch.empty(100), torch.empty(100)
    torch.manual_seed(3)
    mm_weight_init.trunc_normal_(theirs, 0.1, 0.5, -0.3, 0.4)
    torch.manual_seed(3)
    tr.trunc_normal_(ours, 0.1, 0.5, -0.3, 0.4)
    assert torch.equal(ours, theirs)


def network(side: str, checkpoint: str):
    """One model written against each side's BaseModule: nested init_cfgs, containers, an
    override, a user-defined init_weights and a Pretrained part."""
    lib = SIDES[side][0]

    class Custom(lib.BaseModule):
        def __init__(self):
            super().__init__()
            self.proj = nn.Linear(4, 4)

        def init_weights(self):
            super().init_weights()
            nn.init.normal_(self.proj.weight, std=5)

    class Backbone(lib.BaseModule):
        def __init__(self):
            super().__init__(init_cfg=dict(type="Pretrained", checkpoint=checkpoint))
            self.stem = nn.Conv2d(3, 4, 3)

    class Net(lib.BaseModule):
        def __init__(self):
            super().__init__(
                init_cfg=[
                    dict(type="Kaiming", layer="Conv2d"),
                    dict(
                        type="Normal",
                        std=0.01,
                        layer="Linear",
                        override=dict(type="Constant", name="cls", val=0, bias_prob=0.01),
                    ),
                ]
            )
            self.backbone = Backbone()
            self.neck = lib.Sequential(
                nn.Conv2d(4, 4, 1), nn.ReLU(), init_cfg=dict(type="Xavier", layer="Conv2d")
            )
            self.blocks = lib.ModuleList(
                [nn.Linear(4, 4), nn.Linear(4, 4)],
                init_cfg=dict(type="TruncNormal", std=0.02, layer="Linear"),
            )
            self.heads = lib.ModuleDict(
                dict(a=nn.Linear(4, 2)), init_cfg=dict(type="Uniform", layer="Linear")
            )
            self.custom = Custom()
            self.cls = nn.Linear(4, 3)
            self.norm = nn.BatchNorm2d(4)

    return Net()


def init_record(side: str, checkpoint: str) -> tuple[nn.Module, dict[str, tuple[str, str]]]:
    """Build and init the network on one side; return it with {name: (shape, init info)}
    parsed from what the side logged."""
    logger = SIDES[side][1].get_current_instance()
    handler = LogCapture()
    logger.addHandler(handler)
    try:
        torch.manual_seed(4)
        model = network(side, checkpoint)
        torch.manual_seed(5)
        model.init_weights()
    finally:
        logger.removeHandler(handler)
    text = "\n".join(handler.messages)
    found = re.findall(r"\n(\S+) - (torch\.Size\(\[[\d, ]*\]\)): ?\n(.*?) ?\n", text + "\n")
    # MMEngine writes "distribution =" in Kaiming's description; treadle fixes the typo.
    return model, {
        name: (shape, info.strip().replace("distribution =", "distribution="))
        for name, shape, info in found
    }


def test_base_module_init_weights_and_record(tmp_path):
    torch.manual_seed(6)
    path = tmp_path / "backbone.pth"
    torch.save({"state_dict": {"stem.weight": torch.randn(4, 3, 3, 3)}}, path)
    theirs, their_record = init_record("mmengine", str(path))
    ours, our_record = init_record("treadle", str(path))
    assert_same_state(ours, theirs)
    assert len(our_record) == len(list(ours.parameters())) == 16
    assert our_record == their_record
    assert our_record["backbone.stem.weight"][1] == f"PretrainedInit: load from {path}"
    assert our_record["custom.proj.weight"][1] == (
        "Initialized by user-defined `init_weights` in Custom"
    )
    assert repr(ours).splitlines()[-1] == repr(theirs).splitlines()[-1]


def test_pretrained_with_prefix(tmp_path):
    torch.manual_seed(7)
    source = nn.Sequential(nn.Linear(3, 3), nn.BatchNorm1d(3))
    path = tmp_path / "whole.pth"
    torch.save({"state_dict": {f"backbone.{k}": v for k, v in source.state_dict().items()}}, path)
    ours, theirs = nn.Sequential(nn.Linear(3, 3), nn.BatchNorm1d(3)), copy.deepcopy(source)
    nn.init.zeros_(theirs[0].weight)
    cfg = dict(type="Pretrained", checkpoint=str(path), prefix="backbone")
    mm.initialize(theirs, cfg)
    tr.initialize(ours, cfg)
    assert_same_state(ours, theirs)
    assert_same_state(ours, source)


def test_pretrained_strips_module_and_skips_mismatches(tmp_path):
    torch.manual_seed(9)
    source = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4)).state_dict()
    source["0.weight"] = torch.randn(5, 3)  # another shape: left as it is
    source["extra.weight"] = torch.ones(1)
    del source["1.bias"]
    path = tmp_path / "ddp.pth"
    torch.save({"state_dict": {f"module.{k}": v for k, v in source.items()}}, path)
    torch.manual_seed(10)
    ours = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4))
    theirs = copy.deepcopy(ours)
    cfg = dict(type="Pretrained", checkpoint=str(path))
    mm.initialize(theirs, cfg)
    tr.initialize(ours, cfg)
    assert_same_state(ours, theirs)
    assert torch.equal(ours[0].bias, source["0.bias"])


class Legacy:
    pass


@pytest.mark.parametrize(
    "name,error",
    [("missing.pth", FileNotFoundError), ("legacy.pth", pickle.UnpicklingError)],
)
def test_pretrained_same_error_types(tmp_path, name, error):
    torch.save({"state_dict": {}, "meta": Legacy()}, tmp_path / "legacy.pth")
    for lib in (mm, tr):
        with pytest.raises(error):
            lib.initialize(
                nn.Linear(2, 2), dict(type="Pretrained", checkpoint=str(tmp_path / name))
            )


@pytest.mark.parametrize(
    "cfg,error",
    [
        (dict(type="Constnt", val=1), KeyError),
        (dict(type="Constant", val=1, layer=3), TypeError),
        (dict(type="Constant", val=1, bias="x"), TypeError),
        (dict(type="Constant", val=1, override=dict(type="Constant", val=2)), ValueError),
        (dict(type="Constant", val=1, override=dict(name="missing")), RuntimeError),
        ("Constant", TypeError),
    ],
)
def test_same_error_types(cfg, error):
    for lib in (mm, tr):
        with pytest.raises(error):
            lib.initialize(toy(), copy.deepcopy(cfg))


AVERAGERS = [
    ("ExponentialMovingAverage", dict(momentum=0.1)),
    ("ExponentialMovingAverage", dict(momentum=0.3, interval=3)),
    ("MomentumAnnealingEMA", dict(momentum=0.01, gamma=3, interval=2)),
    ("StochasticWeightAverage", dict()),
    ("StochasticWeightAverage", dict(interval=3)),
]


@pytest.mark.parametrize("update_buffers", [False, True])
@pytest.mark.parametrize("name,kwargs", AVERAGERS)
def test_averaged_models_step_by_step(name, kwargs, update_buffers):
    torch.manual_seed(8)
    model = nn.Sequential(nn.Linear(3, 3), nn.BatchNorm1d(3), nn.Linear(3, 1))
    theirs = getattr(mm, name)(model, update_buffers=update_buffers, **kwargs)
    ours = getattr(tr, name)(model, update_buffers=update_buffers, **kwargs)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    # MMEngine freezes integer buffers after the first update when averaging buffers; treadle
    # copies them from the model (a counter cannot be averaged).
    skip = ("num_batches_tracked",) if update_buffers else ()
    for _ in range(7):
        model(torch.randn(4, 3)).sum().backward()
        optimizer.step()
        optimizer.zero_grad()
        theirs.update_parameters(model)
        ours.update_parameters(model)
        assert_same_state(ours, theirs, skip)
    restored = getattr(tr, name)(model, update_buffers=update_buffers, **kwargs)
    restored.load_state_dict(theirs.state_dict())
    theirs.update_parameters(model)
    restored.update_parameters(model)
    assert_same_state(restored, theirs, skip)
