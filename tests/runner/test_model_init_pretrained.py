"""``Pretrained``: weights loaded through treadle.runner.checkpoint's functions, found in
FUNCTIONS (so treadle.runner.model never imports checkpoint): .pth and .safetensors files (tied
weights included), every CheckpointLoader scheme, whole or under a prefix; the calls it makes,
and the errors of each step."""

from __future__ import annotations

import io
import pickle
import subprocess
import sys
import uuid
from collections import OrderedDict

import pytest
import torch
from runner_toys import captured_log
from torch import nn

from treadle import fileio
from treadle.runner.model import BaseModule, PretrainedInit, initialize
from treadle.runner.model.weight_init.pretrained import (
    LOAD_CHECKPOINT,
    LOAD_CHECKPOINT_WITH_PREFIX,
    LOAD_STATE_DICT,
)
from treadle.runner.registry import FUNCTIONS


@pytest.fixture
def log():
    with captured_log() as capture:
        yield capture


def backbone():
    return nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4))


class Detector(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = backbone()
        self.head = nn.Linear(4, 2)


def filled(module, value):
    with torch.no_grad():
        for p in module.parameters():
            p.fill_(value)
    return module


def assert_same(a, b):
    sa, sb = a.state_dict(), b.state_dict()
    assert sa.keys() == sb.keys()
    for key in sa:
        assert torch.equal(sa[key], sb[key]), key


# --- where the functions come from ---


def test_the_functions_are_checkpoints_own():
    from treadle.runner import checkpoint

    assert FUNCTIONS.get(LOAD_CHECKPOINT) is checkpoint.load_checkpoint
    assert FUNCTIONS.get(LOAD_CHECKPOINT_WITH_PREFIX) is checkpoint._load_checkpoint_with_prefix
    assert FUNCTIONS.get(LOAD_STATE_DICT) is checkpoint.load_state_dict


def test_importing_model_does_not_import_checkpoint_until_pretrained_runs(tmp_path):
    path = tmp_path / "w.pth"
    torch.save(backbone().state_dict(), path)
    code = (
        "import sys\n"
        "import treadle.runner.model as model\n"
        "from torch import nn\n"
        "before = 'treadle.runner.checkpoint' in sys.modules\n"
        "target = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4))\n"
        f"model.initialize(target, dict(type='Pretrained', checkpoint={str(path)!r}))\n"
        "print(before, 'treadle.runner.checkpoint' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines()[-1] == "False True"


class Calls:
    def __init__(self, result=None):
        self.calls: list[tuple] = []
        self.result = result

    def __call__(self, *args, **kwargs):
        self.calls.append((args, kwargs))
        return self.result


def test_calls_load_checkpoint_as_mmengine_does(monkeypatch):
    spy = Calls()
    FUNCTIONS.get(LOAD_CHECKPOINT)  # imports the location before it is replaced
    monkeypatch.setitem(FUNCTIONS._module_dict, LOAD_CHECKPOINT, spy)
    target = backbone()
    PretrainedInit("w.pth", map_location="meta", weights_only=False)(target)
    assert spy.calls == [
        (
            (target, "w.pth"),
            dict(map_location="meta", strict=False, logger="current", weights_only=False),
        )
    ]


def test_with_a_prefix_calls_load_with_prefix_then_load_state_dict(monkeypatch):
    FUNCTIONS.get(LOAD_CHECKPOINT)
    weights = {"0.weight": torch.ones(4, 3)}
    with_prefix, load = Calls(weights), Calls()
    monkeypatch.setitem(FUNCTIONS._module_dict, LOAD_CHECKPOINT_WITH_PREFIX, with_prefix)
    monkeypatch.setitem(FUNCTIONS._module_dict, LOAD_STATE_DICT, load)
    target = backbone()
    PretrainedInit("det.pth", prefix="backbone")(target)
    assert with_prefix.calls == [
        (("backbone", "det.pth"), dict(map_location="cpu", weights_only=True))
    ]
    assert load.calls == [((target, weights), dict(strict=False, logger="current"))]


def test_a_missing_function_is_named(monkeypatch):
    FUNCTIONS.get(LOAD_CHECKPOINT)
    monkeypatch.delitem(FUNCTIONS._module_dict, LOAD_CHECKPOINT)
    with pytest.raises(
        KeyError,
        match=r"Pretrained loads weights with 'checkpoint:load_checkpoint' from the FUNCTIONS "
        r"registry, which treadle.runner.checkpoint registers .*closest registered: "
        r"'checkpoint:_load_checkpoint_with_prefix'",
    ):
        PretrainedInit("w.pth")(backbone())


# --- formats and schemes ---


def test_loads_a_pth_file(tmp_path, log):
    source = filled(backbone(), 0.5)
    path = tmp_path / "w.pth"
    torch.save(source.state_dict(), path)
    target = backbone()
    initialize(target, dict(type="Pretrained", checkpoint=str(path)))
    assert_same(target, source)
    assert f"load model from: {path}" in log.messages
    assert not any("do not match" in m for m in log.messages)


def test_takes_state_dict_entry_and_strips_module_prefix(tmp_path):
    source = filled(backbone(), 0.25)
    wrapped = OrderedDict(("module." + k, v) for k, v in source.state_dict().items())
    path = tmp_path / "ddp.pth"
    torch.save({"state_dict": wrapped, "meta": {"epoch": 3}}, path)
    target = backbone()
    PretrainedInit(checkpoint=str(path))(target)
    assert_same(target, source)


def test_map_location_may_be_a_function(tmp_path):
    source = filled(backbone(), 0.375)
    path = tmp_path / "w.pth"
    torch.save(source.state_dict(), path)
    seen = []

    def to_cpu(storage, location):
        seen.append(location)
        return storage

    target = backbone()
    initialize(target, dict(type="Pretrained", checkpoint=str(path), map_location=to_cpu))
    assert_same(target, source)
    assert seen and set(seen) == {"cpu"}


def test_loads_a_safetensors_file(tmp_path):
    from safetensors.torch import save_file

    source = filled(backbone(), 1.5)
    path = tmp_path / "w.safetensors"
    save_file(source.state_dict(), str(path))
    target = backbone()
    initialize(target, dict(type="Pretrained", checkpoint=str(path)))
    assert_same(target, source)


class Tied(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(5, 3)
        self.out = nn.Linear(3, 5, bias=False)
        self.out.weight = self.embed.weight


def test_loads_a_safetensors_file_with_tied_weights(tmp_path, log):
    from treadle.runner.checkpoint import save_checkpoint

    torch.manual_seed(0)
    source = Tied()
    path = tmp_path / "tied.safetensors"
    # safetensors itself refuses shared tensors; checkpoint stores one and an alias.
    save_checkpoint({"state_dict": source.state_dict(), "meta": {}}, str(path))
    target = Tied()
    initialize(target, dict(type="Pretrained", checkpoint=str(path)))
    assert_same(target, source)
    assert target.out.weight is target.embed.weight
    assert not any("do not match" in m for m in log.messages)


def test_loads_through_a_fileio_backend():
    source = filled(backbone(), 2.0)
    buffer = io.BytesIO()
    torch.save(source.state_dict(), buffer)
    url = f"memory://treadle-{uuid.uuid4().hex}/w.pth"
    fileio.put(buffer.getvalue(), url)
    target = backbone()
    initialize(target, dict(type="Pretrained", checkpoint=url))
    assert_same(target, source)


def test_loads_a_file_shipped_in_a_package(tmp_path, monkeypatch):
    source = filled(Detector(), 2.5)
    name = f"treadle_pretrained_pkg_{uuid.uuid4().hex[:8]}"
    root = tmp_path / "site" / name
    (root / "weights").mkdir(parents=True)
    (root / "__init__.py").write_text("")
    torch.save({"state_dict": source.state_dict()}, root / "weights" / "det.pth")
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    target = backbone()
    cfg = dict(type="Pretrained", checkpoint=f"pkg::{name}/weights/det.pth", prefix="backbone")
    initialize(target, cfg)
    assert_same(target, source.backbone)


def test_a_scheme_registered_by_the_user_serves_pretrained(tmp_path, monkeypatch):
    from treadle.runner.checkpoint import CheckpointLoader

    source = filled(backbone(), 3.5)
    torch.save(source.state_dict(), tmp_path / "resnet.pth")
    monkeypatch.setattr(CheckpointLoader, "_schemes", dict(CheckpointLoader._schemes))

    @CheckpointLoader.register_scheme(prefixes="zoo://")
    def load_from_zoo(filename, map_location=None):
        return torch.load(tmp_path / f"{filename[6:]}.pth", map_location=map_location)

    target = backbone()
    initialize(target, dict(type="Pretrained", checkpoint="zoo://resnet"))
    assert_same(target, source)


def test_model_zoo_names_are_looked_up(tmp_path, monkeypatch):
    monkeypatch.setenv("TREADLE_HOME", str(tmp_path))
    (tmp_path / "open_mmlab.json").write_text('{"resnet50_caffe": "r50.pth"}')
    with pytest.raises(
        KeyError, match=r"open-mmlab://resnet50_cafe is not a known model\. Did you mean"
    ):
        initialize(backbone(), dict(type="Pretrained", checkpoint="open-mmlab://resnet50_cafe"))


# --- prefix, mismatches and errors ---


@pytest.mark.parametrize("prefix", ["backbone", "backbone."])
def test_prefix_takes_the_keys_under_it(tmp_path, prefix, log):
    detector = Detector()
    filled(detector.backbone, 3.0)
    path = tmp_path / "det.pth"
    torch.save({"state_dict": detector.state_dict()}, path)
    target = backbone()
    initialize(target, dict(type="Pretrained", checkpoint=str(path), prefix=prefix))
    assert_same(target, detector.backbone)
    assert f"load {prefix} in model from: {path}" in log.messages


def test_prefix_not_in_checkpoint(tmp_path):
    path = tmp_path / "det.pth"
    torch.save(Detector().state_dict(), path)
    with pytest.raises(
        ValueError,
        match=r"'backbon' is not in the pretrained model .*det\.pth: its keys start with "
        r"'backbone', 'head'",
    ):
        initialize(backbone(), dict(type="Pretrained", checkpoint=str(path), prefix="backbon"))


def test_mismatches_are_skipped_and_logged(tmp_path, log):
    state = filled(backbone(), 4.0).state_dict()
    state["0.weight"] = torch.zeros(5, 3)  # wrong shape
    state["extra.weight"] = torch.zeros(1)
    del state["1.bias"]
    path = tmp_path / "w.pth"
    torch.save(state, path)
    target = backbone()
    before = target[0].weight.clone()
    initialize(target, dict(type="Pretrained", checkpoint=str(path)))
    assert torch.equal(target[0].weight, before)
    assert torch.all(target[0].bias == 4.0)
    warning = next(m for m in log.messages if "do not match exactly" in m)
    assert "size mismatch for 0.weight" in warning
    assert "torch.Size([5, 3]) from checkpoint" in warning
    assert "unexpected key in source state_dict: extra.weight" in warning
    assert "missing keys in source state_dict: 1.bias" in warning


def test_missing_file(tmp_path):
    missing = tmp_path / "nope.pth"
    with pytest.raises(
        FileNotFoundError, match=r"No such file or directory \(checkpoint, local backend\).*nope"
    ):
        initialize(backbone(), dict(type="Pretrained", checkpoint=str(missing)))


class Opaque:
    def __init__(self):
        self.value = 1


@pytest.mark.parametrize("prefix", [None, "body"])
def test_pickled_objects_need_weights_only_false(tmp_path, prefix):
    source = filled(backbone(), 6.0)
    path = tmp_path / "legacy.pth"
    keys = "" if prefix is None else f"{prefix}."
    state = {keys + k: v for k, v in source.state_dict().items()}
    torch.save({"state_dict": state, "meta": Opaque()}, path)
    cfg = dict(type="Pretrained", checkpoint=str(path), prefix=prefix)
    with pytest.raises(pickle.UnpicklingError, match=r"Opaque.*weights_only=False") as info:
        initialize(backbone(), cfg)
    assert info.value.unsafe_globals == [f"{__name__}.Opaque"]
    if sys.version_info >= (3, 11):
        assert info.value.__notes__ == [
            f"Pretrained: only if you trust {path}, add weights_only=False to this Pretrained "
            "init_cfg."
        ]
    target = backbone()
    initialize(target, dict(cfg, weights_only=False))
    assert_same(target, source)


def test_an_unreadable_file_gets_no_weights_only_note(tmp_path):
    path = tmp_path / "garbage.pth"
    path.write_bytes(b"not a checkpoint at all")
    with pytest.raises(
        pickle.UnpicklingError, match=r"cannot read the checkpoint .*garbage\.pth"
    ) as info:
        initialize(backbone(), dict(type="Pretrained", checkpoint=str(path)))
    assert not any("Pretrained" in note for note in getattr(info.value, "__notes__", []))


# --- inside BaseModule ---


class Net(BaseModule):
    def __init__(self, checkpoint):
        super().__init__(
            init_cfg=[
                dict(type="Pretrained", checkpoint=checkpoint),
                dict(type="Constant", val=9, layer="Linear"),
            ]
        )
        self.body = backbone()


def test_pretrained_in_init_cfg_runs_last_and_is_recorded(tmp_path, log):
    source = filled(backbone(), 0.75)
    path = tmp_path / "w.pth"
    torch.save({"state_dict": {"body." + k: v for k, v in source.state_dict().items()}}, path)
    net = Net(str(path))
    net.init_weights()
    assert_same(net.body, source)
    table = next(m for m in log.messages if m.startswith("Name of parameter"))
    assert f"body.0.weight - torch.Size([4, 3]):\nPretrainedInit: load from {path}" in table


def test_pretrained_given_as_a_class_also_runs_last(tmp_path):
    source = filled(backbone(), 0.125)
    path = tmp_path / "w.pth"
    torch.save({"body." + k: v for k, v in source.state_dict().items()}, path)

    class ByClass(BaseModule):
        def __init__(self):
            super().__init__(
                init_cfg=[
                    dict(type=PretrainedInit, checkpoint=str(path)),
                    dict(type="Constant", val=9, layer="Linear"),
                ]
            )
            self.body = backbone()

    net = ByClass()
    net.init_weights()
    assert_same(net.body, source)
