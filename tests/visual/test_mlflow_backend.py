"""MLflowVisBackend against the real MLflow: a local file store read back with MlflowClient."""

from __future__ import annotations

import pathlib
import sys

import numpy as np
import pytest

mlflow = pytest.importorskip("mlflow")

from mlflow.exceptions import MlflowException  # noqa: E402
from mlflow.tracking import MlflowClient  # noqa: E402

from treadle.visual.backends.mlflow_backend import MLflowVisBackend, flatten_params  # noqa: E402


@pytest.fixture(autouse=True)
def _offline_private_mlflow(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("MLFLOW_DISABLE_TELEMETRY", "true")
    monkeypatch.setenv("DO_NOT_TRACK", "true")
    # The backend sets these two itself (MLflow writes its tracking URI to the environment);
    # recording them first makes monkeypatch restore them after the test.
    for name in ("MLFLOW_ALLOW_FILE_STORE", "MLFLOW_TRACKING_URI"):
        monkeypatch.setenv(name, "")
        monkeypatch.delenv(name)
    monkeypatch.chdir(tmp_path)
    yield
    while mlflow.active_run() is not None:
        mlflow.end_run()
    mlflow.set_tracking_uri(None)


def store_client(folder) -> MlflowClient:
    return MlflowClient(tracking_uri=pathlib.Path(folder).resolve().as_uri())


def only_run(client, exp_name="Default"):
    experiment = client.get_experiment_by_name(exp_name)
    (run,) = client.search_runs([experiment.experiment_id])
    return run


def metric_points(client, run, key):
    history = sorted(client.get_metric_history(run.info.run_id, key), key=lambda m: m.step)
    return [(metric.step, pytest.approx(metric.value)) for metric in history]


def artifact_paths(client, run, folder=None):
    paths = []
    for entry in client.list_artifacts(run.info.run_id, folder):
        paths += artifact_paths(client, run, entry.path) if entry.is_dir else [entry.path]
    return paths


class DuckConfig:
    """What add_config reads from a treadle or MMEngine Config: pretty_text and to_dict."""

    def __init__(self, work_dir):
        self.work_dir = str(work_dir)
        self.pretty_text = f"work_dir = {self.work_dir!r}\nlr = 0.01\n"

    def to_dict(self):
        return {
            "work_dir": self.work_dir,
            "lr": 0.01,
            "model": {"type": "ResNet", "depth": 18},
            "pipeline": [{"type": "Load"}, {"type": "Resize", "scale": (32, 32)}],
        }


def test_metrics_params_config_and_images_are_read_back_by_mlflow(tmp_path):
    import torch

    work_dir = tmp_path / "work_dir"
    save_dir = work_dir / "20240101_120000" / "vis_data"
    backend = MLflowVisBackend(
        save_dir=str(save_dir),
        exp_name="resnet",
        run_name="first",
        tags={"team": "vision"},
        params={"seed": 7},
    )
    backend.add_config(DuckConfig(work_dir))
    for step in (1, 2, 3):
        backend.add_scalars({"loss": 1.0 / step, "acc": np.float32(step / 10)}, step=step)
    backend.add_scalar("lr", torch.tensor(0.5), step=7)
    backend.add_image("pred", np.zeros((20, 30, 3), dtype=np.uint8), step=5)
    backend.add_image("final.png", np.zeros((4, 6, 3), dtype=np.uint8))
    # Files a runner leaves in its work_dir, which close uploads by their suffix.
    (work_dir / "20240101_120000" / "20240101_120000.log").write_text("epoch 1\n")
    (save_dir / "scalars.json").write_text('{"loss": 1.0, "step": 1}\n')
    (work_dir / "notes.txt").write_text("not an artifact suffix\n")
    backend.close()

    client = store_client(save_dir)  # the default store: a file store in save_dir
    run = only_run(client, "resnet")
    assert run.info.run_name == "first"
    assert run.info.status == "FINISHED"
    assert run.data.tags["team"] == "vision"
    assert run.data.params == {
        "seed": "7",
        "work_dir": str(work_dir),
        "lr": "0.01",
        "model.type": "ResNet",
        "model.depth": "18",
        "pipeline.0.type": "Load",
        "pipeline.1.type": "Resize",
        "pipeline.1.scale": "(32, 32)",
    }
    assert metric_points(client, run, "loss") == [(1, 1.0), (2, 0.5), (3, 1 / 3)]
    assert metric_points(client, run, "acc") == [(1, 0.1), (2, 0.2), (3, 0.3)]
    assert metric_points(client, run, "lr") == [(7, 0.5)]
    config_file = client.download_artifacts(run.info.run_id, "config.py", str(tmp_path / "dl"))
    assert pathlib.Path(config_file).read_text() == DuckConfig(work_dir).pretty_text

    paths = artifact_paths(client, run)
    assert [p for p in paths if p.startswith("images/pred+step+5+") and p.endswith(".png")]
    assert "final.png" in paths
    assert "20240101_120000/20240101_120000.log" in paths
    assert "20240101_120000/vis_data/scalars.json" in paths
    assert not [p for p in paths if p.endswith(("notes.txt", "meta.yaml"))]


def test_file_store_is_allowed_unless_the_user_said_otherwise(tmp_path, monkeypatch):
    import os

    backend = MLflowVisBackend(save_dir=str(tmp_path / "store"))
    backend.add_scalar("loss", 1.0, step=1)
    assert os.environ["MLFLOW_ALLOW_FILE_STORE"] == "true"
    backend.close()

    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "false")
    refused = MLflowVisBackend(save_dir=str(tmp_path / "refused"))
    with pytest.raises(MlflowException, match="MLFLOW_ALLOW_FILE_STORE=true"):
        refused.add_scalar("loss", 1.0, step=1)
    assert os.environ["MLFLOW_ALLOW_FILE_STORE"] == "false"


