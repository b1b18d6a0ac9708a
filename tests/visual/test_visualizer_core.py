"""Visualizer basics: image handling, instances, dataset_meta, registry, show headless."""

from __future__ import annotations

import gc
import sys
import warnings
from collections.abc import Iterator

import numpy as np
import pytest

from treadle.visual.registry import VISUALIZERS
from treadle.visual.visualizer import Visualizer


@pytest.fixture
def forget_instances() -> Iterator[None]:
    """Drop the instances a test creates with get_instance, from every class that holds one."""
    yield
    for cls in (Visualizer, *Visualizer.__subclasses__()):
        for name in [n for n in cls._instance_dict if n.startswith("core-test")]:
            del cls._instance_dict[name]


def test_set_image_and_get_image() -> None:
    image = np.arange(4 * 6 * 3, dtype=np.uint8).reshape(4, 6, 3)
    vis = Visualizer(image=image)
    assert (vis.width, vis.height) == (6, 4)
    out = vis.get_image()
    assert (out == image).all() and out is not image
    out[:] = 0  # the caller's copy: drawing state is untouched
    image[:] = 1  # and so is the caller's input array
    assert (vis.get_image() == np.arange(72).reshape(4, 6, 3)).all()


def test_untouched_pixels_come_back_exactly_after_drawing() -> None:
    image = np.random.default_rng(0).integers(0, 256, (50, 70, 3), dtype=np.uint8)
    vis = Visualizer(image=image).draw_bboxes(np.array([10, 10, 20, 20]))
    out = vis.get_image()
    assert (out[30:, 30:] == image[30:, 30:]).all()
    assert not (out[5:25, 5:25] == image[5:25, 5:25]).all()


def test_set_image_starts_over() -> None:
    vis = Visualizer(image=np.zeros((30, 30, 3), dtype=np.uint8))
    vis.draw_bboxes(np.array([5, 5, 25, 25]), edge_colors="r")
    vis.set_image(np.zeros((20, 40, 3), dtype=np.uint8))
    out = vis.get_image()
    assert out.shape == (20, 40, 3) and not out.any()


def test_grey_and_rgba_images_are_accepted() -> None:
    assert Visualizer(image=np.zeros((5, 7), dtype=np.uint8)).get_image().shape == (5, 7, 3)
    rgba = np.zeros((5, 7, 4), dtype=np.uint8)
    assert Visualizer(image=rgba).get_image().shape == (5, 7, 3)


def test_bad_images() -> None:
    vis = Visualizer()
    with pytest.raises(
        ValueError, match=r"image must have shape \(H, W, 3\).*got shape \(3, 8, 9\)"
    ):
        vis.set_image(np.zeros((3, 8, 9), dtype=np.uint8))
    with pytest.raises(TypeError, match=r"image must have an integer or float dtype.*complex"):
        vis.set_image(np.zeros((8, 9), dtype=complex))
    with pytest.raises(
        TypeError, match=r"image must be a numpy array of shape \(H, W, 3\), got list"
    ):
        vis.set_image([[0]])


def test_dataset_meta() -> None:
    vis = Visualizer()
    assert vis.dataset_meta is None
    vis.dataset_meta = dict(classes=("cat", "dog"), palette=[(255, 0, 0), (0, 255, 0)])
    assert vis.dataset_meta["classes"] == ("cat", "dog")


def test_get_current_instance_sees_subclasses(forget_instances: None) -> None:
    class DetVisualizer(Visualizer):
        pass

    plain = Visualizer.get_instance("core-test-plain")
    assert Visualizer.get_current_instance() is plain
    assert Visualizer.get_instance("core-test-plain") is plain
    det = DetVisualizer.get_instance("core-test-det", image=np.zeros((4, 4, 3), np.uint8))
    assert Visualizer.get_current_instance() is det
    assert DetVisualizer.get_current_instance() is det
    assert det.instance_name == "core-test-det" and det.width == 4


def test_built_from_the_registry() -> None:
    vis = VISUALIZERS.build(dict(type="Visualizer", name="core-test-built"))
    assert isinstance(vis, Visualizer) and vis.instance_name == "core-test-built"


def test_add_datasample_is_an_overridable_no_op() -> None:
    image = np.zeros((8, 8, 3), dtype=np.uint8)
    assert Visualizer().add_datasample("sample", image) is None

    class BoxVisualizer(Visualizer):
        def add_datasample(
            self,
            name,
            image,
            data_sample=None,
            draw_gt=True,
            draw_pred=True,
            show=False,
            wait_time=0,
            step=0,
        ):
            self.set_image(image)
            self.draw_bboxes(np.asarray(data_sample), edge_colors="r", alpha=1.0)

    vis = BoxVisualizer()
    vis.add_datasample("sample", image, data_sample=[[1, 1, 6, 6]])
    assert vis.get_image()[3, 1, 0] == 255


def test_show_under_agg_returns_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    import matplotlib.pyplot as plt

    from treadle.visual import show as show_module

    assert plt.get_backend().lower() == "agg"
    monkeypatch.setattr(show_module, "_warned_headless", False)
    vis = Visualizer(image=np.zeros((10, 10, 3), dtype=np.uint8))
    with pytest.warns(UserWarning, match=r"backend 'agg' cannot open windows, so nothing is shown"):
        assert vis.show(wait_time=0) is None  # wait_time=0 would wait for a key forever
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the warning comes once per process
        vis.show(np.ones((5, 5, 3), dtype=np.uint8), win_name="again")
    assert not plt.get_fignums()


def test_show_errors(monkeypatch: pytest.MonkeyPatch) -> None:
    vis = Visualizer(image=np.zeros((10, 10, 3), dtype=np.uint8))
    with pytest.raises(ValueError, match=r"backend must be 'matplotlib' or 'cv2', got 'qt'"):
        vis.show(backend="qt")
    monkeypatch.setitem(sys.modules, "cv2", None)
    with pytest.raises(ImportError, match=r"needs OpenCV: pip install opencv-python"):
        vis.show(backend="cv2")
    with pytest.raises(RuntimeError, match=r"no image to draw on"):
        Visualizer().show()


def test_garbage_collecting_a_half_built_visualizer_is_silent() -> None:
    reported = []
    hook, sys.unraisablehook = sys.unraisablehook, reported.append
    try:
        with pytest.raises(KeyError):
            Visualizer(vis_backends=[dict(type="NoSuchVisBackend")])
        gc.collect()
    finally:
        sys.unraisablehook = hook
    assert reported == []
