"""WandbVisBackend against the real wandb in offline mode: the run file read back."""

from __future__ import annotations

import sys
import threading

import numpy as np
import pytest
from visual_tracker_readers import (
    modules_imported_by_building,
    offline_wandb_environment,
    read_wandb_run,
)

from treadle.visual.backends.wandb_backend import WandbVisBackend


@pytest.fixture
def offline_wandb(tmp_path, monkeypatch):
    """wandb offline, every file it writes (run, cache, settings) under tmp_path."""
    return offline_wandb_environment(tmp_path, monkeypatch)


class DuckConfig:
    """What add_config reads from a treadle or MMEngine Config."""

    pretty_text = "lr = 0.01\nmodel = dict(type='ResNet', depth=18)\n"

    def to_dict(self):
        return {"lr": 0.01, "model": {"type": "ResNet", "depth": 18}}


def test_values_and_steps_of_train_and_val_rows_are_all_kept(offline_wandb, tmp_path):
    backend = WandbVisBackend(str(tmp_path / "vis_data"), define_metric_cfg={"acc": "max"})
    # A runner's order: train scalars per iteration, then val scalars per epoch (step 1 < 20).
    backend.add_scalars({"loss": 0.5, "lr": np.float32(0.25)}, step=10)
    backend.add_scalars({"loss": 0.25, "lr": np.float32(0.125)}, step=20)
    backend.add_scalar("acc", 0.75, step=1)
    backend.add_scalar("acc", 0.875, step=2)
    backend.close()

    run = read_wandb_run(tmp_path / "vis_data")
    assert run.series("loss") == [(10, 0.5), (20, 0.25)]
    assert run.series("lr") == [(10, 0.25), (20, 0.125)]
    assert run.series("acc") == [(1, 0.75), (2, 0.875)]
    # W&B's own row counter still grows by one per row, so nothing is dropped.
    assert [row["_step"] for row in run.history] == [0, 1, 2, 3]
    step_metrics = {metric.glob_name or metric.name: metric.step_metric for metric in run.metrics}
    assert step_metrics["*"] == "step"
    assert any(metric.name == "acc" and metric.summary.max for metric in run.metrics)


def test_config_image_and_code_are_recorded(offline_wandb, tmp_path):
    (tmp_path / "train.py").write_text("print('training')\n")
    backend = WandbVisBackend(str(tmp_path / "vis_data"), log_code_name="treadle-code")
    backend.add_config(DuckConfig())
    image = np.zeros((12, 16, 3), dtype=np.uint8)
    image[:, :, 1] = 255
    backend.add_image("pred", image, step=7)
    backend.close()

    run = read_wandb_run(tmp_path / "vis_data")
    assert run.config["lr"] == 0.01
    assert run.config["model"] == {"type": "ResNet", "depth": 18}
    (row,) = [row for row in run.history if "pred" in row]
    assert row["step"] == 7
    assert (row["pred"]["_type"], row["pred"]["width"], row["pred"]["height"]) == (
        "image-file",
        16,
        12,
    )
    from PIL import Image

    (png,) = (tmp_path / "vis_data").glob(f"wandb/offline-run-*/files/{row['pred']['path']}")
    assert np.array_equal(np.asarray(Image.open(png).convert("RGB")), image)
    assert any(artifact.name == "treadle-code" for artifact in run.artifacts)


def test_add_graph_watches_the_model(offline_wandb, tmp_path):
    torch = pytest.importorskip("torch")
    model = torch.nn.Linear(3, 2)
    backend = WandbVisBackend(str(tmp_path / "vis_data"), watch_kwargs={"log_freq": 1})
    backend.add_graph(model, [])
    model(torch.ones(4, 3)).sum().backward()
    backend.add_scalar("loss", 1.0, step=1)
    backend.close()

    run = read_wandb_run(tmp_path / "vis_data")
    assert any(key.startswith("gradients/") for row in run.history for key in row)


