"""One step axis in MLflow and Aim too (issue 34, after issue 20's TensorBoard and W&B): through
a real Runner, validation metrics land at the training iteration they ran after, beside the
train scalars of that iteration, read back offline with each tracker's own client."""

from __future__ import annotations

from pathlib import Path

import pytest
from runner_toy_model import toy_cfg

from treadle.runner.runner import Runner

# 3 epochs of 4 iterations, a train line every 2, validation after each epoch (toy_cfg).
TRAIN_STEPS = [2, 4, 6, 8, 10, 12]
VAL_STEPS = [4, 8, 12]


def train(work_dir: Path, backend: dict) -> Runner:
    runner = Runner(
        **toy_cfg(
            work_dir,
            visualizer=dict(type="Visualizer", vis_backends=[backend]),
            default_hooks=dict(logger=dict(type="LoggerHook", interval=2)),
        )
    )
    runner.train()
    return runner


@pytest.fixture
def private_home(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)


def test_epoch_based_run_in_mlflow_read_back_with_its_client(tmp_path, monkeypatch, private_home):
    mlflow = pytest.importorskip("mlflow")
    from mlflow.tracking import MlflowClient

    monkeypatch.setenv("MLFLOW_DISABLE_TELEMETRY", "true")
    monkeypatch.setenv("DO_NOT_TRACK", "true")
    # The backend sets these itself; recorded first so that monkeypatch restores them.
    for name in ("MLFLOW_ALLOW_FILE_STORE", "MLFLOW_TRACKING_URI"):
        monkeypatch.setenv(name, "")
        monkeypatch.delenv(name)
    try:
        runner = train(tmp_path / "work", dict(type="MLflowVisBackend"))
    finally:
        while mlflow.active_run() is not None:
            mlflow.end_run()
        mlflow.set_tracking_uri(None)
    # The default store: a file store in the run's vis_data folder.
    store = Path(runner.log_dir, "vis_data").resolve().as_uri()
    client = MlflowClient(tracking_uri=store)
    (run,) = client.search_runs([client.get_experiment_by_name("Default").experiment_id])

    def points(key):
        history = client.get_metric_history(run.info.run_id, key)
        return sorted((metric.step, metric.value) for metric in history)

    assert [step for step, _ in points("loss")] == TRAIN_STEPS
    assert [step for step, _ in points("acc")] == VAL_STEPS
    assert [step for step, _ in points("val/time")] == VAL_STEPS
    # The epoch on the same axis: each train line's, and the validation's after its epoch.
    epochs = [(2, 1), (4, 1), (4, 1), (6, 2), (8, 2), (8, 2), (10, 3), (12, 3), (12, 3)]
    assert points("epoch") == epochs


def test_epoch_based_run_in_aim_read_back_from_its_repository(tmp_path, monkeypatch, private_home):
    aim = pytest.importorskip("aim")
    from aim.sdk.index_manager import RepoIndexManager
    from aim.storage.context import Context

    monkeypatch.setenv("AIM_UI_TELEMETRY_ENABLED", "0")
    aim.Repo.from_path(str(tmp_path / "repo"), init=True)
    # No system-metrics thread and no terminal capture: nothing runs beside the training.
    init = dict(
        repo=str(tmp_path / "repo"), system_tracking_interval=None, capture_terminal_logs=False
    )
    train(tmp_path / "work", dict(type="AimVisBackend", init_kwargs=init))
    # The run is closed by then (LoggerHook.after_run), and the repository holds only it.
    repo = aim.Repo.from_path(str(tmp_path / "repo"))
    (run_hash,) = repo.list_all_runs()
    # Aim reads runs through an index that `aim up` updates; this does it without a server.
    RepoIndexManager.get_index_manager(repo).index(run_hash)
    run = repo.get_run(run_hash)

    def points(name):
        steps, (_values, epochs, *_) = run.get_metric(name, Context({})).data.items_list()
        return list(zip(steps, epochs, strict=True))

    # Aim's own epoch field of each point: validation after epoch e is at e, as the train lines.
    assert points("loss") == [(2, 1), (4, 1), (6, 2), (8, 2), (10, 3), (12, 3)]
    assert points("acc") == [(4, 1), (8, 2), (12, 3)]
    assert [step for step, _ in points("val/time")] == VAL_STEPS
