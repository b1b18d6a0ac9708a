"""draw_texts layouts that land a few pixels apart, and font sizes that scale with the
image and with the dpi alike in both libraries.

See tests/support/visual_parity.py for how the two libraries are compared. Skipped without
MMEngine: ``hatch run mmengine:parity``.
"""

from __future__ import annotations

import pytest

pytest.importorskip("mmengine")

from visual_parity import (  # in tests/support, on pytest's sys.path
    BACKGROUND,
    LIBRARIES,
    array,
    assert_drawn_alike,
    drawn_by_both,
    gradient_image,
    new_visualizer,
)

# Text layouts where treadle's glyph-cache layout lands 1-3 px from matplotlib's: a second line
# (line spacing), 'center_baseline', and the 4 pt default pad of a box without 'pad' (the box
# comes out 2-3 px narrower and shorter). Compared within 3 px.
TEXT_LAYOUTS = {
    "two-lines": lambda v: v.draw_texts("line one\nline two", array([10, 10]), colors="w"),
    "center_baseline": lambda v: v.draw_texts(
        "gyq", array([20, 40]), colors="w", vertical_alignments="center_baseline", font_sizes=16
    ),
    "box-default-pad": lambda v: v.draw_texts(
        "lbl", array([20, 20]), colors="w", bboxes=dict(facecolor="b")
    ),
    "non-ascii": lambda v: v.draw_texts("café ü", array([10, 10]), colors="w"),
    "baseline": lambda v: v.draw_texts(
        "gyq", array([20, 40]), colors="w", vertical_alignments="baseline", font_sizes=16
    ),
    "partly-outside": lambda v: v.draw_texts("abcdef", array([-10, -5]), colors="w", font_sizes=16),
    "box-with-edge": lambda v: v.draw_texts(
        "lbl",
        array([20, 20]),
        colors="w",
        bboxes=dict(facecolor="r", alpha=0.6, pad=2, edgecolor="w", linewidth=1),
    ),
}


@pytest.mark.parametrize("draw", TEXT_LAYOUTS.values(), ids=TEXT_LAYOUTS.keys())
def test_text_layout_within_a_few_pixels(draw):
    mm_image, tr_image = drawn_by_both(draw)
    assert_drawn_alike(
        mm_image, tr_image, BACKGROUND, mean_abs=3, strong=0.03, coverage=0.95, reach=3
    )


def test_default_font_size_grows_with_the_image_in_both():
    # sqrt(H * W) // 90 = 11 pt on a 1000 x 1000 image (10 pt below about 990 px).
    background = gradient_image(1000, 1000)
    mm_image, tr_image = drawn_by_both(
        lambda v: v.draw_texts("a default-sized label", array([100, 100]), colors="k"), background
    )
    assert_drawn_alike(mm_image, tr_image, background)


def test_fig_save_cfg_dpi_scales_texts_alike():
    # Font sizes are points: at 50 dpi a 20 pt text is 14 px tall in both.
    images = []
    for visual in LIBRARIES.values():
        visualizer = new_visualizer(visual, BACKGROUND, fig_save_cfg=dict(frameon=False, dpi=50))
        assert visualizer.dpi == 50
        images.append(
            visualizer.draw_texts("dpi 50", array([10, 10]), font_sizes=20, colors="w").get_image()
        )
    assert_drawn_alike(*images, BACKGROUND)
