"""DVCLiveVisBackend against the real dvclive: its files read back with dvclive's readers."""

from __future__ import annotations

import sys

import numpy as np
import pytest
from visual_tracker_readers import modules_imported_by_building, read_dvclive_history

from treadle.visual.backends.dvclive_backend import DVCLiveVisBackend


@pytest.fixture
def dvclive(tmp_path, monkeypatch):
    """dvclive run from tmp_path (not a Git repository), DVC's global and site dirs in it."""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "home" / ".config"))
    monkeypatch.setenv("DVC_SITE_CACHE_DIR", str(tmp_path / "dvc_site_cache"))
    monkeypatch.setenv("DVC_NO_ANALYTICS", "1")
    monkeypatch.delenv("DVC_ROOT", raising=False)  # as if run by `dvc repro`
    monkeypatch.chdir(tmp_path)
    return pytest.importorskip("dvclive")


class DuckConfig:
    """What add_config reads from a treadle or MMEngine Config."""

    def __init__(self, **values):
        self.values = values
        self.pretty_text = repr(values)

    def to_dict(self):
        return dict(self.values)


def test_scalars_params_and_images_are_read_back(dvclive, tmp_path):
    from dvclive.serialize import load_yaml
    from dvclive.utils import parse_json
    from PIL import Image

    save_dir = tmp_path / "vis_data"
    backend = DVCLiveVisBackend(str(save_dir))
    backend.add_scalars({"loss": 0.5, "lr": np.float32(0.25)}, step=10)
    backend.add_scalars({"loss": 0.25, "lr": np.float32(0.125)}, step=20)
    backend.add_scalar("val/acc", 0.75, step=1)
    backend.add_config(
        DuckConfig(lr=0.01, scales=(1, 2), mean=np.array([0.5, 0.25]), optim=dict(type=Image.Image))
    )
    image = np.zeros((12, 16, 3), dtype=np.uint8)
    image[:, :, 1] = 255
    backend.add_image("pred", image, step=7)
    backend.add_image("pred", image // 2, step=8)  # a later step keeps the earlier image
    backend.close()

    assert read_dvclive_history(save_dir, "loss") == [(10, 0.5), (20, 0.25)]
    assert read_dvclive_history(save_dir, "lr") == [(10, 0.25), (20, 0.125)]
    assert read_dvclive_history(save_dir, "val/acc") == [(1, 0.75)]
    assert parse_json(save_dir / "metrics.json")["loss"] == 0.25
    assert load_yaml(save_dir / "params.yaml") == {
        "lr": 0.01,
        "scales": [1, 2],
        "mean": [0.5, 0.25],
        "optim": {"type": str(Image.Image)},
    }
    for step, expected in ((7, image), (8, image // 2)):
        stored = save_dir / "plots" / "images" / "pred" / f"{step}.png"
        assert np.array_equal(np.asarray(Image.open(stored).convert("RGB")), expected)
    # No DVC repository here: plain files only, dvc.yaml kept in save_dir, no `dvc init`.
    assert (save_dir / "dvc.yaml").is_file()
    assert not (tmp_path / "dvc.yaml").exists() and not (tmp_path / ".dvc").exists()


def test_in_a_dvc_repository_images_and_artifacts_are_tracked(dvclive, tmp_path):
    from dvc.repo import Repo

    Repo.init(str(tmp_path), no_scm=True).close()
    save_dir = tmp_path / "vis_data"
    save_dir.mkdir()
    (save_dir / "config.py").write_text("lr = 0.01\n")  # what the local backend leaves there
    (save_dir / "notes.txt").write_text("not an artifact\n")
    backend = DVCLiveVisBackend(str(save_dir))
    backend.add_scalar("loss", 0.5, step=1)
    backend.add_image("pred", np.zeros((4, 4, 3), dtype=np.uint8), step=1)
    backend.close()

    assert (save_dir / "config.py.dvc").is_file()
    assert not (save_dir / "notes.txt.dvc").exists()
    assert not (save_dir / "metrics.json.dvc").exists()  # DVCLive's own output
    assert (save_dir / "plots" / "images.dvc").is_file()  # cache_images, MMEngine's default
    assert read_dvclive_history(save_dir, "loss") == [(1, 0.5)]


def test_nothing_is_imported_or_written_before_the_first_add(dvclive, tmp_path):
    save_dir = tmp_path / "vis_data"
    cfg = {"type": "DVCLiveVisBackend", "save_dir": str(save_dir)}
    assert modules_imported_by_building(cfg, ["dvclive", "dvc"], tmp_path) == []
    assert not save_dir.exists()


def test_close_writes_the_summary_and_is_idempotent(dvclive, tmp_path):
    DVCLiveVisBackend(str(tmp_path / "never_used")).close()  # never initialized
    assert not (tmp_path / "never_used").exists()

    save_dir = tmp_path / "vis_data"
    backend = DVCLiveVisBackend(str(save_dir))
    backend.add_scalar("loss", 0.5, step=3)
    assert not (save_dir / "metrics.json").exists()  # the summary is written at close
    backend.close()
    backend.close()
    assert read_dvclive_history(save_dir, "loss") == [(3, 0.5)]
    assert (save_dir / "metrics.json").is_file()


def test_a_non_numeric_scalar_is_refused_naming_its_key(dvclive, tmp_path):
    save_dir = tmp_path / "vis_data"
    backend = DVCLiveVisBackend(str(save_dir))
    with pytest.raises(TypeError, match="scalar 'acc' must be a number"):
        backend.add_scalars({"loss": 0.5, "acc": "high"}, step=1)
    with pytest.raises(ValueError, match=r"image 'pred' must have shape \(H, W, 3\)"):
        backend.add_image("pred", np.zeros((3, 8, 8, 2), dtype=np.uint8))
    backend.close()
    assert not (save_dir / "plots" / "metrics" / "loss.tsv").exists()  # no partial step


def test_a_missing_dvclive_names_the_extra(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "dvclive", None)
    backend = DVCLiveVisBackend(str(tmp_path / "vis_data"))
    with pytest.raises(ImportError, match=r"pip install treadle-visual\[dvclive\]"):
        backend.add_scalar("loss", 0.5)


def test_numpy_and_tensor_steps_are_steps(dvclive, tmp_path):
    torch = pytest.importorskip("torch")
    save_dir = tmp_path / "vis_data"
    backend = DVCLiveVisBackend(str(save_dir))
    backend.add_scalars({"loss": 0.5}, step=np.int64(4))
    backend.add_scalar("loss", 0.25, step=torch.tensor(5))
    # int() used to turn 2.5 into step 2 without a word.
    with pytest.raises(TypeError, match=r"step must be an integer, got float: 2\.5"):
        backend.add_scalar("loss", 0.125, step=2.5)
    backend.close()
    assert read_dvclive_history(save_dir, "loss") == [(4, 0.5), (5, 0.25)]
