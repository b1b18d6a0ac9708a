"""save_checkpoint and loading whole checkpoints: torch and safetensors files, local and on
treadle.fileio backends, written atomically, loaded with weights_only unless asked."""

from __future__ import annotations

import collections
import json
import os
import pickle

import pytest
import torch
from torch import nn

from treadle import fileio
from treadle.fileio import UnknownBackendError
from treadle.runner.checkpoint import (
    UnsafeCheckpointError,
    _load_checkpoint,
    load_checkpoint,
    save_checkpoint,
)


def toy() -> nn.Module:
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4), nn.Linear(4, 2))


def assert_same_weights(a: dict, b: dict) -> None:
    assert list(a) == list(b) or sorted(a) == sorted(b)
    for key in a:
        assert torch.equal(a[key], b[key]), key


class Opaque:
    """A class a weights_only load refuses to build."""


def test_pth_round_trip_keeps_everything(tmp_path):
    model = toy()
    checkpoint = {
        "state_dict": model.state_dict(),
        "meta": {"epoch": 3, "iter": 30, "cfg": "model = dict()"},
        "optimizer": torch.optim.SGD(model.parameters(), lr=0.1).state_dict(),
    }
    save_checkpoint(checkpoint, tmp_path / "deep" / "epoch_3.pth")  # parents are made
    loaded = _load_checkpoint(str(tmp_path / "deep" / "epoch_3.pth"))
    assert loaded["meta"] == checkpoint["meta"]
    assert loaded["optimizer"]["param_groups"] == checkpoint["optimizer"]["param_groups"]
    assert_same_weights(loaded["state_dict"], checkpoint["state_dict"])


def test_load_checkpoint_fills_the_model_and_returns_the_checkpoint(tmp_path):
    source, target = toy(), nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4), nn.Linear(4, 2))
    save_checkpoint({"state_dict": source.state_dict(), "meta": {"epoch": 1}}, tmp_path / "a.pth")
    checkpoint = load_checkpoint(target, str(tmp_path / "a.pth"), map_location="cpu")
    assert checkpoint["meta"] == {"epoch": 1}
    assert_same_weights(target.state_dict(), source.state_dict())


def test_a_failed_save_leaves_the_previous_file_and_no_temporary(tmp_path):
    path = tmp_path / "epoch_1.pth"
    save_checkpoint({"state_dict": {"w": torch.ones(2)}}, path)
    before = path.read_bytes()
    with pytest.raises((pickle.PicklingError, AttributeError, TypeError)):
        save_checkpoint({"state_dict": {"w": torch.zeros(2)}, "hook": lambda: None}, path)
    assert path.read_bytes() == before
    assert sorted(os.listdir(tmp_path)) == ["epoch_1.pth"]


def test_a_failed_first_save_leaves_nothing(tmp_path):
    with pytest.raises((pickle.PicklingError, AttributeError, TypeError)):
        save_checkpoint({"hook": lambda: None}, tmp_path / "epoch_1.pth")
    assert os.listdir(tmp_path) == []


def test_memory_backend_round_trip_for_both_formats():
    model = toy()
    for name in ("memory://ckpt/run/epoch_1.pth", "memory://ckpt/run/model.safetensors"):
        save_checkpoint({"state_dict": model.state_dict(), "meta": {"epoch": 1}}, name)
        loaded = _load_checkpoint(name)
        assert loaded["meta"] == {"epoch": 1}
        assert_same_weights(loaded["state_dict"], model.state_dict())


def test_backend_args_and_deprecated_file_client_args(tmp_path):
    save_checkpoint(
        {"w": torch.ones(1)}, str(tmp_path / "a.pth"), backend_args={"backend": "local"}
    )
    save_checkpoint(
        {"w": torch.ones(1)}, str(tmp_path / "b.pth"), file_client_args={"backend": "disk"}
    )
    assert torch.equal(_load_checkpoint(str(tmp_path / "b.pth"))["w"], torch.ones(1))
    with pytest.raises(ValueError, match="cannot be set at the same time"):
        save_checkpoint({}, str(tmp_path / "c.pth"), file_client_args={}, backend_args={})


def test_pavi_is_refused_with_a_clear_error():
    with pytest.raises(NotImplementedError, match=r"pavi:// .* is not supported"):
        save_checkpoint({}, "pavi://model/epoch_1.pth")
    with pytest.raises(NotImplementedError, match=r"pavi:// .* is not supported"):
        _load_checkpoint("pavi://model/epoch_1.pth")


# --- weights_only ---


def test_a_pickled_object_is_refused_naming_the_option(tmp_path):
    path = tmp_path / "full.pth"
    torch.save({"state_dict": {"w": torch.ones(1)}, "extra": Opaque()}, path)
    with pytest.raises(UnsafeCheckpointError, match=r"weights_only=False") as info:
        _load_checkpoint(str(path))
    message = str(info.value)
    assert str(path) in message
    assert "Opaque" in message and "Only load checkpoints you trust" in message
    assert info.value.unsafe_globals == [f"{__name__}.Opaque"]
    assert isinstance(info.value, pickle.UnpicklingError)  # what torch.load raises there


