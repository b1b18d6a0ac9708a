"""BaseModule and its containers: init_weights order, is_init, the per-parameter init record
and its log, user-defined init_weights, wrapped children, repr, and the errors."""

from __future__ import annotations

import pytest
import torch
from runner_toys import captured_log
from torch import nn

from treadle.logging import MMLogger
from treadle.registry import Registry
from treadle.runner.model import (
    BaseModule,
    ModuleDict,
    ModuleList,
    Sequential,
    update_init_info,
)
from treadle.runner.registry import MODEL_WRAPPERS


@pytest.fixture
def log():
    with captured_log() as capture:
        yield capture


def init_table(log) -> str:
    """The one table of initialization records in the log."""
    tables = [m for m in log.messages if m.startswith("Name of parameter")]
    assert len(tables) == 1, tables
    return tables[0]


class Head(BaseModule):
    def __init__(self, init_cfg=None):
        super().__init__(init_cfg)
        self.fc = nn.Linear(2, 2)


class CustomInit(BaseModule):
    """Defines its own init_weights, the way many models do."""

    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(2, 2)
        self.calls = 0

    def init_weights(self):
        super().init_weights()
        self.calls += 1
        nn.init.constant_(self.proj.weight, 7.0)


class Net(BaseModule):
    def __init__(self, init_cfg=None, head_cfg=None):
        super().__init__(init_cfg)
        self.conv = nn.Conv2d(3, 4, 1)
        self.bn = nn.BatchNorm2d(4)
        self.head = Head(head_cfg)
        self.custom = CustomInit()


def test_init_cfg_is_copied_and_shown_in_repr():
    cfg = dict(type="Constant", val=1, layer="Conv2d")
    net = Net(init_cfg=cfg)
    cfg["val"] = 2
    assert net.init_cfg == dict(type="Constant", val=1, layer="Conv2d")
    assert repr(net).endswith("\ninit_cfg={'type': 'Constant', 'val': 1, 'layer': 'Conv2d'}")
    assert "init_cfg" not in repr(Head())


def test_children_init_after_parent_and_win(log):
    net = Net(
        init_cfg=dict(type="Constant", val=1, layer=["Conv2d", "Linear"]),
        head_cfg=dict(type="Constant", val=3, layer="Linear"),
    )
    net.init_weights()
    assert torch.all(net.conv.weight == 1)
    assert torch.all(net.head.fc.weight == 3)  # the child's own init_cfg ran after the parent's
    assert torch.all(net.custom.proj.weight == 7)
    assert net.is_init and net.head.is_init and net.custom.is_init
    table = init_table(log)
    assert "conv.weight - torch.Size([4, 3, 1, 1]):\nConstantInit: val=1, bias=0" in table
    assert "head.fc.weight - torch.Size([2, 2]):\nConstantInit: val=3, bias=0" in table
    assert (
        "custom.proj.weight - torch.Size([2, 2]):\n"
        "Initialized by user-defined `init_weights` in CustomInit" in table
    )
    assert (
        "bn.weight - torch.Size([4]):\n"
        "The value is the same before and after calling `init_weights` of Net" in table
    )


def test_record_exists_only_during_init():
    net = Net()
    net.init_weights()
    assert not any(hasattr(m, "_params_init_info") for m in net.modules())


def test_second_call_warns_and_changes_nothing(log):
    net = Net(init_cfg=dict(type="Normal", layer="Conv2d"))
    net.init_weights()
    weight = net.conv.weight.clone()
    log.messages.clear()
    net.init_weights()
    assert torch.equal(net.conv.weight, weight)
    assert net.custom.calls == 1
    assert "init_weights of Net has been called more than once." in log.messages
    assert not any(m.startswith("Name of parameter") for m in log.messages)


def test_initialized_child_is_not_initialized_again():
    net = Net(head_cfg=dict(type="Constant", val=3, layer="Linear"))
    net.head.init_weights()
    with torch.no_grad():
        net.head.fc.weight.fill_(5)
    net.init_weights()
    assert torch.all(net.head.fc.weight == 5)


