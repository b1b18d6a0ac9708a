"""Pixel checks of draw_bboxes, draw_polygons, draw_lines, draw_circles, draw_points."""

from __future__ import annotations

import numpy as np
import pytest

from treadle.visual.strict_checks import SuspiciousInputWarning
from treadle.visual.visualizer import Visualizer

RED, BLUE, BLACK = (255, 0, 0), (0, 0, 255), (0, 0, 0)


def black(height: int = 100, width: int = 100) -> Visualizer:
    return Visualizer(image=np.zeros((height, width, 3), dtype=np.uint8))


def test_box_edge_is_coloured_and_inside_stays_black() -> None:
    image = black().draw_bboxes(np.array([[20, 20, 80, 60]]), edge_colors="r", alpha=1.0)
    image = image.get_image()
    # A 2 pt (2.8 px) line on x = 20 covers column 20 fully and its neighbours in part.
    assert tuple(image[40, 20]) == RED and 0 < image[40, 19, 0] < 255
    assert tuple(image[20, 50]) == RED and tuple(image[60, 50]) == RED
    assert tuple(image[59, 80]) == RED
    assert tuple(image[40, 50]) == BLACK  # inside: face_colors='none'
    assert tuple(image[90, 90]) == BLACK and tuple(image[5, 5]) == BLACK


def test_box_default_alpha_and_face_colour() -> None:
    vis = black().draw_bboxes(np.array([20, 20, 80, 60]), edge_colors="r", face_colors="b")
    image = vis.get_image()
    assert image[40, 50, 2] == pytest.approx(0.8 * 255, abs=1)  # face at alpha 0.8
    assert image[40, 20, 0] == pytest.approx(0.8 * 255, abs=1)


def test_per_box_colours_and_tensor_input() -> None:
    torch = pytest.importorskip("torch")
    boxes = torch.tensor([[10.0, 10, 40, 40], [60, 60, 90, 90]])
    image = black().draw_bboxes(boxes, edge_colors=["r", (0, 0, 255)], alpha=1.0).get_image()
    assert tuple(image[25, 10]) == RED
    assert tuple(image[75, 60]) == BLUE


def test_wider_lines_cover_more_pixels() -> None:
    thin = black().draw_bboxes(np.array([20, 20, 80, 80]), line_widths=1).get_image()
    thick = black().draw_bboxes(np.array([20, 20, 80, 80]), line_widths=2.5).get_image()
    assert (thick.sum(-1) > 0).sum() > (thin.sum(-1) > 0).sum()


def test_later_drawings_paint_over_earlier_ones() -> None:
    vis = black()
    vis.draw_bboxes(np.array([10, 10, 90, 90]), face_colors="b", edge_colors="b", alpha=1.0)
    vis.draw_bboxes(np.array([40, 40, 60, 60]), face_colors="r", edge_colors="r", alpha=1.0)
    image = vis.get_image()
    assert tuple(image[50, 50]) == RED and tuple(image[20, 20]) == BLUE


def test_polygon_outline_and_fill() -> None:
    triangle = np.array([[10, 90], [90, 90], [50, 10]])
    image = black().draw_polygons(triangle, edge_colors="r", alpha=1.0).get_image()
    assert tuple(image[90, 50]) == RED and tuple(image[70, 50]) == BLACK
    filled = black().draw_polygons([triangle], edge_colors="r", face_colors="b", alpha=1.0)
    assert tuple(filled.get_image()[70, 50]) == BLUE


def test_lines() -> None:
    vis = black().draw_lines(np.array([10, 90]), np.array([50, 50]), colors="w")
    image = vis.get_image()
    assert tuple(image[50, 50]) == (255, 255, 255) and image[49, 50, 0] > 0
    assert tuple(image[40, 50]) == BLACK
    two = black().draw_lines(
        np.array([[10, 90], [20, 20]]), np.array([[50, 50], [10, 90]]), colors=["r", "b"]
    )
    image = two.get_image()
    assert tuple(image[50, 50]) == RED and tuple(image[80, 20]) == BLUE


def test_circles() -> None:
    vis = black().draw_circles(np.array([50, 50]), np.array([20]), edge_colors="r", alpha=1.0)
    image = vis.get_image()
    assert tuple(image[50, 70]) == RED and tuple(image[30, 50]) == RED
    assert tuple(image[50, 50]) == BLACK


def test_points() -> None:
    image = black().draw_points(np.array([[30, 40]]), colors="r").get_image()
    assert tuple(image[40, 30]) == RED and tuple(image[80, 80]) == BLACK
    big = black().draw_points(np.array([[30, 40]]), colors="r", sizes=np.array([400]))
    assert (big.get_image()[..., 0] > 0).sum() > (image[..., 0] > 0).sum()


def test_boxes_of_the_wrong_shape() -> None:
    with pytest.raises(ValueError, match=r"bboxes must have shape \(N, 4\).*got shape \(2, 3\)"):
        black().draw_bboxes(np.zeros((2, 3)))


