"""ClearMLVisBackend against the real clearml in offline mode: the offline session read back."""

from __future__ import annotations

import io
import sys
import threading

import numpy as np
import pytest
from visual_tracker_readers import modules_imported_by_building, read_clearml_session

from treadle.visual.backends.clearml_backend import ClearMLVisBackend

# What ClearML would otherwise hook into this (shared) test process: frameworks, stdout,
# argparse, a resource-monitor thread.
QUIET_TASK = dict(
    project_name="treadle-test",
    task_name="backend",
    reuse_last_task_id=False,
    auto_connect_frameworks=False,
    auto_connect_streams=False,
    auto_connect_arg_parser=False,
    auto_resource_monitoring=False,
)


@pytest.fixture
def offline_clearml(tmp_path, monkeypatch):
    """clearml offline, its cache (where offline sessions go) and HOME under tmp_path."""
    # In-process reporting: the default subprocess reporter makes Task.close() wait ~11 s.
    config_file = tmp_path / "clearml.conf"
    config_file.write_text("sdk { development { report_use_subprocess: false } }\n")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("CLEARML_CONFIG_FILE", str(config_file))
    monkeypatch.setenv("CLEARML_CACHE_DIR", str(tmp_path / "clearml_cache"))
    monkeypatch.setenv("CLEARML_OFFLINE_MODE", "1")
    monkeypatch.chdir(tmp_path)
    clearml = pytest.importorskip("clearml")
    # clearml reads CLEARML_OFFLINE_MODE once, at import, which may have happened already. It
    # stays offline after the test: going back online makes every session try to log in.
    clearml.Task.set_offline(True)
    return clearml


class DuckConfig:
    """What add_config reads from a treadle or MMEngine Config."""

    def __init__(self, **values):
        self.values = values
        self.pretty_text = repr(values)

    def to_dict(self):
        return dict(self.values)


def test_scalars_config_and_image_are_read_back(offline_clearml, tmp_path):
    backend = ClearMLVisBackend(init_kwargs=QUIET_TASK)
    backend.add_scalars({"loss": 0.5, "lr": np.float32(0.25)}, step=10)
    backend.add_scalars({"loss": 0.25, "lr": np.float32(0.125)}, step=20)
    backend.add_scalar("acc", 0.75, step=1)  # a val step lower than the train steps
    backend.add_config(DuckConfig(lr=0.01, model={"type": "ResNet", "depth": 18}))
    image = np.zeros((12, 16, 3), dtype=np.uint8)
    image[:, :, 1] = 255
    backend.add_image("pred", image, step=7)
    backend.close()

    session = read_clearml_session(tmp_path / "clearml_cache")
    assert session.scalars("loss") == [(10, 0.5), (20, 0.25)]
    assert session.scalars("lr") == [(10, 0.25), (20, 0.125)]
    assert session.scalars("acc") == [(1, 0.75)]
    assert session.configuration() == {"lr": 0.01, "model": {"type": "ResNet", "depth": 18}}
    (event,) = session.images()
    assert (event["metric"], event["variant"], event["iter"]) == ("pred", "pred", 7)
    (stored,) = [name for name in session.names if name.endswith(".jpeg")]
    import zipfile

    from PIL import Image

    (zip_path,) = (tmp_path / "clearml_cache").glob("offline/*.zip")
    with zipfile.ZipFile(zip_path) as archive:
        pixels = np.asarray(Image.open(io.BytesIO(archive.read(stored))).convert("RGB"))
    assert pixels.shape == (12, 16, 3)
    assert np.abs(pixels.astype(int) - image).max() <= 8  # JPEG: close, not exact


def test_close_uploads_the_work_dir_files_with_the_artifact_suffixes(offline_clearml, tmp_path):
    work_dir = tmp_path / "work_dir"
    (work_dir / "sub").mkdir(parents=True)
    (work_dir / "config.py").write_text("lr = 0.01\n")
    (work_dir / "epoch_1.pth").write_bytes(b"weights")
    (work_dir / "notes.txt").write_text("not an artifact\n")
    (work_dir / "sub" / "deeper.py").write_text("# not in the top folder\n")
    backend = ClearMLVisBackend(init_kwargs=QUIET_TASK)
    backend.add_config(DuckConfig(work_dir=str(work_dir)))
    backend.close()

    artifacts = read_clearml_session(tmp_path / "clearml_cache").task["execution"]["artifacts"]
    # ClearML adds its own `auxiliary_*` artifacts (a git diff too large to keep in the task,
    # when the tests run in a checkout with uncommitted changes): not the backend's uploads.
    uploaded = [a["key"] for a in artifacts if not a["key"].startswith("auxiliary_")]
    assert sorted(uploaded) == ["config.py", "epoch_1.pth"]


def test_nothing_is_imported_or_written_before_the_first_add(offline_clearml, tmp_path):
    cfg = {"type": "ClearMLVisBackend", "init_kwargs": QUIET_TASK}
    assert modules_imported_by_building(cfg, ["clearml"], tmp_path) == []
    assert not (tmp_path / "clearml_cache").exists()


def test_close_ends_the_task_and_its_threads_and_is_idempotent(offline_clearml, tmp_path):
    ClearMLVisBackend().close()  # never initialized: nothing to close
    assert not (tmp_path / "clearml_cache").exists()

    threads_before = set(threading.enumerate())
    backend = ClearMLVisBackend(init_kwargs=QUIET_TASK)
    backend.add_scalar("loss", 0.5, step=3)
    assert set(threading.enumerate()) - threads_before  # ClearML's reporting threads
    backend.close()
    backend.close()
    assert not [thread for thread in threading.enumerate() if thread not in threads_before]
    assert read_clearml_session(tmp_path / "clearml_cache").scalars("loss") == [(3, 0.5)]
    assert offline_clearml.Task.current_task() is None


def test_a_non_numeric_scalar_is_refused_naming_its_key(offline_clearml, tmp_path):
    backend = ClearMLVisBackend(init_kwargs=QUIET_TASK)
    with pytest.raises(TypeError, match="scalar 'acc' must be a number"):
        backend.add_scalars({"loss": 0.5, "acc": [1, 2]}, step=1)
    with pytest.raises(ValueError, match=r"image 'pred' must have shape \(H, W, 3\)"):
        backend.add_image("pred", np.zeros((3, 8, 8, 2), dtype=np.uint8))
    backend.close()
    assert read_clearml_session(tmp_path / "clearml_cache").scalars("loss") == []


def test_a_missing_clearml_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "clearml", None)
    backend = ClearMLVisBackend()
    with pytest.raises(ImportError, match=r"pip install treadle-visual\[clearml\]"):
        backend.add_scalar("loss", 0.5)


def test_numpy_and_tensor_steps_are_steps(offline_clearml, tmp_path):
    # Logger.report_scalar refuses anything but a Python int as the iteration.
    torch = pytest.importorskip("torch")
    backend = ClearMLVisBackend(init_kwargs=QUIET_TASK)
    backend.add_scalars({"loss": 0.5}, step=np.int64(4))
    backend.add_scalar("loss", 0.25, step=torch.tensor(5))
    backend.add_image("pred", np.zeros((4, 4, 3), dtype=np.uint8), step=np.int32(6))
    with pytest.raises(TypeError, match=r"step must be an integer, got float: 2\.5"):
        backend.add_scalar("loss", 0.125, step=2.5)
    backend.close()

    session = read_clearml_session(tmp_path / "clearml_cache")
    assert session.scalars("loss") == [(4, 0.5), (5, 0.25)]
    assert [event["iter"] for event in session.images()] == [6]
