"""open-mmlab://, openmmlab:// and mmcls:// checkpoints: the names of MMEngine 0.10.7's lists
that treadle ships, the user's own lists beside them, renamed names, and the download, served
by a loopback http server that $TREADLE_OPENMMLAB_MIRROR points the shipped URLs at."""

from __future__ import annotations

import json
import urllib.parse

import pytest
import torch
from runner_toys import captured_log
from torch import nn

from treadle.runner.checkpoint import (
    _load_checkpoint,
    get_deprecated_model_names,
    get_external_models,
    get_mmcls_models,
    load_checkpoint,
)
from treadle.runner.checkpoint.openmmlab_models import OPENMMLAB_DOWNLOADS, mirrored


@pytest.fixture
def treadle_home(tmp_path, monkeypatch):
    home = tmp_path / "treadle_home"
    home.mkdir()
    monkeypatch.setenv("TREADLE_HOME", str(home))
    return home


@pytest.fixture
def mirror(server, torch_home, treadle_home, monkeypatch):
    """OpenMMLab's download server, as the loopback server: ``mirror.serve(url, checkpoint)``
    puts a checkpoint where the shipped ``url`` points."""
    monkeypatch.setenv("TREADLE_OPENMMLAB_MIRROR", server.url)

    def serve(url: str, checkpoint: dict) -> str:
        path = urllib.parse.urlparse(url).path
        target = server.root / path.lstrip("/")
        target.parent.mkdir(parents=True, exist_ok=True)
        torch.save(checkpoint, target)
        return path

    server.serve = serve
    return server


def weights() -> dict:
    torch.manual_seed(1)
    return nn.Linear(2, 3).state_dict()


def test_the_shipped_lists_are_mmengine_0_10_7s():
    external = get_external_models()
    assert len(external) == 48
    assert external["resnet50_v1c"] == (
        "https://download.openmmlab.com/pretrain/third_party/resnet50_v1c-2cccc1ad.pth"
    )
    assert len(get_mmcls_models()) == 57
    assert get_deprecated_model_names() == {
        "resnet50_caffe": "detectron/resnet50_caffe",
        "resnet50_caffe_bgr": "detectron2/resnet50_caffe_bgr",
        "resnet101_caffe": "detectron/resnet101_caffe",
        "resnet101_caffe_bgr": "detectron2/resnet101_caffe_bgr",
    }
    every_url = [*external.values(), *get_mmcls_models().values()]
    assert all(url.startswith(OPENMMLAB_DOWNLOADS + "/") for url in every_url)


def test_a_shipped_name_is_downloaded_once_and_loaded(mirror, torch_home):
    path = mirror.serve(get_external_models()["resnet50_v1c"], {"state_dict": weights()})
    model = nn.Linear(2, 3)
    load_checkpoint(model, "open-mmlab://resnet50_v1c", strict=True)
    assert torch.equal(model.weight, weights()["weight"])
    # openmmlab:// is the same list; the file is taken from torch.hub's cache this time.
    assert "state_dict" in _load_checkpoint("openmmlab://resnet50_v1c")
    assert mirror.requests == [path]
    assert (torch_home / "hub" / "checkpoints" / "resnet50_v1c-2cccc1ad.pth").is_file()


def test_a_renamed_name_warns_and_loads_the_new_one(mirror):
    new_url = get_external_models()["detectron/resnet50_caffe"]
    mirror.serve(new_url, {"state_dict": weights()})
    with captured_log() as log, pytest.warns(DeprecationWarning) as warned:
        checkpoint = _load_checkpoint("open-mmlab://resnet50_caffe")
    message = "open-mmlab://resnet50_caffe is deprecated in favor of open-mmlab://detectron/resnet50_caffe"
    assert str(warned[0].message) == message
    assert message in "\n".join(log.messages)
    assert torch.equal(checkpoint["state_dict"]["weight"], weights()["weight"])


def test_mmcls_keeps_the_backbone(mirror):
    state = {"backbone.conv.weight": torch.ones(1), "head.fc.weight": torch.zeros(1)}
    mirror.serve(get_mmcls_models()["resnet50"], {"state_dict": state})
    checkpoint = _load_checkpoint("mmcls://resnet50")
    assert list(checkpoint["state_dict"]) == ["conv.weight"]


def test_the_users_lists_add_and_replace_names(server, torch_home, treadle_home):
    torch.save({"state_dict": weights()}, server.root / "r50.pth")
    (treadle_home / "models").mkdir()
    torch.save({"state_dict": {"w": torch.ones(1)}}, treadle_home / "models" / "local.pth")
    (treadle_home / "open_mmlab.json").write_text(
        json.dumps(
            {
                "my_r50": f"{server.url}/r50.pth",
                "local_one": "models/local.pth",
                "resnet50_v1c": f"{server.url}/r50.pth",  # replaces the shipped URL
            }
        )
    )
    (treadle_home / "mmcls.json").write_text(json.dumps({"my_cls": f"{server.url}/r50.pth"}))
    assert get_external_models()["resnet50_v1c"] == f"{server.url}/r50.pth"
    assert "vgg16_caffe" in get_external_models()  # the shipped names stay
    model = nn.Linear(2, 3)
    load_checkpoint(model, "open-mmlab://my_r50", strict=True)
    assert torch.equal(model.weight, weights()["weight"])
    assert "state_dict" in _load_checkpoint("openmmlab://local_one")
    assert "my_cls" in get_mmcls_models() and "resnet50" in get_mmcls_models()


def test_an_unknown_name_says_where_to_add_it(treadle_home):
    with pytest.raises(
        KeyError, match=r"resnet50_v1d is not a known model\. Did you mean 'resnet50_v1c'"
    ) as info:
        _load_checkpoint("open-mmlab://resnet50_v1d")
    assert "neither MMEngine 0.10.7's list that treadle ships nor" in str(info.value)
    assert str(treadle_home / "open_mmlab.json") in str(info.value)
    with pytest.raises(KeyError, match=r"mmcls://nope is not a known model.*mmcls\.json"):
        _load_checkpoint("mmcls://nope")


def test_a_local_path_in_the_users_list_must_exist(treadle_home):
    (treadle_home / "open_mmlab.json").write_text(json.dumps({"gone": "models/gone.pth"}))
    with pytest.raises(FileNotFoundError, match=r"open-mmlab://gone in open_mmlab\.json"):
        _load_checkpoint("open-mmlab://gone")


def test_a_bad_users_list_names_its_file(treadle_home):
    (treadle_home / "mmcls.json").write_text(json.dumps(["not", "a", "mapping"]))
    with pytest.raises(ValueError, match=r"mmcls\.json must hold a JSON object \{name: url\}"):
        get_mmcls_models()


def test_the_mirror_replaces_only_openmmlabs_server(monkeypatch):
    monkeypatch.setenv("TREADLE_OPENMMLAB_MIRROR", "http://mirror.local/mm/")
    assert (
        mirrored(f"{OPENMMLAB_DOWNLOADS}/pretrain/a.pth") == "http://mirror.local/mm/pretrain/a.pth"
    )
    assert mirrored("https://example.com/a.pth") == "https://example.com/a.pth"
    monkeypatch.delenv("TREADLE_OPENMMLAB_MIRROR")
    assert mirrored(f"{OPENMMLAB_DOWNLOADS}/a.pth") == f"{OPENMMLAB_DOWNLOADS}/a.pth"
