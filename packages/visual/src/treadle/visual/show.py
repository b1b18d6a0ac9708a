"""Show an image in a window: matplotlib (default) or OpenCV; a no-op when headless.

Under a non-interactive matplotlib backend (Agg, the default on a machine without a display,
and in tests) there is no window to open: ``show`` warns once and returns at once, instead
of waiting forever for a key press that cannot come, as MMEngine does there.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np

from .optional import import_tracker

_warned_headless = False


class ImageWindow:
    """One reusable matplotlib window (a pyplot figure) for ``Visualizer.show``.

    Under a non-interactive backend the figure is made without pyplot (nothing can be shown,
    and pyplot would keep it open): it still holds the image, for a caller that reads it from
    ``manager.canvas.figure``.
    """

    def __init__(self, fig_cfg: dict) -> None:
        self._fig_cfg = fig_cfg
        self._figure: Any = None
        self._headless = False  # whether _figure is an off-screen one

    @property
    def manager(self) -> Any:
        """The figure manager of the window, None before the first ``put``."""
        return None if self._figure is None else self._figure.canvas.manager

    def put(self, image: np.ndarray, title: str) -> tuple[Any, bool]:
        """Show ``image`` in the window titled ``title``; returns (the figure, whether it is
        inline, i.e. in a notebook that displays the returned figure). Under a headless
        backend it warns once: the caller's ``wait_continue`` then returns at once."""
        import matplotlib.pyplot as plt

        backend = plt.get_backend().lower()
        inline = "inline" in backend
        headless = not inline and not _is_interactive(backend)
        if headless:
            _warn_headless(backend)
        if (
            self._figure is None
            or self._headless != headless
            or not (headless or plt.fignum_exists(self._figure.number))  # closed by the user
        ):
            self.close()
            self._figure = (
                _offscreen_figure(self._fig_cfg) if headless else plt.figure(**self._fig_cfg)
            )
            self._headless = headless
        figure = self._figure
        figure.clear()
        figure.subplots_adjust(left=0, right=1, bottom=0, top=1)
        axes = figure.add_subplot()
        axes.set_axis_off()
        axes.imshow(image)
        manager = figure.canvas.manager
        if manager is not None:
            manager.set_window_title(title)
        return figure, inline

    def close(self) -> None:
        if self._figure is not None:
            import matplotlib.pyplot as plt

            plt.close(self._figure)
            self._figure = None


def _offscreen_figure(fig_cfg: dict) -> Any:
    """A figure with a canvas and a manager, outside pyplot (which would keep it open)."""
    from matplotlib.backend_bases import FigureManagerBase
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    figure = Figure(**fig_cfg)
    FigureManagerBase(FigureCanvasAgg(figure), 0)
    return figure


def cv2_form(given: np.ndarray, checked: np.ndarray) -> np.ndarray:
    """What OpenCV's ``imshow`` is given for an RGB image: a grey one (H, W) or (H, W, 1) as the
    caller gave it, as MMEngine passes every image (the channel order does not matter there);
    a colour one as BGR, the order OpenCV shows (MMEngine passes RGB, and its reds show blue).
    ``checked`` is ``given`` through ``check_image``."""
    if given.ndim == 2 or (given.ndim == 3 and given.shape[2] == 1):
        return given
    return np.ascontiguousarray(checked[..., ::-1])


def show_with_cv2(
    image: np.ndarray, title: str, wait_time: float, window: str, cv2: Any = None
) -> None:
    """OpenCV's window for ``image`` as :func:`cv2_form` gives it; OpenCV is optional
    (``pip install opencv-python``). ``cv2`` is the module to use, imported here when None."""
    if cv2 is None:
        try:
            cv2 = import_tracker("cv2", "cv2", "Visualizer.show(backend='cv2')")
        except ImportError as error:
            raise ImportError(
                "Visualizer.show(backend='cv2') needs OpenCV: pip install opencv-python "
                "(or use the default backend='matplotlib')"
            ) from error
    cv2.namedWindow(window)
    cv2.setWindowTitle(window, title)
    cv2.imshow(window, image)
    cv2.waitKey(math.ceil(wait_time * 1000))


def _is_interactive(backend: str) -> bool:
    from matplotlib import backends

    names = getattr(backends, "backend_registry", None)
    if names is not None:  # matplotlib >= 3.9
        from matplotlib.backends import BackendFilter

        return backend not in names.list_builtin(BackendFilter.NON_INTERACTIVE)
    from matplotlib.rcsetup import non_interactive_bk

    return backend not in non_interactive_bk


def _warn_headless(backend: str) -> None:
    global _warned_headless
    if not _warned_headless:
        _warned_headless = True
        warnings.warn(
            f"Visualizer.show: matplotlib's backend {backend!r} cannot open windows, so "
            "nothing is shown and show() returns at once. Use get_image() or add_image(), or "
            "set an interactive backend (MPLBACKEND=TkAgg) on a machine with a display.",
            UserWarning,
            stacklevel=5,  # the caller of Visualizer.show
        )


def _wait(figure: Any, wait_time: float, continue_key: str) -> None:
    """Keep the window live for ``wait_time`` s (0: until ``continue_key`` or closing it)."""
    pressed: list[Any] = []

    def on_event(event: Any) -> None:
        if getattr(event, "key", None) in (continue_key, None):
            pressed.append(event)
            figure.canvas.stop_event_loop()

    ids = [figure.canvas.mpl_connect(name, on_event) for name in ("key_press_event", "close_event")]
    try:
        # A timeout <= 0 makes matplotlib's event loop run until stop_event_loop.
        while True:
            figure.canvas.start_event_loop(wait_time if wait_time > 0 else 0)
            if pressed or wait_time > 0:
                break
    finally:
        for cid in ids:
            figure.canvas.mpl_disconnect(cid)
