"""The Visualizer builds its backends as MMEngine does and forwards add_* calls to each."""

from __future__ import annotations

import os
from typing import Any

import numpy as np
import pytest

from treadle.visual.backends.base import BaseVisBackend, force_init_env
from treadle.visual.registry import VISBACKENDS
from treadle.visual.visualizer import Visualizer


@VISBACKENDS.register_module(name="RecordingVisBackendForVisualizerTests", force=True)
class RecordingBackend(BaseVisBackend):
    """Keeps every call it gets, to check what the Visualizer forwards."""

    def __init__(self, save_dir: str | None = None, label: str = "") -> None:
        super().__init__(save_dir)
        self.label = label
        self.calls: list[tuple] = []
        self.closed = False

    def _init_env(self) -> None:
        self.calls.append(("init",))

    @property
    def experiment(self) -> list[tuple]:
        return self.calls

    @force_init_env
    def add_config(self, config: Any, **kwargs: Any) -> None:
        self.calls.append(("config", config, kwargs))

    @force_init_env
    def add_graph(self, model: Any, data_batch: Any, **kwargs: Any) -> None:
        self.calls.append(("graph", model, data_batch))

    @force_init_env
    def add_image(self, name: str, image: Any, step: int = 0, **kwargs: Any) -> None:
        self.calls.append(("image", name, image.shape, step))

    @force_init_env
    def add_scalar(self, name: str, value: Any, step: int = 0, **kwargs: Any) -> None:
        self.calls.append(("scalar", name, value, step, kwargs))

    @force_init_env
    def add_scalars(
        self, scalar_dict: dict, step: int = 0, file_path: Any = None, **kwargs: Any
    ) -> None:
        self.calls.append(("scalars", scalar_dict, step, file_path))

    def close(self) -> None:
        self.closed = True


@VISBACKENDS.register_module(name="DirOnlyVisBackendForVisualizerTests", force=True)
class DirOnlyBackend(RecordingBackend):
    def __init__(self, save_dir: str | None) -> None:  # no default: it needs a directory
        super().__init__(save_dir)


def test_configs_are_built_with_save_dir_vis_data(tmp_path: Any) -> None:
    config = dict(type="RecordingVisBackendForVisualizerTests", label="a")
    vis = Visualizer(vis_backends=config, save_dir=str(tmp_path))
    backend = vis.get_backend("RecordingBackend")
    assert isinstance(backend, RecordingBackend) and backend.label == "a"
    assert backend._save_dir == os.path.join(str(tmp_path), "vis_data")
    assert config == dict(type="RecordingVisBackendForVisualizerTests", label="a")  # unchanged
    assert backend.calls == []  # nothing opened before the first write


def test_names_instances_and_explicit_save_dirs(tmp_path: Any) -> None:
    ready = RecordingBackend(save_dir="elsewhere")
    vis = Visualizer(
        vis_backends=[
            dict(type="RecordingVisBackendForVisualizerTests", name="first"),
            dict(type="RecordingVisBackendForVisualizerTests", name="second", save_dir="own"),
            ready,
        ],
        save_dir=str(tmp_path),
    )
    assert vis.get_backend("first")._save_dir == os.path.join(str(tmp_path), "vis_data")
    assert vis.get_backend("second")._save_dir == "own"
    assert vis.get_backend("RecordingBackend") is ready
    assert vis.get_backend("missing") is None


def test_every_add_is_forwarded_to_every_backend() -> None:
    vis = Visualizer(
        vis_backends=[
            dict(type="RecordingVisBackendForVisualizerTests", name="a"),
            dict(type="RecordingVisBackendForVisualizerTests", name="b"),
        ]
    )
    image = np.zeros((4, 5, 3), dtype=np.uint8)
    vis.add_config({"lr": 0.1}, note=1)
    vis.add_graph("model", [{"x": 1}])
    vis.add_image("pred", image, step=3)
    vis.add_scalar("loss", 0.5, step=4, tag="x")
    vis.add_scalars({"loss": 0.25, "acc": 0.9}, step=5, file_path="extra.json")
    expected = [
        ("init",),
        ("config", {"lr": 0.1}, {"note": 1}),
        ("graph", "model", [{"x": 1}]),
        ("image", "pred", (4, 5, 3), 3),
        ("scalar", "loss", 0.5, 4, {"tag": "x"}),
        ("scalars", {"loss": 0.25, "acc": 0.9}, 5, "extra.json"),
    ]
    assert vis.get_backend("a").calls == expected and vis.get_backend("b").calls == expected