def test_flipped_box_warns() -> None:
    # Drawn, with a warning (tests/visual/test_degenerate_drawings.py has the details).
    with pytest.warns(UserWarning, match=r"1 of 2 bboxes have x1 > x2 .* bboxes\[1\] = \[50.0, 5"):
        black().draw_bboxes(np.array([[1, 1, 5, 5], [50, 5, 40, 20]]))


def test_wrong_shapes_of_points_lines_polygons() -> None:
    vis = black()
    with pytest.raises(ValueError, match=r"positions must have shape \(N, 2\).*\(3, 3\)"):
        vis.draw_points(np.zeros((3, 3)))
    with pytest.raises(ValueError, match=r"x_datas and y_datas must have the same shape"):
        vis.draw_lines(np.zeros((2, 2)), np.zeros((3, 2)))
    with pytest.raises(ValueError, match=r"x_datas must have shape \(N, 2\).*\(4, 3\)"):
        vis.draw_lines(np.zeros((4, 3)), np.zeros((4, 3)))
    with pytest.raises(ValueError, match=r"polygons\[1\] has shape \(4, 3\)"):
        vis.draw_polygons([np.zeros((3, 2)), np.zeros((4, 3))])
    with pytest.raises(ValueError, match=r"radius must have one value per centre: 2 centres"):
        vis.draw_circles(np.zeros((2, 2)), np.array([1.0, 2, 3]))
    with pytest.raises(TypeError, match="bboxes must be a numpy array or a torch tensor"):
        vis.draw_bboxes("0 0 1 1")


@pytest.mark.parametrize(
    ("method", "args", "what"),
    [
        ("draw_bboxes", (np.array([[10, 10, 120, 50]]),), "bboxes"),
        ("draw_points", (np.array([[-5, 10]]),), "points"),
        ("draw_lines", (np.array([0, 50]), np.array([0, 150])), "lines"),
        ("draw_circles", (np.array([95, 50]), np.array([10])), "circles"),
        ("draw_polygons", (np.array([[0, 0], [200, 0], [0, 10]]),), r"polygons\[0\]"),
    ],
)
def test_outside_the_image_warns_and_draws(method: str, args: tuple, what: str) -> None:
    vis = black()
    with pytest.warns(UserWarning, match=rf"1 of 1 {what} lie partly outside the image"):
        getattr(vis, method)(*args)
    assert vis.get_image().any()  # drawn, clipped


def test_box_touching_the_far_edges_is_inside(recwarn: pytest.WarningsRecorder) -> None:
    black().draw_bboxes(np.array([0, 0, 100, 100]))
    assert not [w for w in recwarn if "outside" in str(w.message)]


def test_colour_errors() -> None:
    vis = black()
    with pytest.raises(ValueError, match=r"edge_colors: unknown colour 'redd'.*'red'"):
        vis.draw_bboxes(np.array([1, 1, 5, 5]), edge_colors="redd")
    with pytest.raises(ValueError, match=r"colors\[1\]: unknown colour 'blu'"):
        vis.draw_points(np.array([[1, 1], [2, 2]]), colors=["r", "blu"])
    with pytest.raises(ValueError, match=r"colors has 3 entries but there are 2 items"):
        vis.draw_points(np.array([[1, 1], [2, 2]]), colors=["r", "g", "b"])
    with pytest.raises(ValueError, match=r"values in 0-255"):
        vis.draw_bboxes(np.array([1, 1, 5, 5]), edge_colors=(300, 0, 0))
    with pytest.raises(TypeError, match=r"colour name \(str\) or an \(R, G, B\) tuple"):
        vis.draw_lines(np.array([1, 5]), np.array([1, 5]), colors=3)


def test_per_item_lengths_and_values() -> None:
    # Lists of another length are fitted as MMEngine's collections fit them, with a warning
    # (tests/visual/test_mmengine_leniency.py); an opacity outside [0, 1] is refused, as
    # matplotlib refuses it under MMEngine.
    vis = black()
    boxes = np.array([[1, 1, 5, 5], [2, 2, 6, 6]])
    with pytest.warns(SuspiciousInputWarning, match=r"line_widths has 3 entries for 2 items"):
        vis.draw_bboxes(boxes, line_widths=[1, 2, 3])
    with pytest.warns(SuspiciousInputWarning, match=r"line_styles has 1 entries for 2 items"):
        vis.draw_bboxes(boxes, line_styles=["-"])
    with pytest.raises(
        ValueError, match=r"alpha must be a number in \[0, 1\], got 2 .*alpha \(2\) is outside 0-1"
    ):
        vis.draw_bboxes(boxes, alpha=2)
    with pytest.raises(ValueError, match=r"line_widths has 0 entries but there are 2 items"):
        vis.draw_bboxes(boxes, line_widths=[])


def test_drawing_before_set_image() -> None:
    vis = Visualizer()
    with pytest.raises(RuntimeError, match=r"draw_bboxes: no image to draw on; call set_image"):
        vis.draw_bboxes(np.array([1, 1, 5, 5]))
    with pytest.raises(RuntimeError, match=r"get_image: no image to draw on"):
        vis.get_image()
