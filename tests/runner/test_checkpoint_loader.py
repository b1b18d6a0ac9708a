"""CheckpointLoader and its schemes: registration, prefixes, http(s) downloads from a loopback
server, s3:// on a loopback S3 server, pkg:: files in installed packages, and the model-zoo
names (torchvision://, open-mmlab://, mmcls://)."""

from __future__ import annotations

import enum
import hashlib
import logging
import sys
import types
import uuid

import pytest
import torch
from runner_toys import captured_log
from s3_server import bucket, moto_endpoint  # noqa: F401 (fixtures)
from torch import nn

from treadle.fileio import UnknownBackendError
from treadle.runner.checkpoint import (
    CheckpointLoader,
    _load_checkpoint,
    load_checkpoint,
    load_from_ceph,
    load_from_http,
    load_from_s3,
    save_checkpoint,
)


@pytest.fixture
def current_log():
    """What is logged through the current treadle logger during the test."""
    with captured_log() as log:
        yield log


@pytest.fixture(autouse=True)
def restore_schemes():
    saved = dict(CheckpointLoader._schemes)
    yield
    CheckpointLoader._schemes = saved


def weights() -> dict:
    torch.manual_seed(1)
    return nn.Linear(2, 3).state_dict()


# --- registration ---


def test_register_scheme_as_decorator_and_function():
    calls = []

    @CheckpointLoader.register_scheme(prefixes="zoo://")
    def load_from_zoo(filename, map_location=None):
        calls.append((filename, map_location))
        return {"w": torch.ones(1)}

    assert CheckpointLoader.load_checkpoint("zoo://net", "cpu") == {"w": torch.ones(1)}
    assert calls == [("zoo://net", "cpu")]  # no weights_only: the loader does not take it
    CheckpointLoader.register_scheme(["a://", "b://"], lambda filename, map_location: filename)
    assert CheckpointLoader.load_checkpoint("b://x") == "b://x"


def test_a_loader_that_takes_weights_only_gets_it():
    seen = {}

    def load_from_opts(filename, map_location=None, weights_only=True):
        seen["weights_only"] = weights_only
        return {}

    CheckpointLoader.register_scheme("opts://", load_from_opts)
    CheckpointLoader.load_checkpoint("opts://x", weights_only=False)
    assert seen == {"weights_only": False}


def test_registering_a_taken_prefix_needs_force():
    with pytest.raises(
        KeyError, match=r"'http://' is already registered .*load_from_http.*force=True"
    ):
        CheckpointLoader.register_scheme("http://", lambda filename, map_location: None)
    CheckpointLoader.register_scheme("http://", lambda filename, map_location: "mine", force=True)
    assert CheckpointLoader.load_checkpoint("http://example.invalid/x.pth") == "mine"


def test_register_scheme_checks_its_arguments():
    with pytest.raises(TypeError, match="prefixes must be a str or a list/tuple of str"):
        CheckpointLoader.register_scheme(3, lambda filename, map_location: None)
    with pytest.raises(TypeError, match="the loader must be callable"):
        CheckpointLoader.register_scheme("x://", "not a function")


def test_the_longest_matching_prefix_wins():
    CheckpointLoader.register_scheme("h://", lambda f, m: "short")
    CheckpointLoader.register_scheme("h://special/", lambda f, m: "long")
    assert CheckpointLoader.load_checkpoint("h://special/x") == "long"
    assert CheckpointLoader.load_checkpoint("h://other/x") == "short"


def test_builtin_schemes_are_chosen_by_prefix():
    pick = CheckpointLoader._get_checkpoint_loader
    # MMEngine's name for the s3:// loader; load_from_s3 is the same function.
    assert pick("s3://bucket/a.pth").__name__ == "load_from_ceph"
    assert pick("cluster1:s3://bucket/a.pth") is load_from_s3
    assert pick("https://host/a.pth").__name__ == "load_from_http"
    assert pick("torchvision://resnet50").__name__ == "load_from_torchvision"
    assert pick("pkg::pkg/a.pth").__name__ == "load_from_package"
    assert pick("open-mmlab://x").__name__ == "load_from_openmmlab"
    assert pick("/tmp/a.pth").__name__ == "load_from_local"