def test_override_in_init_cfg(log):
    net = Net(
        init_cfg=dict(
            type="Constant",
            val=1,
            layer="Conv2d",
            override=dict(type="Constant", name="bn", val=2, bias=0.5),
        )
    )
    net.init_weights()
    assert torch.all(net.bn.weight == 2) and torch.all(net.bn.bias == 0.5)
    assert "bn.bias - torch.Size([4]):\nConstantInit: val=2, bias=0.5" in init_table(log)


def test_override_naming_missing_child_from_init_weights():
    net = Net(init_cfg=dict(type="Constant", val=1, override=dict(name="neck")))
    with pytest.raises(RuntimeError, match=r"override names 'neck', but Net has no submodule"):
        net.init_weights()
    # the record is cleaned up even when init fails
    assert not any(hasattr(m, "_params_init_info") for m in net.modules())


def test_init_cfg_of_wrong_type():
    with pytest.raises(TypeError, match=r"init_cfg of Net must be a dict or a list of dicts"):
        Net(init_cfg="Constant").init_weights()
    with pytest.raises(KeyError, match=r"init_cfg of Head needs a 'type' key"):
        Net(head_cfg=dict(val=1)).init_weights()


def test_update_init_info_outside_init_weights():
    with pytest.raises(
        RuntimeError, match=r"update_init_info\(Linear, \.\.\.\): the module has no"
    ):
        update_init_info(nn.Linear(2, 2), "manual")


class AddsParameter(BaseModule):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(2, 2)

    def init_weights(self):
        self.fc.weight = nn.Parameter(torch.zeros(2, 2))
        update_init_info(self, "replaced")


class HoldsAdder(BaseModule):
    def __init__(self):
        super().__init__()
        self.inner = AddsParameter()


def test_replacing_a_parameter_during_init_is_refused():
    with pytest.raises(RuntimeError, match=r"Parameter 'fc.weight' of AddsParameter appeared"):
        HoldsAdder().init_weights()


def test_containers_carry_their_own_init_cfg(log):
    linear = dict(type="Constant", val=2, layer="Linear")
    seq = Sequential(nn.Linear(2, 2), nn.ReLU(), init_cfg=linear)
    mlist = ModuleList([nn.Linear(2, 2)], init_cfg=dict(linear, val=3))
    mdict = ModuleDict(dict(a=nn.Linear(2, 2)), init_cfg=dict(linear, val=4))

    class Outer(BaseModule):
        def __init__(self):
            super().__init__(init_cfg=dict(type="Constant", val=1, layer="Linear"))
            self.seq, self.mlist, self.mdict = seq, mlist, mdict

    outer = Outer()
    outer.init_weights()
    assert torch.all(seq[0].weight == 2) and isinstance(seq, nn.Sequential)
    assert torch.all(mlist[0].weight == 3) and isinstance(mlist, nn.ModuleList)
    assert torch.all(mdict["a"].weight == 4) and isinstance(mdict, nn.ModuleDict)
    assert "mdict.a.weight - torch.Size([2, 2]):\nConstantInit: val=4, bias=0" in init_table(log)
    assert seq(torch.ones(1, 2)).shape == (1, 2)
    assert "init_cfg=" in repr(mlist)


_TEST_WRAPPERS = Registry("model_wrapper", parent=MODEL_WRAPPERS, scope="test_model_base_module")


@_TEST_WRAPPERS.register_module()
class ToyWrapper(nn.Module):
    def __init__(self, module):
        super().__init__()
        self.module = module


def test_wrapped_child_is_initialized_through_its_module():
    class Outer(BaseModule):
        def __init__(self):
            super().__init__()
            self.wrapped = ToyWrapper(Head(dict(type="Constant", val=8, layer="Linear")))

    outer = Outer()
    outer.init_weights()
    assert torch.all(outer.wrapped.module.fc.weight == 8)


def test_table_goes_to_the_log_file_only(tmp_path, log):
    log_file = tmp_path / "run.log"
    logger = MMLogger.get_instance(f"mi_file_{tmp_path.name}", log_file=str(log_file))
    logger.addHandler(log)
    try:
        Net(init_cfg=dict(type="Constant", val=1, layer="Conv2d")).init_weights()
    finally:
        logger.removeHandler(log)
        logger.close()
    text = log_file.read_text()
    assert "Name of parameter - Initialization information" in text
    assert "conv.weight - torch.Size([4, 3, 1, 1]):\nConstantInit: val=1, bias=0" in text
    assert not any(m.startswith("Name of parameter") for m in log.messages)


