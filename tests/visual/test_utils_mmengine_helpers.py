"""treadle.visual.utils: MMEngine's mmengine.visualization.utils helpers."""

import numpy as np
import pytest
import torch
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from treadle.visual.utils import (
    check_length,
    check_type,
    check_type_and_length,
    color_str2rgb,
    color_val_matplotlib,
    convert_overlay_heatmap,
    img_from_canvas,
    tensor2ndarray,
    value2list,
    wait_continue,
)


def test_checks_name_the_argument():
    check_type("thickness", 2, (int, float))
    with pytest.raises(TypeError, match="`thickness` should be <class 'str'>, but got <class"):
        check_type("thickness", 2, str)
    check_length("colors", ["r", "g"], 2)
    check_length("colors", "r", 5)  # only lists are checked
    with pytest.raises(AssertionError, match="length of colors must equal with or greater than 3"):
        check_length("colors", ["r"], 3)
    with pytest.raises(TypeError, match="`colors`"):
        check_type_and_length("colors", 1, (str, list), 1)


def test_value2list():
    assert value2list("r", str, 3) == ["r", "r", "r"]
    assert value2list(["r", "g"], str, 3) == ["r", "g"]


def test_colours():
    assert color_str2rgb("red") == (255, 0, 0)
    assert color_val_matplotlib("red") == "red"
    assert color_val_matplotlib((255, 0, 0)) == (1.0, 0.0, 0.0)
    assert color_val_matplotlib([(0, 0, 255), "g"]) == [(0.0, 0.0, 1.0), "g"]
    with pytest.raises(ValueError, match="0-255"):
        color_val_matplotlib((300, 0, 0))
    with pytest.raises(TypeError, match="colors must be"):
        color_val_matplotlib(3)


def test_tensor2ndarray():
    array = tensor2ndarray(torch.ones(2, requires_grad=True))
    assert isinstance(array, np.ndarray) and array.tolist() == [1.0, 1.0]
    assert tensor2ndarray([1]) == [1]


def test_heatmap_alone_and_over_an_image():
    values = np.arange(12, dtype=np.float32).reshape(3, 4)
    heat = convert_overlay_heatmap(torch.from_numpy(values)[None])
    assert heat.shape == (3, 4, 3) and heat.dtype == np.uint8
    image = np.zeros((3, 4, 3), dtype=np.uint8)
    blended = convert_overlay_heatmap(values, image, alpha=0.5)
    assert (blended <= heat // 2 + 1).all()
    with pytest.raises(ValueError, match=r"img is \(5, 5\) and feat_map \(3, 4\)"):
        convert_overlay_heatmap(values, np.zeros((5, 5, 3), np.uint8))
    with pytest.raises(ValueError, match="must be"):
        convert_overlay_heatmap(np.zeros((2, 3, 4, 5)))


def test_img_from_canvas():
    figure = Figure(figsize=(2, 1), dpi=10)
    figure.patch.set_facecolor((1.0, 0.0, 0.0))
    canvas = FigureCanvasAgg(figure)
    canvas.draw()
    image = img_from_canvas(canvas)
    assert image.shape == (10, 20, 3) and image.dtype == np.uint8
    assert image[0, 0].tolist() == [255, 0, 0]


def test_wait_continue_returns_at_once_headless():
    assert wait_continue(Figure(), timeout=0) == 0