def test_weights_only_false_loads_a_trusted_pickle(tmp_path):
    path = tmp_path / "full.pth"
    torch.save({"state_dict": {"w": torch.ones(1)}, "extra": Opaque()}, path)
    assert isinstance(_load_checkpoint(str(path), weights_only=False)["extra"], Opaque)
    model = nn.Linear(1, 1)
    with pytest.raises(UnsafeCheckpointError, match="weights_only=False"):
        load_checkpoint(model, str(path))
    assert isinstance(load_checkpoint(model, str(path), weights_only=False)["extra"], Opaque)


def test_torch_safe_globals_allow_chosen_classes(tmp_path):
    path = tmp_path / "full.pth"
    torch.save({"extra": Opaque()}, path)
    with torch.serialization.safe_globals([Opaque]):
        assert isinstance(_load_checkpoint(str(path))["extra"], Opaque)


def test_plain_containers_load_with_weights_only(tmp_path):
    checkpoint = {
        "meta": {"seed": 1, "names": ("a", "b"), "lr": [0.1]},
        "od": collections.OrderedDict(w=torch.ones(1)),
    }
    save_checkpoint(checkpoint, tmp_path / "plain.pth")
    loaded = _load_checkpoint(str(tmp_path / "plain.pth"))
    assert loaded["meta"] == checkpoint["meta"]


# --- errors that name the path ---


def test_missing_local_file_names_path_and_backend(tmp_path):
    path = str(tmp_path / "nope.pth")
    with pytest.raises(FileNotFoundError, match=r"local backend.*nope\.pth") as info:
        _load_checkpoint(path)
    assert info.value.filename == path


def test_missing_file_on_a_fileio_backend_names_path_and_backend():
    with pytest.raises(FileNotFoundError, match=r"FsspecBackend.*memory://nowhere/x\.pth"):
        _load_checkpoint("memory://nowhere/x.pth")


def test_a_directory_is_not_a_checkpoint(tmp_path):
    with pytest.raises(IsADirectoryError, match="not a checkpoint file"):
        _load_checkpoint(str(tmp_path))


def test_a_truncated_file_is_named(tmp_path):
    path = tmp_path / "cut.pth"
    save_checkpoint({"w": torch.ones(1000)}, path)
    path.write_bytes(path.read_bytes()[:-100])
    with pytest.raises(RuntimeError, match=r"cut\.pth is not a complete checkpoint"):
        _load_checkpoint(str(path))


def test_an_unknown_scheme_lists_what_is_known():
    with pytest.raises(
        UnknownBackendError, match=r"nope://.*CheckpointLoader's own schemes.*http://"
    ):
        _load_checkpoint("nope://bucket/x.pth")


def test_a_checkpoint_that_is_not_a_dict_is_refused(tmp_path):
    torch.save(torch.ones(2), tmp_path / "tensor.pth")
    with pytest.raises(
        RuntimeError, match=r"No state_dict found in checkpoint file .*tensor\.pth.*Tensor"
    ):
        load_checkpoint(nn.Linear(1, 1), str(tmp_path / "tensor.pth"))


# --- safetensors ---


def test_safetensors_keeps_weights_meta_and_module_versions(tmp_path):
    model = toy()
    meta = {"epoch": 3, "cfg": "x = 1", "dataset_meta": {"classes": ["cat", "dog"]}, "lr": 0.5}
    save_checkpoint({"state_dict": model.state_dict(), "meta": meta}, tmp_path / "m.safetensors")
    loaded = _load_checkpoint(str(tmp_path / "m.safetensors"))
    assert loaded["meta"] == meta
    assert_same_weights(loaded["state_dict"], model.state_dict())
    assert loaded["state_dict"]._metadata == model.state_dict()._metadata


def test_safetensors_file_is_readable_by_safetensors_itself(tmp_path):
    from safetensors import safe_open

    model = toy()
    save_checkpoint(
        {"state_dict": model.state_dict(), "meta": {"epoch": 2}}, tmp_path / "m.safetensors"
    )
    with safe_open(str(tmp_path / "m.safetensors"), framework="pt") as file:
        assert set(file.keys()) == set(model.state_dict())
        metadata = file.metadata()
    assert metadata["format"] == "pt"
    assert json.loads(metadata["treadle.meta"]) == {"epoch": 2}


