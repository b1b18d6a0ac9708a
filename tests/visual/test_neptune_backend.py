"""NeptuneVisBackend against the real neptune in offline mode: the offline queue read back."""

from __future__ import annotations

import base64
import io
import sys
import threading

import numpy as np
import pytest
from visual_tracker_readers import (
    NEPTUNE_QUIET_RUN,
    modules_imported_by_building,
    neptune_series,
    read_neptune_operations,
)

from treadle.visual.backends.neptune_backend import NeptuneVisBackend

QUIET_RUN = NEPTUNE_QUIET_RUN


@pytest.fixture
def offline_neptune(tmp_path, monkeypatch):
    """neptune with its data directory and HOME under tmp_path, no project, no token."""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("NEPTUNE_DATA_DIRECTORY", str(tmp_path / "neptune_data"))
    for name in ("NEPTUNE_MODE", "NEPTUNE_PROJECT", "NEPTUNE_API_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)
    return pytest.importorskip("neptune")


class DuckConfig:
    """What add_config reads from a treadle or MMEngine Config."""

    pretty_text = "lr = 0.01\nmodel = dict(type='ResNet', depth=18)\n"

    def to_dict(self):
        return {"lr": 0.01, "model": {"type": "ResNet", "depth": 18}}


def test_scalars_config_and_images_are_read_back_offline_by_default(offline_neptune, tmp_path):
    backend = NeptuneVisBackend()  # no project and no token: offline, as MMEngine documents
    backend.add_scalars({"loss": 0.5, "lr": np.float32(0.25)}, step=10)
    backend.add_scalars({"loss": 0.25, "lr": np.float32(0.125)}, step=20)
    backend.add_scalar("val/acc", 0.75, step=1)
    backend.add_config(DuckConfig())
    image = np.zeros((12, 16, 3), dtype=np.uint8)
    image[:, :, 1] = 1  # dark: Neptune's range guessing would have scaled it by 255
    backend.add_image("pred", image, step=7)
    backend.add_image("target", image, step=7)  # same step, another name: kept too
    backend.close()

    operations = read_neptune_operations(tmp_path / "neptune_data")
    assert neptune_series(operations, "loss") == [(10, 0.5), (20, 0.25)]
    assert neptune_series(operations, "lr") == [(10, 0.25), (20, 0.125)]
    assert neptune_series(operations, "val/acc") == [(1, 0.75)]
    from PIL import Image

    for name in ("pred", "target"):
        ((step, value),) = neptune_series(operations, f"images/{name}")
        pixels = np.asarray(Image.open(io.BytesIO(base64.b64decode(value.data))).convert("RGB"))
        assert step == 7
        assert np.array_equal(pixels, image)
    (upload,) = [op for op in operations if list(op.path) == ["config"]]
    (run_dir,) = (tmp_path / "neptune_data").glob("offline/run__*")
    assert (run_dir / "upload_path" / upload.tmp_file_name).read_text() == DuckConfig.pretty_text


def test_nothing_is_imported_or_written_before_the_first_add(offline_neptune, tmp_path):
    cfg = {"type": "NeptuneVisBackend", "init_kwargs": QUIET_RUN}
    assert modules_imported_by_building(cfg, ["neptune"], tmp_path) == []
    assert not (tmp_path / "neptune_data").exists()


def test_close_ends_the_background_threads_and_is_idempotent(offline_neptune, tmp_path):
    NeptuneVisBackend().close()  # never initialized: nothing to stop
    assert not (tmp_path / "neptune_data").exists()

    threads_before = set(threading.enumerate())
    backend = NeptuneVisBackend(init_kwargs=QUIET_RUN)
    backend.add_scalar("loss", 0.5, step=3)
    assert set(threading.enumerate()) - threads_before  # Neptune's ping and sync threads
    backend.close()
    backend.close()
    assert not [thread for thread in threading.enumerate() if thread not in threads_before]
    operations = read_neptune_operations(tmp_path / "neptune_data")
    assert neptune_series(operations, "loss") == [(3, 0.5)]


def test_a_non_numeric_scalar_is_refused_naming_its_key(offline_neptune, tmp_path):
    backend = NeptuneVisBackend(init_kwargs=QUIET_RUN)
    with pytest.raises(TypeError, match="scalar 'acc' must be a number"):
        backend.add_scalars({"loss": 0.5, "acc": None}, step=1)
    with pytest.raises(ValueError, match=r"image 'pred' must have shape \(H, W, 3\)"):
        backend.add_image("pred", np.zeros((3, 8, 8, 2), dtype=np.uint8))
    backend.close()
    assert neptune_series(read_neptune_operations(tmp_path / "neptune_data"), "loss") == []


def test_a_missing_neptune_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "neptune", None)
    backend = NeptuneVisBackend()
    with pytest.raises(ImportError, match=r"pip install treadle-visual\[neptune\]"):
        backend.add_scalar("loss", 0.5)


def test_numpy_and_tensor_steps_are_steps(offline_neptune, tmp_path):
    # Neptune's append refuses a step that is not a Python int or float.
    torch = pytest.importorskip("torch")
    backend = NeptuneVisBackend(init_kwargs=QUIET_RUN)
    backend.add_scalars({"loss": 0.5}, step=np.int64(4))
    backend.add_scalar("loss", 0.25, step=torch.tensor(5))
    backend.add_image("pred", np.zeros((4, 4, 3), dtype=np.uint8), step=np.int32(6))
    with pytest.raises(TypeError, match=r"step must be an integer, got float: 2\.5"):
        backend.add_scalar("loss", 0.125, step=2.5)
    backend.close()

    operations = read_neptune_operations(tmp_path / "neptune_data")
    assert neptune_series(operations, "loss") == [(4, 0.5), (5, 0.25)]
    assert [step for step, _ in neptune_series(operations, "images/pred")] == [6]