def test_loading_is_logged_with_the_scheme(tmp_path, caplog):
    save_checkpoint({"w": torch.ones(1)}, tmp_path / "a.pth")
    logger = logging.getLogger("treadle-test-loader")
    with caplog.at_level(logging.INFO, logger=logger.name):
        CheckpointLoader.load_checkpoint(str(tmp_path / "a.pth"), logger=logger)
        save_checkpoint({"w": torch.ones(1)}, "memory://loader-log/a.pth")
        CheckpointLoader.load_checkpoint("memory://loader-log/a.pth", logger=logger)
    assert "Loads checkpoint by local backend from path" in caplog.text
    assert "Loads checkpoint by fileio backend from path: memory://loader-log/a.pth" in caplog.text


# --- http(s) ---


def test_http_downloads_once_into_the_cache(server, torch_home):
    torch.save({"state_dict": weights()}, server.root / "linear.pth")
    url = f"{server.url}/linear.pth"
    model = nn.Linear(2, 3)
    load_checkpoint(model, url, strict=True)
    assert torch.equal(model.weight, weights()["weight"])
    cached = torch_home / "hub" / "checkpoints" / "linear.pth"
    assert cached.is_file()
    load_checkpoint(nn.Linear(2, 3), url)
    assert server.requests == ["/linear.pth"]  # the second load used the cache
    assert [p.name for p in cached.parent.iterdir()] == ["linear.pth"]  # no temporary left


def test_http_model_dir_and_safetensors(server, tmp_path):
    save_checkpoint({"state_dict": weights(), "meta": {"epoch": 1}}, server.root / "w.safetensors")
    checkpoint = load_from_http(f"{server.url}/w.safetensors", model_dir=str(tmp_path / "cache"))
    assert checkpoint["meta"] == {"epoch": 1}
    assert (tmp_path / "cache" / "w.safetensors").is_file()


def test_http_404_names_the_url(server, torch_home):
    url = f"{server.url}/missing.pth"
    with pytest.raises(FileNotFoundError, match=r"HTTP 404.*missing\.pth") as info:
        _load_checkpoint(url)
    assert info.value.filename == url
    assert not (torch_home / "hub" / "checkpoints" / "missing.pth").exists()


def test_http_unreachable_names_the_url(torch_home):
    with pytest.raises(OSError, match=r"downloading http://127\.0\.0\.1:9/x\.pth failed"):
        _load_checkpoint("http://127.0.0.1:9/x.pth")


def test_http_check_hash(server, tmp_path):
    torch.save({"w": torch.ones(1)}, server.root / "tmp.pth")
    digest = hashlib.sha256((server.root / "tmp.pth").read_bytes()).hexdigest()
    (server.root / "tmp.pth").rename(server.root / f"good-{digest[:8]}.pth")
    (server.root / "bad-deadbeef.pth").write_bytes(
        (server.root / f"good-{digest[:8]}.pth").read_bytes()
    )
    cache = str(tmp_path / "cache")
    good = load_from_http(f"{server.url}/good-{digest[:8]}.pth", model_dir=cache, check_hash=True)
    assert torch.equal(good["w"], torch.ones(1))
    with pytest.raises(RuntimeError, match=r"does not start with 'deadbeef'"):
        load_from_http(f"{server.url}/bad-deadbeef.pth", model_dir=cache, check_hash=True)
    assert not (tmp_path / "cache" / "bad-deadbeef.pth").exists()


def test_http_url_without_a_file_name_is_refused(torch_home):
    with pytest.raises(ValueError, match="names no file"):
        _load_checkpoint("http://127.0.0.1:9/models/")


# --- s3 ---


def test_s3_round_trip_and_missing_key(bucket):  # noqa: F811 (the imported fixture)
    save_checkpoint(
        {"state_dict": weights(), "meta": {"epoch": 2}}, f"s3://{bucket}/run/epoch_2.pth"
    )
    model = nn.Linear(2, 3)
    assert load_checkpoint(model, f"s3://{bucket}/run/epoch_2.pth")["meta"] == {"epoch": 2}
    assert torch.equal(model.weight, weights()["weight"])
    with pytest.raises(FileNotFoundError, match=rf"S3Backend.*s3://{bucket}/run/missing\.pth"):
        _load_checkpoint(f"s3://{bucket}/run/missing.pth")
    # MMEngine's loader of s3:// paths, by its name: backend='petrel' (its default) is the S3
    # backend here; another name picks that treadle.fileio backend.
    url = f"s3://{bucket}/run/epoch_2.pth"
    assert load_from_ceph(url)["meta"] == {"epoch": 2}
    assert load_from_ceph(url, backend="s3")["meta"] == {"epoch": 2}
    with pytest.raises(UnknownBackendError, match=r"nosuch"):
        load_from_ceph(url, backend="nosuch")