def test_nan_parameters_are_not_credited_to_every_initializer(log):
    class WithNaN(BaseModule):
        def __init__(self):
            super().__init__(init_cfg=dict(type="Constant", val=1, layer="Linear"))
            self.fc = nn.Linear(2, 2)
            self.raw = nn.Parameter(torch.full((2,), float("nan")))

    WithNaN().init_weights()
    assert "raw - torch.Size([2]):\nThe value is the same before and after" in init_table(log)


def test_meta_parameters_do_not_break_the_record(log):
    class OnMeta(BaseModule):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(2, 2, device="meta")

    OnMeta().init_weights()
    assert "fc.weight - torch.Size([2, 2]):\nThe value is the same" in init_table(log)


class RecordsItself(BaseModule):
    def __init__(self):
        super().__init__()
        self.head = nn.Linear(2, 2)
        self.tail = nn.Linear(2, 2)

    def init_weights(self):
        nn.init.zeros_(self.head.weight)
        update_init_info(self, "zeros for the head")
        nn.init.ones_(self.tail.weight)


def test_custom_init_weights_can_describe_itself(log):
    class Outer(BaseModule):
        def __init__(self):
            super().__init__()
            self.inner = RecordsItself()

    Outer().init_weights()
    table = init_table(log)
    assert "inner.head.weight - torch.Size([2, 2]):\nzeros for the head" in table
    assert (
        "inner.tail.weight - torch.Size([2, 2]):\n"
        "Initialized by user-defined `init_weights` in RecordsItself" in table
    )
    assert "inner.head.bias - torch.Size([2]):\nThe value is the same" in table


def test_abstract_methods_of_subclasses_are_enforced():
    from abc import abstractmethod

    class Abstract(BaseModule):
        @abstractmethod
        def forward(self, x): ...

    with pytest.raises(TypeError, match=r"abstract"):
        Abstract()


def test_init_weights_hands_the_record_to_dump_init_info(monkeypatch):
    """Toolbox tests replace _dump_init_info to read _params_init_info: every parameter of a
    nested module is in it, with the initializer that set it last."""

    class Block(BaseModule):
        def __init__(self):
            super().__init__(init_cfg=dict(type="Constant", val=2, layer="Conv2d"))
            self.conv = nn.Conv2d(3, 3, 1)

    class Inception(BaseModule):
        def __init__(self):
            super().__init__()
            self.Conv2d_1a_3x3 = Block()
            self.fc = nn.Linear(3, 2)

    seen = {}

    def dump(module):
        names = dict(module.named_parameters())
        seen.update(
            {name: module._params_init_info[param]["init_info"] for name, param in names.items()}
        )

    monkeypatch.setattr(Inception, "_dump_init_info", dump)
    model = Inception()
    model.init_weights()
    assert seen["Conv2d_1a_3x3.conv.weight"].startswith("ConstantInit: val=2")
    assert "The value is the same before and after" in seen["fc.weight"]
    # The record is gone once init_weights is over; only the outermost call dumps it.
    assert not hasattr(model.Conv2d_1a_3x3, "_params_init_info")
    calls = []
    monkeypatch.setattr(Block, "_dump_init_info", lambda module: calls.append(module))
    Block().init_weights()
    assert len(calls) == 1


def test_a_patched_is_model_wrapper_decides_what_is_a_wrapper(monkeypatch):
    """MMEngine's tests patch is_model_wrapper in the module of BaseModule."""
    import treadle.runner.model.base_module as base_module

    class FakeDDP(nn.Module):
        def __init__(self, module):
            super().__init__()
            self.module = module

    class Outer(BaseModule):
        def __init__(self):
            super().__init__()
            self.ddp = FakeDDP(Head(dict(type="Constant", val=5, layer="Linear")))

    monkeypatch.setattr(base_module, "is_model_wrapper", lambda m: isinstance(m, FakeDDP))
    outer = Outer()
    outer.init_weights()
    assert torch.all(outer.ddp.module.fc.weight == 5)