def test_tracking_uri_takes_the_place_of_save_dir(tmp_path):
    store = tmp_path / "elsewhere"
    backend = MLflowVisBackend(save_dir=str(tmp_path / "vis_data"), tracking_uri=store.as_uri())
    backend.add_scalars({"loss": 0.25}, step=4)
    backend.close()
    assert not (tmp_path / "vis_data").exists()
    client = store_client(store)
    assert metric_points(client, only_run(client), "loss") == [(4, 0.25)]


def test_tracked_config_keys_limit_the_params_and_name_a_missing_key(tmp_path):
    backend = MLflowVisBackend(save_dir=str(tmp_path), tracked_config_keys=["model"])
    backend.add_config({"lr": 0.01, "model": {"depth": 18}})
    with pytest.raises(
        KeyError, match=r"tracked_config_keys \['model'\] are not in the config.*'lr'"
    ):
        backend.add_config({"lr": 0.01})
    backend.close()
    client = store_client(tmp_path)
    run = only_run(client)
    assert run.data.params == {"model.depth": "18"}
    assert "config.py" in artifact_paths(client, run)


def test_nothing_is_imported_or_written_before_the_first_add(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "mlflow", None)
    backend = MLflowVisBackend(save_dir=str(tmp_path / "vis_data"))
    with pytest.raises(
        ImportError,
        match=r"MLflowVisBackend needs the 'mlflow' library.*pip install treadle-visual\[mlflow\]",
    ):
        backend.add_config({"lr": 0.01})
    assert list(tmp_path.iterdir()) == []
    backend.close()  # never opened: nothing to do


def test_non_numeric_scalar_names_the_key_and_logs_nothing_of_that_step(tmp_path):
    backend = MLflowVisBackend(save_dir=str(tmp_path))
    backend.add_scalars({"loss": 1.0}, step=1)
    with pytest.raises(TypeError, match=r"scalar 'acc' must be a number.*str: 'high'"):
        backend.add_scalars({"loss": 0.5, "acc": "high"}, step=2)
    with pytest.raises(TypeError, match=r"scalar 'lr' must be a number"):
        backend.add_scalar("lr", {"value": 0.1}, step=2)
    backend.close()
    client = store_client(tmp_path)
    run = only_run(client)
    assert metric_points(client, run, "loss") == [(1, 1.0)]
    assert set(run.data.metrics) == {"loss"}


def test_bad_image_is_refused_with_its_name(tmp_path):
    backend = MLflowVisBackend(save_dir=str(tmp_path))
    with pytest.raises(TypeError, match=r"image 'pred' must have an integer or float dtype"):
        backend.add_image("pred", np.zeros((4, 4, 3), dtype=complex))
    backend.close()


def test_close_is_idempotent_and_leaves_a_run_the_user_started_open(tmp_path, monkeypatch):
    MLflowVisBackend(save_dir=str(tmp_path)).close()  # never opened: nothing to do
    assert list(tmp_path.iterdir()) == []

    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")
    mlflow.set_tracking_uri(tmp_path.as_uri())
    mlflow.set_experiment("Default")
    with mlflow.start_run(run_name="mine") as mine:
        backend = MLflowVisBackend(save_dir=str(tmp_path), run_name="renamed")
        backend.add_scalar("loss", 0.5, step=2)
        backend.close()
        backend.close()
        assert mlflow.active_run().info.run_id == mine.info.run_id
    client = store_client(tmp_path)
    run = only_run(client)
    assert run.info.run_id == mine.info.run_id
    assert run.info.run_name == "renamed"
    assert metric_points(client, run, "loss") == [(2, 0.5)]


def test_save_dir_or_tracking_uri_is_required():
    with pytest.raises(ValueError, match="MLflowVisBackend needs a save_dir"):
        MLflowVisBackend(save_dir=None)


def test_flatten_params_numbers_lists_of_dicts_only():
    assert flatten_params({"a": {"b": 1, "c": {}}, "p": [{"t": "x"}, 3], "s": [1, 2]}) == {
        "a.b": 1,
        "p.0.t": "x",
        "p.1": 3,
        "s": [1, 2],
    }


def test_registered_under_mmengines_name_and_the_issues_spelling():
    from treadle.visual.registry import VISBACKENDS

    assert VISBACKENDS.get("MLflowVisBackend") is MLflowVisBackend
    assert VISBACKENDS.get("MlflowVisBackend") is MLflowVisBackend


def test_numpy_and_tensor_steps_are_steps(tmp_path):
    # mlflow.log_metric refuses a tensor step (it is not JSON serializable).
    torch = pytest.importorskip("torch")
    backend = MLflowVisBackend(str(tmp_path / "store"))
    backend.add_scalars({"loss": 0.5}, step=np.int64(4))
    backend.add_scalar("loss", 0.25, step=torch.tensor(5))
    with pytest.raises(TypeError, match=r"step must be an integer, got float: 2\.5"):
        backend.add_scalar("loss", 0.125, step=2.5)
    backend.close()

    client = store_client(tmp_path / "store")
    assert metric_points(client, only_run(client), "loss") == [(4, 0.5), (5, 0.25)]
