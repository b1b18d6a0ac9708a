"""Issue 41: where MMEngine asserts, treadle's error is also an AssertionError (with MMEngine's
words where its users match on them); out-of-image warnings carry MMEngine's sentence; and the
MMEngineChecks switch (on under treadle.compat) refuses what treadle alone accepts beyond
MMEngine."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from treadle.visual import LocalVisBackend, Visualizer
from treadle.visual.errors import VisualTypeError, VisualValueError
from treadle.visual.mmengine_checks import MMEngineChecks

IMAGE = np.zeros((10, 10, 3), dtype=np.uint8)


@pytest.fixture
def mmengine_checks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(MMEngineChecks, "enabled", True)


def test_the_errors_are_both_kinds() -> None:
    assert issubclass(VisualTypeError, TypeError) and issubclass(VisualTypeError, AssertionError)
    assert issubclass(VisualValueError, ValueError)
    assert issubclass(VisualValueError, AssertionError)


def test_set_image_none_is_a_type_error_and_an_assertion_error() -> None:
    with pytest.raises(TypeError, match=r"image must be a numpy array .*got NoneType") as error:
        Visualizer().set_image(None)
    assert isinstance(error.value, AssertionError)


def test_an_hw1_image_is_grey() -> None:
    image = np.full((4, 5, 1), 7, dtype=np.uint8)
    vis = Visualizer(image=image)
    assert (vis.width, vis.height) == (5, 4)
    assert (vis.get_image() == 7).all() and vis.get_image().shape == (4, 5, 3)


ASSERTING_CALLS = {
    "points-shape": (
        lambda v: v.draw_points(np.array([1, 2, 3], dtype=object)),
        r"positions must have shape \(N, 2\)",
    ),
    "texts-count": (
        lambda v: v.draw_texts(["a", "b"], torch.tensor([5, 5])),
        r"positions must have shape \(2, 2\), one row per text",
    ),
    "texts-colours-too-few": (
        lambda v: v.draw_texts(["a", "b"], torch.tensor([[5, 5], [3, 3]]), colors=["r"]),
        r"colors has 1 entries but there are 2 items",
    ),
    "texts-alignments-too-few": (
        lambda v: v.draw_texts(
            ["a", "b"], torch.tensor([[5, 5], [3, 3]]), vertical_alignments=["top"]
        ),
        r"vertical_alignments has 1 entries but there are 2 items",
    ),
    "lines-shapes": (
        lambda v: v.draw_lines(torch.tensor([1, 5]), torch.tensor([[2, 6], [4, 7]])),
        r"x_datas and y_datas must have the same shape",
    ),
    "circles-radius-count": (
        lambda v: v.draw_circles(torch.tensor([[1, 5]]), torch.tensor([1, 2])),
        r"radius must have one value per centre",
    ),
    "masks-size": (
        lambda v: v.draw_binary_masks(np.zeros((8, 10), bool)),
        r"binary_masks must have shape \(N, 10, 10\)",
    ),
    "masks-dtype": (
        lambda v: v.draw_binary_masks(np.zeros((10, 10), np.int64)),
        r"binary_masks must have dtype bool",
    ),
    "colour-tuple": (
        lambda v: v.draw_bboxes(np.array([1, 1, 2, 2]), edge_colors=(300, 0, 0)),
        r"must have values in 0-255",
    ),
}


@pytest.mark.parametrize(("call", "message"), ASSERTING_CALLS.values(), ids=ASSERTING_CALLS)
def test_where_mmengine_asserts_the_error_is_an_assertion_error(call, message) -> None:
    with pytest.raises(AssertionError, match=message) as error:
        call(Visualizer(image=IMAGE))
    assert isinstance(error.value, (TypeError, ValueError))  # and treadle's own kind


def test_an_object_array_of_numbers_is_drawn() -> None:
    vis = Visualizer(image=IMAGE)
    vis.draw_points(np.array([[2, 3]], dtype=object), colors=(255, 0, 0))
    assert vis.get_image().any()


OUT_OF_IMAGE = {
    "bbox": lambda v: v.draw_bboxes(torch.tensor([1, 1, 20, 2])),
    "text": lambda v: v.draw_texts("a", torch.tensor([15, 5])),
    "line": lambda v: v.draw_lines(torch.tensor([12, 5]), torch.tensor([2, 6])),
    "circle": lambda v: v.draw_circles(torch.tensor([1, 5]), torch.tensor([10])),
    "polygon": lambda v: v.draw_polygons(torch.tensor([[1, 1], [2, 2], [16, 4]])),
    "point": lambda v: v.draw_points(torch.tensor([[12, 5]])),
}


@pytest.mark.parametrize(("noun", "draw"), OUT_OF_IMAGE.items(), ids=OUT_OF_IMAGE)
def test_out_of_image_warning_has_treadles_detail_and_mmengines_sentence(noun, draw) -> None:
    with pytest.warns(UserWarning) as record:
        draw(Visualizer(image=IMAGE))
    assert len(record) == 1
    message = str(record[0].message)
    assert "lie partly outside the image (width 10, height 10)" in message
    assert message.endswith(
        f"(MMEngine's words: Warning: The {noun} is out of bounds, the drawn {noun} may not be "
        "in the image)"
    )


def test_lenient_inputs_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    # Off (treadle alone): nested lists, numbers, numpy feature maps, flipped boxes are taken.
    assert MMEngineChecks.enabled is False
    vis = Visualizer(image=IMAGE)
    vis.draw_points([[1, 2]]).draw_bboxes([1, 1, 2, 2]).draw_circles(np.array([5, 5]), 2)
    with pytest.warns(UserWarning, match=r"x1 > x2 or y1 > y2"):
        vis.draw_bboxes(np.array([5, 1, 2, 2]))
    assert Visualizer.draw_featmap(np.ones((1, 3, 3), np.float32)).shape == (3, 3, 3)


REFUSED_UNDER_CHECKS = {
    "points-list": (lambda v: v.draw_points(positions=[1, 2]), TypeError, r"`positions` should"),
    "bboxes-list": (lambda v: v.draw_bboxes([1, 1, 2, 2]), TypeError, r"`bboxes` should"),
    "texts-list": (lambda v: v.draw_texts("t", [5, 5]), TypeError, r"`positions` should"),
    "lines-list": (
        lambda v: v.draw_lines([5, 5], torch.tensor([2, 6])),
        TypeError,
        r"`x_datas` should",
    ),
    "circles-int-radius": (
        lambda v: v.draw_circles(np.array([1, 5]), 10),
        TypeError,
        r"`radius` should",
    ),
    "polygons-tuple": (
        lambda v: v.draw_polygons((np.array([[1, 1], [2, 2], [3, 4]]),)),
        TypeError,
        r"`polygons` should",
    ),
    "masks-int-alpha": (
        lambda v: v.draw_binary_masks(np.zeros((10, 10), bool), alphas=1),
        TypeError,
        r"`alphas` should be",
    ),
    "flipped-box": (
        lambda v: v.draw_bboxes(torch.tensor([5, 1, 2, 2])),
        AssertionError,
        r"bboxes must have x1 <= x2 and y1 <= y2 .*bboxes\[0\] = \[5.0, 1.0, 2.0, 2.0\]",
    ),
    "featmap-numpy": (
        lambda v: v.draw_featmap(np.ones((3, 3, 3))),
        AssertionError,
        r"`featmap` should be torch.Tensor, but got <class 'numpy.ndarray'>",
    ),
}


@pytest.mark.parametrize(
    ("call", "error", "message"), REFUSED_UNDER_CHECKS.values(), ids=REFUSED_UNDER_CHECKS
)
def test_mmengine_checks_refuse_what_mmengine_refuses(mmengine_checks, call, error, message):
    with pytest.raises(error, match=message):
        call(Visualizer(image=IMAGE))


def test_mmengine_checks_still_draw_what_mmengine_draws(mmengine_checks) -> None:
    vis = Visualizer(image=IMAGE)
    vis.draw_bboxes(torch.tensor([1, 1, 2, 2])).draw_points(np.array([[1, 1]]))
    vis.draw_polygons([np.array([[1, 1], [2, 2], [3, 4]]), torch.tensor([[1, 1], [2, 2], [3, 4]])])
    vis.draw_binary_masks(np.ones((10, 10), bool), alphas=0.5)
    assert Visualizer.draw_featmap(torch.ones(1, 3, 3)).shape == (3, 3, 3)


def test_local_backend_file_names_refused_as_assertion_errors(tmp_path) -> None:
    for kwargs, message in [
        (dict(config_save_file="a.txt"), r"config_save_file must be a file name ending in '\.py'"),
        (dict(scalar_save_file="a.yaml"), r"scalar_save_file must be a file name ending in"),
    ]:
        with pytest.raises(AssertionError, match=message) as error:
            LocalVisBackend(str(tmp_path), **kwargs)
        assert isinstance(error.value, ValueError)


def test_local_backend_integer_images_alone_and_under_checks(tmp_path, monkeypatch) -> None:
    image = np.random.default_rng(0).integers(0, 256, (4, 4, 3))  # int64
    backend = LocalVisBackend(str(tmp_path))
    backend.add_image("img", image)  # saved as uint8 by treadle alone
    assert (tmp_path / "vis_image" / "img_0.png").exists()
    monkeypatch.setattr(MMEngineChecks, "enabled", True)
    with pytest.raises(AssertionError, match=r"image 'img' must have dtype uint8, got int64"):
        backend.add_image("img", image, step=1)
    backend.add_image("img", image.astype(np.uint8), step=1)
    assert (tmp_path / "vis_image" / "img_1.png").exists()
    backend.close()