def test_nothing_is_imported_or_written_before_the_first_add(offline_wandb, tmp_path):
    save_dir = tmp_path / "vis_data"
    cfg = {"type": "WandbVisBackend", "save_dir": str(save_dir)}
    assert modules_imported_by_building(cfg, ["wandb"], tmp_path) == []
    assert not save_dir.exists()


def test_close_finishes_the_run_and_is_idempotent(offline_wandb, tmp_path):
    WandbVisBackend(str(tmp_path / "never_used")).close()  # never initialized: nothing to do
    assert not (tmp_path / "never_used").exists()

    threads_before = set(threading.enumerate())
    backend = WandbVisBackend(str(tmp_path / "vis_data"))
    backend.add_scalar("loss", 0.5, step=3)
    assert offline_wandb.run is not None
    backend.close()
    backend.close()
    # The service process and its threads are shut down once no run is left.
    assert not [thread for thread in threading.enumerate() if thread not in threads_before]
    assert offline_wandb.run is None
    assert read_wandb_run(tmp_path / "vis_data").series("loss") == [(3, 0.5)]


def test_close_leaves_another_open_run_of_the_process_working(offline_wandb, tmp_path):
    other = offline_wandb.init(dir=str(tmp_path / "other"), reinit="create_new")
    backend = WandbVisBackend(str(tmp_path / "vis_data"), init_kwargs={"reinit": "create_new"})
    backend.add_scalar("loss", 0.5, step=1)
    backend.close()  # must not shut down the service the other run still uses
    other.log({"acc": 0.25})
    other.finish()
    offline_wandb.teardown()

    assert read_wandb_run(tmp_path / "vis_data").series("loss") == [(1, 0.5)]
    assert read_wandb_run(tmp_path / "other").series("acc", step_key="_step") == [(0, 0.25)]


def test_a_non_numeric_scalar_is_refused_naming_its_key(offline_wandb, tmp_path):
    backend = WandbVisBackend(str(tmp_path / "vis_data"))
    with pytest.raises(TypeError, match="scalar 'acc' must be a number"):
        backend.add_scalars({"loss": 0.5, "acc": "high"}, step=1)
    with pytest.raises(TypeError, match=r"step must be an integer, got float: 2\.5"):
        backend.add_scalars({"loss": 0.5}, step=2.5)
    backend.close()
    assert read_wandb_run(tmp_path / "vis_data").history == []


def test_a_step_key_in_the_dict_is_the_step_as_in_the_local_backend(offline_wandb, tmp_path):
    # MMEngine logged such a dict without error; it used to raise ValueError here.
    backend = WandbVisBackend(str(tmp_path / "vis_data"))
    backend.add_scalars({"loss": 0.5, "step": 30}, step=1)
    backend.close()
    assert read_wandb_run(tmp_path / "vis_data").series("loss") == [(30, 0.5)]


def test_numpy_and_tensor_steps_are_steps(offline_wandb, tmp_path):
    torch = pytest.importorskip("torch")
    backend = WandbVisBackend(str(tmp_path / "vis_data"))
    backend.add_scalars({"loss": 0.5}, step=np.int64(4))
    backend.add_scalar("loss", 0.25, step=torch.tensor(5))
    backend.close()
    assert read_wandb_run(tmp_path / "vis_data").series("loss") == [(4, 0.5), (5, 0.25)]


def test_a_bad_image_is_refused_naming_it(offline_wandb, tmp_path):
    backend = WandbVisBackend(str(tmp_path / "vis_data"))
    with pytest.raises(ValueError, match=r"image 'pred' must have shape \(H, W, 3\)"):
        backend.add_image("pred", np.zeros((3, 8, 8, 2), dtype=np.uint8))
    backend.close()


def test_define_metric_cfg_of_the_wrong_type_is_refused():
    with pytest.raises(ValueError, match=r"define_metric_cfg should be dict or list.*got str"):
        WandbVisBackend("vis_data", define_metric_cfg="acc")


def test_a_missing_wandb_names_the_extra(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "wandb", None)
    backend = WandbVisBackend(str(tmp_path / "vis_data"))
    with pytest.raises(ImportError, match=r"pip install treadle-visual\[wandb\]"):
        backend.add_scalar("loss", 0.5)
