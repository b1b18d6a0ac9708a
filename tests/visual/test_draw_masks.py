"""Pixel checks of draw_binary_masks: blending, per-mask colours, order with other drawings."""

from __future__ import annotations

import numpy as np
import pytest

from treadle.visual.visualizer import Visualizer


def grey(value: int = 100) -> Visualizer:
    return Visualizer(image=np.full((40, 60, 3), value, dtype=np.uint8))


def test_mask_blends_with_alpha() -> None:
    mask = np.zeros((40, 60), dtype=bool)
    mask[10:20, 10:30] = True
    image = grey().draw_binary_masks(mask, colors="r", alphas=0.5).get_image()
    # 0.5 * 100 + 0.5 * 255 = 177.5 and 0.5 * 100 + 0.5 * 0 = 50
    assert np.abs(image[15, 15].astype(int) - (177.5, 50, 50)).max() <= 1
    assert (image[~mask] == 100).all()


def test_masks_with_their_own_colours_and_alphas() -> None:
    masks = np.zeros((2, 40, 60), dtype=bool)
    masks[0, :, :20] = True
    masks[1, :, 40:] = True
    vis = grey(0).draw_binary_masks(masks, colors=[(0, 0, 200), "lime"], alphas=[1.0, 0.25])
    image = vis.get_image()
    assert tuple(image[5, 5]) == (0, 0, 200)
    assert np.abs(image[5, 50].astype(int) - (0, 64, 0)).max() <= 1
    assert tuple(image[5, 30]) == (0, 0, 0)


def test_tensor_masks() -> None:
    torch = pytest.importorskip("torch")
    masks = torch.zeros(1, 40, 60, dtype=torch.bool)
    masks[0, :5] = True
    image = grey().draw_binary_masks(masks, colors="b", alphas=1.0).get_image()
    assert tuple(image[2, 2]) == (0, 0, 255) and tuple(image[30, 2]) == (100, 100, 100)


def test_boxes_stay_above_masks() -> None:
    vis = grey()
    vis.draw_bboxes(np.array([5, 5, 50, 35]), edge_colors="r", alpha=1.0)
    vis.draw_binary_masks(np.ones((40, 60), dtype=bool), colors="b", alphas=0.5)
    image = vis.get_image()
    assert tuple(image[20, 5]) == (255, 0, 0)  # the box edge, drawn earlier, on top
    assert np.abs(image[20, 20].astype(int) - (50, 50, 178)).max() <= 1


def test_mask_errors() -> None:
    vis = grey()
    with pytest.raises(TypeError, match=r"binary_masks must have dtype bool, got uint8"):
        vis.draw_binary_masks(np.ones((40, 60), dtype=np.uint8))
    with pytest.raises(ValueError, match=r"shape \(N, 40, 60\) or \(40, 60\).*got shape \(2, 30"):
        vis.draw_binary_masks(np.ones((2, 30, 60), dtype=bool))
    with pytest.raises(ValueError, match=r"colors has 1 entries but there are 2 items"):
        vis.draw_binary_masks(np.ones((2, 40, 60), dtype=bool), colors=["r"])
    with pytest.raises(TypeError, match=r"alphas must be int or float, got str: 'x'"):
        vis.draw_binary_masks(np.ones((2, 40, 60), dtype=bool), alphas="x")
    with pytest.raises(ValueError, match=r"unknown colour 'gren'"):
        vis.draw_binary_masks(np.ones((40, 60), dtype=bool), colors="gren")
    with pytest.raises(RuntimeError, match=r"draw_binary_masks: no image to draw on"):
        Visualizer().draw_binary_masks(np.ones((40, 60), dtype=bool))