def test_safetensors_bare_state_dict_and_tied_weights(tmp_path):
    shared = torch.randn(3, 2)
    state_dict = {
        "embed.weight": shared,
        "head.weight": shared,
        "row": shared[0],
        "b": torch.ones(2),
    }
    save_checkpoint(state_dict, tmp_path / "tied.safetensors")
    loaded = _load_checkpoint(str(tmp_path / "tied.safetensors"))
    assert loaded["meta"] == {}
    assert_same_weights(loaded["state_dict"], state_dict)
    # tied weights stay one tensor
    assert loaded["state_dict"]["embed.weight"] is loaded["state_dict"]["head.weight"]


def test_safetensors_from_another_tool_keeps_its_metadata(tmp_path):
    from safetensors.torch import save_file

    save_file(
        {"w": torch.ones(2)},
        str(tmp_path / "hf.safetensors"),
        metadata={"format": "pt", "author": "x"},
    )
    loaded = _load_checkpoint(str(tmp_path / "hf.safetensors"))
    assert loaded["meta"] == {"author": "x"}
    assert torch.equal(loaded["state_dict"]["w"], torch.ones(2))


def test_safetensors_is_recognised_by_content_whatever_the_name(tmp_path):
    save_checkpoint({"w": torch.ones(2)}, tmp_path / "m.safetensors")
    os.rename(tmp_path / "m.safetensors", tmp_path / "download-1234")
    assert torch.equal(
        _load_checkpoint(str(tmp_path / "download-1234"))["state_dict"]["w"], torch.ones(2)
    )


def test_safetensors_refuses_what_it_cannot_hold(tmp_path):
    path = str(tmp_path / "m.safetensors")
    with pytest.raises(ValueError, match=r"also holds 'optimizer'.*\.pth file"):
        save_checkpoint({"state_dict": {"w": torch.ones(1)}, "optimizer": {}}, path)
    with pytest.raises(TypeError, match=r"state_dict\['step'\] is a int.*tensors only"):
        save_checkpoint({"state_dict": {"step": 3}}, path)
    with pytest.raises(TypeError, match=r"meta\['when'\] is a Opaque"):
        save_checkpoint({"state_dict": {"w": torch.ones(1)}, "meta": {"when": Opaque()}}, path)
    with pytest.raises(TypeError, match="a dict of tensors or"):
        save_checkpoint([torch.ones(1)], path)
    assert not os.path.exists(path)
    assert os.listdir(tmp_path) == []


def test_safetensors_map_location(tmp_path):
    path = str(tmp_path / "m.safetensors")
    save_checkpoint({"w": torch.ones(1)}, path)
    assert (
        _load_checkpoint(path, map_location=torch.device("cpu"))["state_dict"]["w"].device.type
        == "cpu"
    )
    with pytest.raises(
        TypeError, match=r"map_location must be None, a str or a torch.device, got function"
    ):
        _load_checkpoint(path, map_location=lambda storage, location: storage)


def test_fileio_file_is_loaded_from_bytes_put_there():
    model = toy()
    save_checkpoint({"state_dict": model.state_dict()}, "memory://ckpt/x/epoch_1.pth")
    assert fileio.exists("memory://ckpt/x/epoch_1.pth")
    target = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4), nn.Linear(4, 2))
    load_checkpoint(target, "memory://ckpt/x/epoch_1.pth", strict=True)
    assert_same_weights(target.state_dict(), model.state_dict())


def test_legacy_torch_files_load_and_are_refused_the_same_way(tmp_path):
    path = tmp_path / "legacy.pth"
    torch.save({"w": torch.ones(2)}, path, _use_new_zipfile_serialization=False)
    assert torch.equal(_load_checkpoint(str(path))["w"], torch.ones(2))
    torch.save({"extra": Opaque()}, path, _use_new_zipfile_serialization=False)
    with pytest.raises(
        UnsafeCheckpointError, match=r"legacy\.pth holds .*Opaque.*weights_only=False"
    ):
        _load_checkpoint(str(path))


def test_a_pickle_on_a_fileio_backend_is_refused_naming_the_uri():
    save_checkpoint({"extra": Opaque()}, "memory://unsafe/full.pth")
    with pytest.raises(UnsafeCheckpointError, match=r"memory://unsafe/full\.pth holds"):
        _load_checkpoint("memory://unsafe/full.pth")


def test_a_file_that_is_no_checkpoint_is_named(tmp_path):
    (tmp_path / "page.pth").write_text("<html>404 Not Found</html>")
    with pytest.raises(
        pickle.UnpicklingError,
        match=r"checkpoint .*page\.pth: .*Unsupported operand.*not a torch checkpoint",
    ):
        _load_checkpoint(str(tmp_path / "page.pth"))
    with pytest.raises(pickle.UnpicklingError, match=r"cannot read the checkpoint .*page\.pth"):
        _load_checkpoint(str(tmp_path / "page.pth"), weights_only=False)
    (tmp_path / "empty.pth").write_bytes(b"")
    with pytest.raises(RuntimeError, match=r"empty\.pth is not a complete checkpoint"):
        _load_checkpoint(str(tmp_path / "empty.pth"))
