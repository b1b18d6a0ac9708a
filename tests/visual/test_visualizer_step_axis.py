"""Visualizer.add_scalars(..., global_step=, epoch=): trackers at the training iteration,
LocalVisBackend at the caller's step with the iteration as "iter" (issue 20)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from treadle.visual import BaseVisBackend, LocalVisBackend, Visualizer
from treadle.visual.backends.base import CALLER_STEP_AXIS, GLOBAL_STEP_AXIS
from treadle.visual.step_axis import global_step_routes


class RecordingTracker(BaseVisBackend):
    """A tracker (the default step_axis) that records what it was asked to write."""

    def __init__(self, save_dir=None):
        super().__init__(save_dir)
        self.calls = []

    @property
    def experiment(self):
        return self

    def _init_env(self):
        pass

    def add_scalars(self, scalar_dict, step=0, file_path=None, **kwargs):
        self.calls.append((scalar_dict, step, file_path, kwargs))


def scalars_json(tmp_path):
    path = tmp_path / "vis_data" / "scalars.json"
    return [json.loads(line) for line in path.read_text().splitlines()]


@pytest.fixture
def visualizer(tmp_path):
    tracker = RecordingTracker()
    vis = Visualizer(
        name=f"axis-{tmp_path.name}",
        vis_backends=[dict(type="LocalVisBackend"), tracker],
        save_dir=str(tmp_path),
    )
    yield vis, tracker
    vis.close()


def test_backends_declare_their_step_axis():
    assert BaseVisBackend.step_axis == GLOBAL_STEP_AXIS
    assert LocalVisBackend.step_axis == CALLER_STEP_AXIS


def test_validation_results_reach_trackers_at_the_iteration_and_the_file_at_the_epoch(
    visualizer, tmp_path
):
    vis, tracker = visualizer
    vis.add_scalars({"acc": 0.5}, step=2, file_path="run.json", global_step=400, epoch=2)
    vis.close()
    # The tracker: the iteration as its step, the epoch as a scalar and as a keyword (Aim).
    assert tracker.calls == [({"acc": 0.5, "epoch": 2}, 400, "run.json", {"epoch": 2})]
    # scalars.json keeps the caller's step (MMEngine's meaning), with the iteration beside it.
    assert scalars_json(tmp_path) == [{"acc": 0.5, "step": 2, "iter": 400}]


def test_an_epoch_among_the_scalars_wins_and_the_callers_iter_is_kept(visualizer, tmp_path):
    vis, tracker = visualizer
    vis.add_scalars({"loss": 1.0, "epoch": 3, "iter": 7}, step=7, global_step=7, epoch=9)
    vis.close()
    assert tracker.calls[0][0] == {"loss": 1.0, "epoch": 3, "iter": 7}
    assert scalars_json(tmp_path) == [{"loss": 1.0, "epoch": 3, "iter": 7, "step": 7}]


def test_without_global_step_every_backend_writes_at_step_as_in_mmengine(visualizer, tmp_path):
    vis, tracker = visualizer
    vis.add_scalars({"loss": 1.0}, step=5, extra="kept")
    vis.close()
    assert tracker.calls == [({"loss": 1.0}, 5, None, {"extra": "kept"})]
    assert scalars_json(tmp_path) == [{"loss": 1.0, "step": 5}]


def test_epoch_alone_reaches_trackers_at_step(visualizer):
    vis, tracker = visualizer
    vis.add_scalars({"acc": 0.5}, step=3, epoch=np.int64(3))
    assert tracker.calls == [({"acc": 0.5, "epoch": 3}, 3, None, {"epoch": 3})]


def test_numpy_and_tensor_counters_are_integers(visualizer, tmp_path):
    torch = pytest.importorskip("torch")
    vis, tracker = visualizer
    vis.add_scalars({"acc": 0.5}, step=1, global_step=torch.tensor(40), epoch=np.int32(1))
    vis.close()
    scalars, step, _, kwargs = tracker.calls[0]
    assert (step, scalars["epoch"], kwargs["epoch"]) == (40, 1, 1)
    assert all(type(value) is int for value in (step, scalars["epoch"]))
    assert scalars_json(tmp_path)[0]["iter"] == 40


@pytest.mark.parametrize(
    ("counters", "message"),
    [
        (dict(global_step=2.5), "add_scalars: global_step must be an integer, got float: 2.5"),
        (dict(global_step=4, epoch="1"), "add_scalars: epoch must be an integer, got str: '1'"),
    ],
)
def test_a_counter_that_is_not_an_integer_is_refused_before_any_write(
    visualizer, tmp_path, counters, message
):
    vis, tracker = visualizer
    with pytest.raises(TypeError) as error:
        vis.add_scalars({"acc": 0.5}, step=1, **counters)
    assert str(error.value) == message
    vis.close()
    assert tracker.calls == []
    assert not (tmp_path / "vis_data" / "scalars.json").exists()


def test_routes_leave_the_callers_dict_alone():
    scalars = {"acc": 0.5}
    routes = global_step_routes(scalars, step=1, global_step=10, epoch=1)
    assert scalars == {"acc": 0.5}
    assert routes.tracker_scalars == {"acc": 0.5, "epoch": 1}
    assert (routes.tracker_step, routes.caller_kwargs) == (10, {"global_step": 10})


def test_a_direct_call_of_the_local_backend_with_global_step(tmp_path):
    backend = LocalVisBackend(str(tmp_path / "vis_data"))
    backend.add_scalars({"acc": 0.5}, step=1, global_step=np.int64(12))
    backend.add_scalars({"acc": 0.6}, step=2)
    backend.close()
    assert scalars_json(tmp_path) == [
        {"acc": 0.5, "step": 1, "iter": 12},
        {"acc": 0.6, "step": 2},
    ]


def test_aim_records_the_epoch_with_its_own_epoch_field(tmp_path, monkeypatch):
    aim = pytest.importorskip("aim")
    from aim.sdk.index_manager import RepoIndexManager
    from aim.storage.context import Context

    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("AIM_UI_TELEMETRY_ENABLED", "0")
    monkeypatch.chdir(tmp_path)
    aim.Repo.from_path(str(tmp_path / "repo"), init=True)
    init = {"repo": str(tmp_path / "repo"), "system_tracking_interval": None}
    vis = Visualizer(
        name=f"aim-{tmp_path.name}",
        vis_backends=[
            dict(type="AimVisBackend", init_kwargs={**init, "capture_terminal_logs": False})
        ],
    )
    vis.add_scalars({"loss": 0.5}, step=4, global_step=4, epoch=1)
    vis.add_scalars({"acc": 0.75}, step=1, global_step=4, epoch=1)
    vis.add_scalars({"loss": 0.25}, step=8, global_step=8, epoch=2)
    run_hash = vis.get_backend("AimVisBackend").experiment.hash
    vis.close()

    repo = aim.Repo.from_path(str(tmp_path / "repo"))
    RepoIndexManager.get_index_manager(repo).index(run_hash)
    run = repo.get_run(run_hash)

    def points(name):
        steps, (values, epochs, *_) = run.get_metric(name, Context({})).data.items_list()
        return list(zip(steps, values, epochs, strict=True))

    assert points("loss") == [(4, 0.5, 1), (8, 0.25, 2)]
    assert points("acc") == [(4, 0.75, 1)]
    # Aim keeps one value of a metric per step: the epoch once at step 4.
    assert [(step, value) for step, value, _ in points("epoch")] == [(4, 1), (8, 2)]


def test_every_tracker_backend_is_on_the_global_axis():
    from treadle.visual import VISBACKENDS

    axes = {name: backend.step_axis for name, backend in VISBACKENDS.module_dict.items()}
    assert axes.pop("LocalVisBackend") == CALLER_STEP_AXIS
    assert {"TensorboardVisBackend", "WandbVisBackend", "MLflowVisBackend"} <= set(axes)
    assert set(axes.values()) == {GLOBAL_STEP_AXIS}


def test_neptune_keeps_one_epoch_per_step(tmp_path, monkeypatch):
    pytest.importorskip("neptune")
    from visual_tracker_readers import (
        NEPTUNE_QUIET_RUN,
        neptune_series,
        read_neptune_operations,
    )

    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("NEPTUNE_DATA_DIRECTORY", str(tmp_path / "neptune_data"))
    for name in ("NEPTUNE_MODE", "NEPTUNE_PROJECT", "NEPTUNE_API_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)
    quiet = NEPTUNE_QUIET_RUN
    vis = Visualizer(
        name=f"neptune-{tmp_path.name}",
        vis_backends=[dict(type="NeptuneVisBackend", init_kwargs=quiet)],
    )
    vis.add_scalars({"loss": 1.0}, step=4, global_step=4, epoch=1)
    vis.add_scalars({"acc": 0.5}, step=1, global_step=4, epoch=1)  # validation after it
    vis.add_scalars({"loss": 0.5}, step=8, global_step=8, epoch=2)
    vis.close()
    operations = read_neptune_operations(tmp_path / "neptune_data")
    assert neptune_series(operations, "acc") == [(4, 0.5)]
    assert neptune_series(operations, "loss") == [(4, 1.0), (8, 0.5)]
    # Neptune refuses a second value at a step: the repeated epoch is not sent.
    assert neptune_series(operations, "epoch") == [(4, 1), (8, 2)]
