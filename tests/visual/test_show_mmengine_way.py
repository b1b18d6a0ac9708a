"""Issue 41: ``Visualizer.show`` as MMEngine's: a ``manager`` for its window, the wait through
the module's ``wait_continue`` (which code written for MMEngine patches), OpenCV given a grey
image as it came, and every image layout MMEngine shows, (H, W, 1) included."""

from __future__ import annotations

from unittest.mock import MagicMock, call

import numpy as np
import pytest

from treadle.visual import show as show_module
from treadle.visual import visualizer as visualizer_module
from treadle.visual.visualizer import Visualizer


@pytest.fixture(autouse=True)
def headless_warning_once_more(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(show_module, "_warned_headless", False)


def test_show_waits_through_the_modules_wait_continue(monkeypatch: pytest.MonkeyPatch) -> None:
    import matplotlib.pyplot as plt

    wait = MagicMock(return_value=0)
    monkeypatch.setattr(visualizer_module, "wait_continue", wait)
    vis = Visualizer()
    assert vis.manager is None  # no window yet
    image = np.ones([1, 1, 1])
    with pytest.warns(UserWarning, match=r"backend 'agg' cannot open windows"):
        assert vis.show(drawn_img=image, win_name="one", wait_time=0) is None
    figure = vis.manager.canvas.figure
    vis.show(drawn_img=image, win_name="two", wait_time=1.5, continue_key="q")
    assert vis.manager.canvas.figure is figure  # one window, reused
    assert wait.call_args_list == [
        call(figure, timeout=0, continue_key=" "),
        call(figure, timeout=1.5, continue_key="q"),
    ]
    assert not plt.get_fignums()  # headless: the figure is not left open in pyplot
    vis.close()
    assert vis.manager is None


def test_show_under_agg_without_a_patch_returns_at_once() -> None:
    vis = Visualizer(image=np.zeros((6, 8, 3), np.uint8))
    with pytest.warns(UserWarning, match=r"cannot open windows"):
        assert vis.show(wait_time=0) is None  # the real wait_continue returns at once
    assert vis.manager.canvas.figure.axes[0].images[0].get_array().shape == (6, 8, 3)


def test_cv2_gets_a_grey_image_as_given_and_a_colour_one_as_bgr(monkeypatch) -> None:
    cv2 = MagicMock()
    monkeypatch.setattr(visualizer_module, "cv2", cv2)
    vis = Visualizer()
    grey = np.ones([2, 3, 1])
    vis.show(drawn_img=grey, win_name="grey", wait_time=0.5, backend="cv2")
    window = str(id(vis))
    cv2.imshow.assert_called_once_with(window, grey)
    assert cv2.imshow.call_args.args[1] is grey
    cv2.waitKey.assert_called_once_with(500)
    cv2.setWindowTitle.assert_called_with(window, "grey")
    rgb = np.zeros((2, 3, 3), np.uint8)
    rgb[..., 0] = 255
    vis.show(drawn_img=rgb, backend="cv2")
    shown = cv2.imshow.call_args.args[1]
    assert (shown[..., 2] == 255).all() and not shown[..., 0].any()


def test_show_refuses_what_is_no_image() -> None:
    with pytest.raises(ValueError, match=r"drawn_img must have shape \(H, W, 3\)"):
        Visualizer().show(drawn_img=np.ones((2, 3, 2)), backend="cv2")
