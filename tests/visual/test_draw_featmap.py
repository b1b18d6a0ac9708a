"""draw_featmap: channel reductions, top-k grid, overlay and resizing, checked numerically."""

from __future__ import annotations

import numpy as np
import pytest
from matplotlib import colormaps

from treadle.visual.visualizer import Visualizer

torch = pytest.importorskip("torch")


def jet(level: int) -> np.ndarray:
    return np.round(np.asarray(colormaps["jet"](level)[:3]) * 255)


def test_squeeze_mean_colours_the_channel_mean() -> None:
    featmap = torch.zeros(2, 4, 5)
    featmap[0, 1, 2] = 4.0  # mean 2 at (1, 2): the maximum
    featmap[1, 3, 4] = -2.0  # mean -1 at (3, 4): the minimum
    heat = Visualizer.draw_featmap(featmap)
    assert heat.shape == (4, 5, 3) and heat.dtype == np.uint8
    assert (heat[1, 2] == jet(255)).all() and (heat[3, 4] == jet(0)).all()
    # elsewhere the mean is 0: one third of the way from -1 to 2
    assert (heat[0, 0] == jet(int(255 / 3))).all()


def test_select_max_keeps_the_channel_with_the_largest_sum() -> None:
    featmap = torch.rand(3, 6, 6)
    featmap[1] += 10
    chosen = Visualizer.draw_featmap(featmap, channel_reduction="select_max")
    alone = Visualizer.draw_featmap(featmap[1:2], channel_reduction="squeeze_mean")
    assert (chosen == alone).all()
    assert not (chosen == Visualizer.draw_featmap(featmap)).all()


def test_overlay_blends_with_alpha() -> None:
    featmap = torch.arange(12.0).reshape(1, 3, 4)
    image = np.full((3, 4, 3), 200, dtype=np.uint8)
    heat = Visualizer.draw_featmap(featmap)
    blended = Visualizer.draw_featmap(featmap, overlaid_image=image, alpha=0.25)
    expected = np.rint(0.75 * 200 + 0.25 * heat.astype(float))
    assert np.abs(blended - expected).max() <= 1


def test_map_is_resized_to_the_image_with_a_warning() -> None:
    image = np.zeros((32, 48, 3), dtype=np.uint8)
    with pytest.warns(UserWarning, match=r"feature map's size \(8, 12\) differs from "):
        heat = Visualizer.draw_featmap(torch.rand(4, 8, 12), overlaid_image=image)
    assert heat.shape == (32, 48, 3)
    grey = Visualizer.draw_featmap(torch.rand(4, 32, 48), overlaid_image=image[..., 0])
    assert grey.shape == (32, 48, 3)


def test_resize_shape() -> None:
    heat = Visualizer.draw_featmap(torch.rand(4, 8, 8), resize_shape=(16, 24))
    assert heat.shape == (16, 24, 3)


def test_topk_grid() -> None:
    featmap = torch.rand(6, 40, 40)
    featmap[4] += 5  # the largest sum: first tile
    featmap[0] += 3  # second tile
    grid = Visualizer.draw_featmap(featmap, channel_reduction=None, topk=4, arrangement=(2, 3))
    assert grid.shape == (80, 120, 3)
    # Below the label, each tile is that channel's heatmap.
    first = Visualizer.draw_featmap(featmap[4:5])
    second = Visualizer.draw_featmap(featmap[0:1])
    assert (grid[20:40, :40] == first[20:]).all()
    assert (grid[20:40, 40:80] == second[20:]).all()
    assert (grid[40:, 80:] == 255).all()  # cells past topk stay empty (white)
    assert (grid[:18, :40] == 0).all(axis=-1).any()  # the black "channel: 4" label


def test_topk_zero_shows_one_or_three_channels_as_they_are() -> None:
    rgb = torch.zeros(3, 4, 4)
    rgb[0] = 1.0  # red everywhere
    rgb[2, 0, 0] = 1.0
    image = Visualizer.draw_featmap(rgb, channel_reduction=None, topk=0)
    assert tuple(image[1, 1]) == (255, 0, 0) and tuple(image[0, 0]) == (255, 0, 255)


def test_featmap_errors() -> None:
    # Each is also MMEngine's AssertionError, with MMEngine's words in the message.
    with pytest.raises(
        ValueError,
        match=r"Input dimension must be 3, but got 2: featmap must have shape "
        r"\(C, H, W\), got shape \(4, 4\)",
    ) as error:
        Visualizer.draw_featmap(torch.rand(4, 4))
    assert isinstance(error.value, AssertionError)
    with pytest.raises(
        TypeError, match=r"`featmap` should be torch.Tensor, but got <class 'list'>"
    ) as error:
        Visualizer.draw_featmap([[[1.0]]])
    assert isinstance(error.value, AssertionError)
    with pytest.raises(AssertionError, match=r"channel_reduction must be one of 'squeeze_mean'"):
        Visualizer.draw_featmap(torch.rand(2, 4, 4), channel_reduction="max")
    with pytest.raises(
        AssertionError,
        match=r"The input tensor channel dimension must be 1 or 3 when topk is less than 1, "
        r"but the channel dimension you input is 4",
    ):
        Visualizer.draw_featmap(torch.rand(4, 4, 4), channel_reduction=None, topk=0)
    with pytest.raises(
        AssertionError,
        match=r"The product of row and col in the `arrangement` is less than topk, please set "
        r"the `arrangement` correctly: \(2, 2\) has 4 cells, fewer than topk=5",
    ):
        Visualizer.draw_featmap(
            torch.rand(8, 4, 4), channel_reduction=None, topk=5, arrangement=(2, 2)
        )
    with pytest.raises(ValueError, match=r"overlaid_image must have shape"):
        Visualizer.draw_featmap(torch.rand(1, 4, 4), overlaid_image=np.zeros((4, 4, 2)))
