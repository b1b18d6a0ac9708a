"""treadle.runner.checkpoint against MMEngine 0.10's mmengine.runner.checkpoint: checkpoints
cross over (weights only), and the same calls give the same models and dicts.

Runs only where mmengine is installed: ``hatch run mmengine:pytest ...``.
"""

from __future__ import annotations

import os

import pytest

pytest.importorskip("mmengine")

import mmengine.runner.checkpoint as mm
import torch
from torch import nn

import treadle.runner.checkpoint as tr

SIDES = {"mmengine": mm, "treadle": tr}


class Net(nn.Module):
    def __init__(self, out: int = 2) -> None:
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4))
        self.head = nn.Linear(4, out)


class Holder(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.net = nn.DataParallel(Net())


def trained(seed: int = 0, out: int = 2) -> Net:
    torch.manual_seed(seed)
    net = Net(out)
    with torch.no_grad():
        for tensor in net.state_dict().values():
            if tensor.is_floating_point():
                tensor.copy_(torch.randn_like(tensor))
    return net


def same(a: dict, b: dict) -> bool:
    return list(a) == list(b) and all(torch.equal(a[k], b[k]) for k in a)


def checkpoint_of(net: nn.Module) -> dict:
    return {"state_dict": net.state_dict(), "meta": {"epoch": 3, "iter": 30, "cfg": "a = 1"}}


@pytest.mark.parametrize(("writer", "reader"), [("mmengine", "treadle"), ("treadle", "mmengine")])
def test_checkpoints_cross_over(tmp_path, writer, reader):
    source = trained()
    path = str(tmp_path / "epoch_3.pth")
    SIDES[writer].save_checkpoint(checkpoint_of(source), path)
    target = Net()
    loaded = SIDES[reader].load_checkpoint(target, path, map_location="cpu", strict=True)
    assert loaded["meta"] == checkpoint_of(source)["meta"]
    assert same(target.state_dict(), source.state_dict())


def test_saved_files_hold_the_same_objects(tmp_path):
    source = trained()
    for name, side in SIDES.items():
        side.save_checkpoint(checkpoint_of(source), str(tmp_path / f"{name}.pth"))
    ours = torch.load(tmp_path / "treadle.pth")
    theirs = torch.load(tmp_path / "mmengine.pth")
    assert ours["meta"] == theirs["meta"]
    assert same(ours["state_dict"], theirs["state_dict"])


@pytest.mark.parametrize(
    "revise_keys",
    [
        [(r"^module\.", "")],
        [(r"^model\.", ""), (r"^encoder\.", "")],
        [(r"^model\.encoder\.", "prefix.")],
    ],
)
def test_revise_keys_give_the_same_model(tmp_path, revise_keys):
    source = trained(1)
    state = {f"model.encoder.{k}": v for k, v in source.state_dict().items()}
    state.update({f"module.{k}": v for k, v in trained(2).state_dict().items()})
    path = str(tmp_path / "revise.pth")
    torch.save({"state_dict": state}, path)
    models = {}
    for name, side in SIDES.items():
        torch.manual_seed(5)
        models[name] = Net()
        side.load_checkpoint(models[name], path, revise_keys=revise_keys)
    assert same(models["treadle"].state_dict(), models["mmengine"].state_dict())


def test_shape_mismatch_loads_the_same_weights_without_strict(tmp_path):
    path = str(tmp_path / "wide.pth")
    torch.save({"state_dict": trained(3, out=5).state_dict()}, path)
    models = {}
    for name, side in SIDES.items():
        torch.manual_seed(6)
        models[name] = Net()
        side.load_checkpoint(models[name], path)
    assert same(models["treadle"].state_dict(), models["mmengine"].state_dict())


def test_strict_errors_name_the_same_keys():
    state = Net().state_dict()
    del state["head.bias"]
    state["head.scale"] = torch.ones(1)
    messages = {}
    for name, side in SIDES.items():
        with pytest.raises(RuntimeError) as info:
            side.load_state_dict(Net(), state, strict=True)
        messages[name] = str(info.value)
    for message in messages.values():
        assert "unexpected key in source state_dict: head.scale" in message
        assert "missing keys in source state_dict: head.bias" in message


def test_get_state_dict_and_weights_to_cpu_are_equal():
    torch.manual_seed(0)
    for module in (trained(), Holder(), nn.DataParallel(trained())):
        theirs, ours = mm.get_state_dict(module), tr.get_state_dict(module)
        assert same(ours, theirs)
        assert ours._metadata == theirs._metadata
        assert same(tr.weights_to_cpu(ours), mm.weights_to_cpu(theirs))
        assert tr.weights_to_cpu(ours)._metadata == mm.weights_to_cpu(theirs)._metadata


def test_load_state_dict_into_wrapped_models_is_equal():
    state = {f"net.{k}": v for k, v in trained().state_dict().items()}
    models = {}
    for name, side in SIDES.items():
        torch.manual_seed(7)
        models[name] = Holder()
        side.load_state_dict(models[name], state, strict=True)
    assert same(models["treadle"].state_dict(), models["mmengine"].state_dict())


def test_load_checkpoint_with_prefix_is_equal(tmp_path):
    path = str(tmp_path / "m.pth")
    torch.save({"state_dict": trained().state_dict()}, path)
    ours = tr._load_checkpoint_with_prefix("backbone.", path)
    theirs = mm._load_checkpoint_with_prefix("backbone.", path)
    assert same(ours, theirs)


def test_find_latest_checkpoint_on_mmengines_layout(tmp_path):
    # What mmengine's CheckpointHook leaves in a work dir: epoch files and the pointer.
    for epoch in (1, 2):
        mm.save_checkpoint(checkpoint_of(trained()), str(tmp_path / f"epoch_{epoch}.pth"))
    with open(tmp_path / "last_checkpoint", "w") as file:
        file.write(str(tmp_path / "epoch_2.pth"))
    assert tr.find_latest_checkpoint(str(tmp_path)) == mm.find_latest_checkpoint(str(tmp_path))
    os.remove(tmp_path / "last_checkpoint")
    empty = tmp_path / "empty"
    empty.mkdir()
    assert tr.find_latest_checkpoint(str(empty)) == mm.find_latest_checkpoint(str(empty)) is None


def test_register_scheme_twice_is_a_key_error_on_both():
    for side in SIDES.values():
        with pytest.raises(KeyError):
            side.CheckpointLoader.register_scheme("http://", lambda filename, map_location: None)


def test_the_same_loader_is_chosen_for_the_same_prefixes():
    for path in (
        "/tmp/a.pth",
        "http://h/a.pth",
        "https://h/a.pth",
        "s3://b/a.pth",
        "torchvision://resnet50",
        "open-mmlab://x",
        "openmmlab://x",
        "mmcls://x",
    ):
        ours = tr.CheckpointLoader._get_checkpoint_loader(path).__name__
        theirs = mm.CheckpointLoader._get_checkpoint_loader(path).__name__
        assert ours == theirs, path