# --- pkg:: ---


@pytest.fixture
def package(tmp_path, monkeypatch):
    name = f"treadle_ckpt_pkg_{uuid.uuid4().hex[:8]}"
    root = tmp_path / "site" / name
    (root / "weights").mkdir(parents=True)
    (root / "__init__.py").write_text("")
    (root / "weights" / "__init__.py").write_text("")
    torch.save({"state_dict": weights()}, root / "weights" / "linear.pth")
    (root / "module.py").write_text("")
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    return name


def test_pkg_loads_a_file_shipped_in_a_package(package):
    model = nn.Linear(2, 3)
    load_checkpoint(model, f"pkg::{package}/weights/linear.pth", strict=True)
    assert torch.equal(model.weight, weights()["weight"])
    assert "state_dict" in _load_checkpoint(f"pkg::{package}.weights/linear.pth")


def test_pkg_errors_name_the_package_and_path(package):
    with pytest.raises(
        ModuleNotFoundError,
        match=r"names the Python package 'no_such_pkg_x', which is not installed",
    ):
        _load_checkpoint("pkg::no_such_pkg_x/a.pth")
    with pytest.raises(
        FileNotFoundError, match=rf"in the installed package '{package}'.*nope\.pth"
    ):
        _load_checkpoint(f"pkg::{package}/weights/nope.pth")
    with pytest.raises(ValueError, match=r"a pkg:: checkpoint is written 'pkg::package"):
        _load_checkpoint(f"pkg::{package}")


# --- torchvision:// ---


def fake_torchvision(urls: dict) -> types.ModuleType:
    class TinyNet_Weights(enum.Enum):
        IMAGENET1K_V1 = urls["v1"]
        IMAGENET1K_V2 = urls["v2"]

        @property
        def url(self) -> str:
            return self.value

    TinyNet_Weights.DEFAULT = TinyNet_Weights.IMAGENET1K_V2
    models = types.ModuleType("torchvision.models")
    models.list_models = lambda module=None: ["tinynet"]
    models.get_model_weights = lambda name: {"tinynet": TinyNet_Weights}[name]
    torchvision = types.ModuleType("torchvision")
    torchvision.models = models
    return torchvision


def test_torchvision_missing_is_a_clear_import_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "torchvision", None)
    monkeypatch.setitem(sys.modules, "torchvision.models", None)
    with pytest.raises(
        ImportError, match=r"torchvision:// checkpoints need torchvision.*pip install torchvision"
    ):
        _load_checkpoint("torchvision://resnet50")


def test_torchvision_names(server, torch_home, monkeypatch, current_log):
    torch.save({"w": torch.ones(1)}, server.root / "tiny-v1.pth")
    torch.save({"w": torch.full((1,), 2.0)}, server.root / "tiny-v2.pth")
    torchvision = fake_torchvision(
        {"v1": f"{server.url}/tiny-v1.pth", "v2": f"{server.url}/tiny-v2.pth"}
    )
    monkeypatch.setitem(sys.modules, "torchvision", torchvision)
    monkeypatch.setitem(sys.modules, "torchvision.models", torchvision.models)
    assert _load_checkpoint("torchvision://tinynet")["w"].item() == 1.0  # the first weights
    assert _load_checkpoint("torchvision://tinynet.default")["w"].item() == 2.0
    assert _load_checkpoint("torchvision://tinynet.imagenet1k_v1")["w"].item() == 1.0
    assert _load_checkpoint("modelzoo://tinynet.imagenet1k_v2")["w"].item() == 2.0
    assert '"modelzoo://" is deprecated' in "\n".join(current_log.messages)
    with pytest.raises(
        KeyError, match=r"torchvision://tinynte is not a known model\. Did you mean 'tinynet'"
    ):
        _load_checkpoint("torchvision://tinynte")
