"""draw_featmap: the same shapes and the same normalised maps, coloured by each library's JET.

See tests/support/visual_parity.py for how the two libraries are compared. Skipped without
MMEngine: ``hatch run mmengine:parity``.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

pytest.importorskip("mmengine")

import torch
from visual_parity import (  # in tests/support, on pytest's sys.path
    FEATMAP,
    LIBRARIES,
    OVERLAY,
    gradient_image,
    in_lut,
    jet_levels,
    matplotlib_jet,
    mm_visual,
    new_visualizer,
    opencv_jet,
    tr_visual,
)

FEATMAP_CALLS = {
    "squeeze_mean": dict(),
    "select_max": dict(channel_reduction="select_max"),
    "topk4-2x2": dict(channel_reduction=None, topk=4, arrangement=(2, 2)),
    "topk3-2x3-empty-cells": dict(channel_reduction=None, topk=3, arrangement=(2, 3)),
    "topk-more-than-channels": dict(channel_reduction=None, topk=8, arrangement=(3, 3)),
    "topk0-one-channel": dict(channel_reduction=None, topk=0, featmap=FEATMAP[:1]),
    "overlay": dict(overlaid_image=OVERLAY),
    "overlay-grey": dict(overlaid_image=OVERLAY[..., 0]),
    "overlay-select_max-alpha": dict(
        overlaid_image=OVERLAY, channel_reduction="select_max", alpha=0.3
    ),
    "overlay-bigger-image": dict(overlaid_image=gradient_image(80, 96)),
    "overlay-topk": dict(
        overlaid_image=OVERLAY, channel_reduction=None, topk=4, arrangement=(2, 2)
    ),
    "resize": dict(resize_shape=(60, 72)),
    "resize-overlay": dict(overlaid_image=OVERLAY, resize_shape=(60, 72)),
}


def featmaps_by_both(call):
    call = dict(call)
    featmap = call.pop("featmap", FEATMAP)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # the size-mismatch warning
        return (
            mm_visual.Visualizer.draw_featmap(featmap, **call),
            tr_visual.Visualizer.draw_featmap(featmap, **call),
        )


@pytest.mark.parametrize("call", FEATMAP_CALLS.values(), ids=FEATMAP_CALLS.keys())
def test_featmap_shape_and_normalised_map(call):
    mm_image, tr_image = featmaps_by_both(call)
    assert mm_image.shape == tr_image.shape and mm_image.dtype == tr_image.dtype == np.uint8
    overlaid = "overlaid_image" in call
    grid = call.get("channel_reduction", "squeeze_mean") is None and call.get("topk", 20) > 0
    if not grid:
        if overlaid:
            # Blended with the image: only loosely comparable (two JETs, two resizers).
            assert np.abs(mm_image.astype(int) - tr_image.astype(int)).mean() < 6
        else:
            # The same levels, each coloured by its library's JET: at most a few of 256 apart
            # (float rounding at level boundaries), the same almost everywhere.
            levels = np.abs(
                jet_levels(mm_image, opencv_jet()) - jet_levels(tr_image, matplotlib_jet())
            )
            assert levels.max() <= 6 and levels.mean() < 0.1
        return
    # A grid of (H, W) tiles: the same channels in the same cells; empty cells white in both.
    rows, cols = call["arrangement"]
    height, width = FEATMAP.shape[1:]
    shown = min(call["topk"], FEATMAP.shape[0])
    for cell in range(rows * cols):
        row, col = divmod(cell, cols)
        tiles = [
            image[row * height : (row + 1) * height, col * width : (col + 1) * width]
            for image in (mm_image, tr_image)
        ]
        if cell >= shown:
            assert (tiles[0] == 255).all() and (tiles[1] == 255).all(), cell
            continue
        # The label 'channel: N' sits in the top 20 rows, in black, in both.
        for tile in tiles:
            assert (tile[:20].max(axis=-1) < 60).sum() > 20, cell
        below = [tile[20:] for tile in tiles]
        if overlaid:
            assert np.abs(below[0].astype(int) - below[1].astype(int)).mean() < 6, cell
        else:
            levels = np.abs(
                jet_levels(below[0], opencv_jet()) - jet_levels(below[1], matplotlib_jet())
            )
            assert levels.max() <= 6 and levels.mean() < 0.1, cell


def test_featmap_is_a_static_method_in_both():
    for visual in LIBRARIES.values():
        from_instance = new_visualizer(visual).draw_featmap(FEATMAP)
        assert np.array_equal(from_instance, visual.Visualizer.draw_featmap(FEATMAP))


def test_featmap_of_a_constant_map_is_the_lowest_jet_colour_in_both():
    mm_image, tr_image = featmaps_by_both(dict(featmap=torch.ones(2, 8, 8)))
    assert np.array_equal(mm_image, tr_image)


def test_featmap_warns_in_both_when_the_image_size_differs():
    for visual in LIBRARIES.values():
        with pytest.warns(UserWarning, match="interpolated|resized"):
            visual.Visualizer.draw_featmap(FEATMAP, overlaid_image=gradient_image(20, 24))


def test_deviation_featmap_colormap_is_matplotlibs_jet():
    # Deviation (treadle/visual/featmap.py, _jet): heatmaps use matplotlib's 'jet', MMEngine
    # OpenCV's COLORMAP_JET; the two tables differ by up to ~34 per channel at some levels.
    mm_image, tr_image = featmaps_by_both(dict())
    assert in_lut(mm_image, opencv_jet()) and not in_lut(mm_image, matplotlib_jet())
    assert in_lut(tr_image, matplotlib_jet()) and not in_lut(tr_image, opencv_jet())


def test_deviation_featmap_three_channels_shown_as_rgb():
    # Deviation (draw_featmap's docstring: "3 channels as an RGB image"): with
    # channel_reduction=None and topk <= 0, a 3-channel map is min-max scaled and shown as an
    # RGB image, as MMEngine's docstring says; MMEngine's code hands it to OpenCV's
    # applyColorMap, which turns it grey and colours that with JET.
    featmap = FEATMAP[:3]
    mm_image, tr_image = featmaps_by_both(dict(featmap=featmap, channel_reduction=None, topk=0))
    values = featmap.permute(1, 2, 0).numpy()
    scaled = (values - values.min()) / (values.max() - values.min()) * 255
    assert np.abs(tr_image.astype(float) - scaled).max() <= 1
    assert in_lut(mm_image, opencv_jet())