def test_scalars_are_converted_once_and_refused_before_any_backend_writes() -> None:
    torch = pytest.importorskip("torch")
    vis = Visualizer(
        vis_backends=[
            dict(type="RecordingVisBackendForVisualizerTests", name="a"),
            dict(type="RecordingVisBackendForVisualizerTests", name="b"),
        ]
    )
    vis.add_scalars({"loss": torch.tensor(0.5), "n": np.int64(3)}, step=1)
    vis.add_scalar("lr", np.float32(0.25), step=1)
    for name in "ab":
        calls = vis.get_backend(name).calls
        assert calls[1] == ("scalars", {"loss": 0.5, "n": 3}, 1, None)
        assert type(calls[1][1]["loss"]) is float and type(calls[1][1]["n"]) is int
        assert calls[2] == ("scalar", "lr", 0.25, 1, {}) and type(calls[2][2]) is float
    with pytest.raises(TypeError, match=r"scalar names must be str, got 3"):
        vis.add_scalars({"loss": 0.1, 3: 0.2}, step=2)
    assert len(vis.get_backend("a").calls) == 3 and len(vis.get_backend("b").calls) == 3
    # Values that are not numbers go on as they came (MMEngine's backends get them so).
    vis.add_scalars({"loss": 0.1, "acc": "high"}, step=2)
    vis.add_scalar("lr", None, step=2)
    for name in "ab":
        calls = vis.get_backend(name).calls
        assert calls[3:] == [
            ("scalars", {"loss": 0.1, "acc": "high"}, 2, None),
            ("scalar", "lr", None, 2, {}),
        ]


def test_strict_checks_refuse_non_numeric_scalars_before_any_backend_writes(strict) -> None:
    vis = Visualizer(vis_backends=[dict(type="RecordingVisBackendForVisualizerTests", name="a")])
    with pytest.raises(TypeError, match=r"scalar 'acc' must be a number.*got str"):
        vis.add_scalars({"loss": 0.1, "acc": "high"}, step=2)
    with pytest.raises(TypeError, match=r"scalar 'lr' must be a number.*got NoneType"):
        vis.add_scalar("lr", None, step=2)
    assert vis.get_backend("a").calls == []


def test_close_closes_every_backend() -> None:
    vis = Visualizer(
        vis_backends=[
            dict(type="RecordingVisBackendForVisualizerTests", name="a"),
            dict(type="RecordingVisBackendForVisualizerTests", name="b"),
        ]
    )
    vis.close()
    assert vis.get_backend("a").closed and vis.get_backend("b").closed


class FailingCloseBackend(RecordingBackend):
    """A backend whose close fails, as a tracker's upload at close may."""

    def close(self) -> None:
        raise OSError("upload failed")


def test_a_failing_close_still_closes_the_other_backends(tmp_path: Any) -> None:
    vis = Visualizer(
        vis_backends=[FailingCloseBackend(), dict(type="LocalVisBackend", flush_interval=3600)],
        save_dir=str(tmp_path),
    )
    vis.add_scalars({"loss": 1.5}, step=2)
    with pytest.raises(OSError, match="upload failed"):
        vis.close()
    # The local backend after the failing one was still closed, so its buffer reached the file.
    assert "1.5" in (tmp_path / "vis_data" / "scalars.json").read_text()


def test_a_bad_image_is_refused_naming_it() -> None:
    vis = Visualizer(vis_backends=[dict(type="RecordingVisBackendForVisualizerTests")])
    with pytest.raises(ValueError, match=r"image 'val/pred' must have shape \(H, W, 3\)"):
        vis.add_image("val/pred", np.zeros((2, 3, 8, 8), dtype=np.uint8))


def test_a_real_local_backend(tmp_path: Any) -> None:
    vis = Visualizer(vis_backends=[dict(type="LocalVisBackend")], save_dir=str(tmp_path))
    vis.add_scalars({"loss": 1.5}, step=2)
    vis.close()
    assert "1.5" in (tmp_path / "vis_data" / "scalars.json").read_text()


def test_backend_needing_a_save_dir_is_left_out_with_a_warning() -> None:
    with pytest.warns(UserWarning, match=r"DirOnlyBackend needs a save_dir and none was given"):
        vis = Visualizer(vis_backends=[dict(type="DirOnlyVisBackendForVisualizerTests")])
    assert vis.get_backend("DirOnlyBackend") is None


def test_backend_errors() -> None:
    with pytest.raises(
        KeyError, match=r"NoSuchVisBackend is not in the treadle::vis_backend registry"
    ):
        Visualizer(vis_backends=[dict(type="NoSuchVisBackend")])
    with pytest.raises(TypeError, match=r"vis_backends must be a backend config dict"):
        Visualizer(vis_backends=["LocalVisBackend"])
    with pytest.raises(RuntimeError, match=r"two vis_backends are named 'RecordingBackend'"):
        Visualizer(vis_backends=[dict(type="RecordingVisBackendForVisualizerTests")] * 2)
