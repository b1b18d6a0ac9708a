"""``Visualizer``: draw on an image and send images, scalars and configs to tracker backends."""

from __future__ import annotations

import contextlib
import inspect
import os
import warnings
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from treadle.logging import ManagerMixin

from .backends.base import CALLER_STEP_AXIS, BaseVisBackend
from .draw_masks import MaskDrawingMixin
from .draw_shapes import ShapeDrawingMixin
from .draw_texts import TextDrawingMixin
from .featmap import draw_featmap as _draw_featmap
from .image_check import check_image
from .main_process import master_only
from .registry import VISBACKENDS, VISUALIZERS
from .scalars import logged_scalars
from .show import ImageWindow, cv2_form, show_with_cv2
from .step_axis import global_step_routes
from .strict_checks import SuspiciousInputWarning
from .utils import wait_continue  # a name of this module, as in MMEngine (tests patch it)

if TYPE_CHECKING:
    from .canvas import Canvas

# OpenCV, when a caller put it here (tests patch ``visualizer.cv2`` as they do MMEngine's);
# None imports it on use, since OpenCV is optional.
cv2: Any = None


@VISUALIZERS.register_module()
class Visualizer(ShapeDrawingMixin, TextDrawingMixin, MaskDrawingMixin, ManagerMixin):
    """Draw boxes, texts, masks and heatmaps on an image, and log to tracker backends.

    Drawing methods return the visualizer, so calls chain; ``get_image()`` returns the result
    as an RGB uint8 array. ``add_*`` methods forward to every backend, from the main process
    only. Downstream projects subclass it and implement ``add_datasample``.

    Args:
        name: Instance name, for ``Visualizer.get_instance(name)``.
        image: RGB image (H, W, 3) to draw on, as with ``set_image``.
        vis_backends: Backend configs (dicts, built with VISBACKENDS) or instances; a dict
            may have a ``name`` key to tell two backends of one type apart.
        save_dir: Directory of the run; backends write under ``save_dir/vis_data``.
        fig_save_cfg: ``matplotlib.figure.Figure`` keywords of the drawing figure.
        fig_show_cfg: Figure keywords of the window ``show`` opens.

    Example:
        >>> vis = Visualizer(image=np.zeros((64, 64, 3), dtype=np.uint8))
        >>> _ = vis.draw_bboxes(np.array([[8, 8, 40, 40]]), edge_colors='r').draw_texts(
        ...     'cat', np.array([8, 8]), colors='w')
        >>> vis.get_image().shape
        (64, 64, 3)
        >>> vis = Visualizer(vis_backends=[dict(type='LocalVisBackend')], save_dir='work')
        >>> vis.add_scalars({'loss': 0.5}, step=1)  # doctest: +SKIP
    """

    def __init__(
        self,
        name: str = "visualizer",
        image: np.ndarray | None = None,
        vis_backends: dict | BaseVisBackend | Sequence[dict | BaseVisBackend] | None = None,
        save_dir: str | None = None,
        fig_save_cfg: dict = dict(frameon=False),  # noqa: B006 - MMEngine's signature; never mutated
        fig_show_cfg: dict = dict(frameon=False),  # noqa: B006
    ) -> None:
        super().__init__(name)
        self._dataset_meta: dict | None = None
        self._vis_backends: dict[str, BaseVisBackend] = {}
        self._warned_non_numbers: set[str] = set()  # scalar names some backends did not get
        self.fig_save_cfg = fig_save_cfg
        self.fig_show_cfg = fig_show_cfg
        # The drawing figure is made on first use (see ``_canvas``): a run that only logs
        # scalars never imports matplotlib.
        self._canvas_cfg = dict(fig_save_cfg)
        self._made_canvas: Canvas | None = None
        self._dpi: float | None = None
        self._window = ImageWindow(dict(fig_show_cfg))
        self._default_font_size = 10.0
        for backend_name, backend in _build_backends(vis_backends, save_dir):
            if backend_name in self._vis_backends:
                raise RuntimeError(
                    f"two vis_backends are named {backend_name!r}: give each a distinct "
                    "'name' key in its config"
                )
            self._vis_backends[backend_name] = backend
        if image is not None:
            self.set_image(image)

    @classmethod
    def get_instance(cls, name: str, **kwargs: Any) -> Visualizer:
        """As ManagerMixin's, and also recorded under Visualizer, so that
        ``Visualizer.get_current_instance()`` finds the latest instance of any subclass."""
        instance = super().get_instance(name, **kwargs)
        Visualizer._instance_dict[name] = instance
        return instance

    # -- image -----------------------------------------------------------------------------

    @property
    def _canvas(self) -> Canvas:
        """The matplotlib Agg figure drawn on, made the first time anything asks for it."""
        if self._made_canvas is None:
            # Deferred: matplotlib costs about half a second to import, and a training run
            # that only logs scalars never draws.
            from .canvas import Canvas

            self._made_canvas = Canvas(self._canvas_cfg)
        return self._made_canvas

    @property
    def dpi(self) -> float:
        """Dots per inch of the drawing figure (``fig_save_cfg``'s, else matplotlib's)."""
        return self._canvas.dpi if self._dpi is None else self._dpi

    @dpi.setter
    def dpi(self, value: float) -> None:
        self._dpi = value

    # Assigned values of ``width`` and ``height`` (None: the image's). In MMEngine they are plain
    # attributes that ``set_image`` assigns, and toolbox visualizers that prepare the figure
    # themselves (an OpenCV-backed ``set_image``) assign them too.
    _width: int | None = None
    _height: int | None = None

    @property
    def width(self) -> int:
        """Width of the image drawn on (0 before ``set_image``); may be assigned, as in MMEngine,
        by a subclass whose ``set_image`` prepares the image itself. ``set_image`` resets it."""
        return self._canvas.width if self._width is None else self._width

    @width.setter
    def width(self, value: int) -> None:
        self._width = value

    @property
    def height(self) -> int:
        """Height of the image drawn on (0 before ``set_image``); may be assigned, as ``width``."""
        return self._canvas.height if self._height is None else self._height

    @height.setter
    def height(self, value: int) -> None:
        self._height = value

    def set_image(self, image: np.ndarray) -> None:
        """Start drawing on ``image`` (RGB; (H, W), (H, W, 1), (H, W, 3) or (H, W, 4)); drops
        drawings. ``None`` raises an error that is both a TypeError and an AssertionError."""
        image = check_image(image)
        self._canvas.set_image(image)
        self._width = self._height = None  # the image's size again
        # MMEngine's rule: default text size and line-width limit grow with the image.
        self._default_font_size = max(np.sqrt(self.height * self.width) // 90, 10)

    def get_image(self) -> np.ndarray:
        """The image with every drawing so far, RGB uint8 (H, W, 3), a new array."""
        self._canvas_with_image("get_image")
        return self._canvas.render()

    # MMEngine's figure attributes. Toolboxes draw on them with matplotlib directly
    # (mmpretrain's UniversalVisualizer: ``self.ax_save.text(...)`` then ``get_image()``).
    @property
    def ax_save(self) -> Any:
        """The axes of the drawing figure, in image pixels (x right, y down). What is drawn on
        it shows in ``get_image()`` and is removed by the next ``set_image``."""
        return self._canvas.axes_for_direct_drawing()

    @property
    def fig_save(self) -> Any:
        """The matplotlib Figure the drawings are rendered with (``fig_save_cfg``)."""
        self._canvas.axes_for_direct_drawing()
        return self._canvas.figure

    @property
    def fig_save_canvas(self) -> Any:
        """The Agg canvas of ``fig_save``, for ``img_from_canvas``."""
        self._canvas.axes_for_direct_drawing()
        return self._canvas.agg

    def _canvas_with_image(self, method: str) -> Canvas:
        canvas = self._canvas
        # A subclass may prepare the figure itself instead of calling set_image (MMEngine's
        # way: ``ax_save.imshow(image)``): drawing then goes on that figure as it is.
        if canvas.image is None and not canvas.drawn_directly():
            raise RuntimeError(f"{method}: no image to draw on; call set_image(image) first")
        return canvas

    draw_featmap = staticmethod(_draw_featmap)

    @master_only
    def show(
        self,
        drawn_img: np.ndarray | None = None,
        win_name: str = "image",
        wait_time: float = 0.0,
        continue_key: str = " ",
        backend: str = "matplotlib",
    ) -> Any:
        """Show ``drawn_img`` (default: ``get_image()``) in a window.

        ``wait_time`` seconds, or 0 to wait for ``continue_key`` or the window to close (through
        ``wait_continue``). Under a non-interactive matplotlib backend (Agg, headless machines)
        it warns once and returns at once, where MMEngine would wait forever; in a notebook it
        returns the figure. ``backend='cv2'`` uses OpenCV. ``manager`` is then the matplotlib
        figure manager of the window.
        """
        image = self.get_image() if drawn_img is None else check_image(drawn_img, "drawn_img")
        if backend == "matplotlib":
            figure, inline = self._window.put(image, win_name)
            if inline:  # a notebook displays the returned figure
                return figure
            wait_continue(figure, timeout=wait_time, continue_key=continue_key)
            return None
        if backend == "cv2":
            shown = cv2_form(image if drawn_img is None else drawn_img, image)
            show_with_cv2(shown, win_name, wait_time, window=str(id(self)), cv2=cv2)
            return None
        raise ValueError(f"backend must be 'matplotlib' or 'cv2', got {backend!r}")

    @property
    def manager(self) -> Any:
        """The matplotlib figure manager of ``show``'s window (None before the first show)."""
        return self._window.manager

    # -- backends --------------------------------------------------------------------------

    @property
    def dataset_meta(self) -> dict | None:
        """Meta information of the dataset (class names, palette), for ``add_datasample``."""
        return self._dataset_meta

    @dataset_meta.setter
    def dataset_meta(self, dataset_meta: dict | None) -> None:
        self._dataset_meta = dataset_meta

    def get_backend(self, name: str) -> BaseVisBackend | None:
        """The backend called ``name`` (its config's ``name``, else its class name), or None."""
        return self._vis_backends.get(name)

    @master_only
    def add_config(self, config: Any, **kwargs: Any) -> None:
        """Record the run's config (a Config or a dict) in every backend."""
        for backend in self._vis_backends.values():
            backend.add_config(config, **kwargs)

    @master_only
    def add_graph(self, model: Any, data_batch: Sequence[dict], **kwargs: Any) -> None:
        """Record the graph of ``model`` in every backend that supports it."""
        for backend in self._vis_backends.values():
            backend.add_graph(model, data_batch, **kwargs)

    @master_only
    def add_image(self, name: str, image: np.ndarray, step: int = 0) -> None:
        """Record an RGB uint8 image in every backend."""
        image = check_image(image, name=f"image {name!r}")
        for backend in self._vis_backends.values():
            backend.add_image(name, image, step)

    @master_only
    def add_scalar(self, name: str, value: int | float, step: int = 0, **kwargs: Any) -> None:
        """Record one scalar in every backend: a number (one-element arrays and tensors become
        their number), or any other value MMEngine logs (see :meth:`add_scalars`)."""
        # Converted once here (a tensor's .item() is a device sync), not once per backend.
        values, numbers = logged_scalars({name: value})
        for backend in self._backends_for(values, numbers):
            backend.add_scalar(name, values[name], step, **kwargs)

    @master_only
    def add_scalars(
        self,
        scalar_dict: dict,
        step: int = 0,
        file_path: str | None = None,
        *,
        global_step: int | None = None,
        epoch: int | None = None,
        **kwargs: Any,
    ) -> None:
        """Record several numbers in every backend (``file_path``: a file of their own, for
        backends that write files).

        A value that is not a number goes on as it is, as in MMEngine (LocalVisBackend writes
        it as JSON), except to the backends that record numbers only (``numbers_only``), which
        do not get it: a :class:`~.strict_checks.SuspiciousInputWarning` says so, once per
        name. Under strict checks it raises TypeError before any backend writes.

        Without ``global_step`` every backend writes at ``step``, as in MMEngine. With it (the
        global training iteration the numbers belong to; LoggerHook passes it for train and
        validation scalars alike) the two kinds of backend part ways, so that train and
        validation curves line up in every tracker while ``scalars.json`` keeps its meaning:

        - trackers (``step_axis == "global"``: TensorBoard, W&B, MLflow, ...) write at
          ``global_step``; ``epoch``, when given, is added to the scalars (unless they hold
          an ``epoch`` already) and passed as the ``epoch`` keyword, for trackers with an
          epoch of their own (Aim);
        - LocalVisBackend (``step_axis == "caller"``) writes at ``step`` (the epoch, for
          validation results logged by epoch) and records ``global_step`` as ``"iter"``.

        Example:
            >>> vis.add_scalars({'acc': 0.9}, step=2, global_step=400, epoch=2)  # doctest: +SKIP
        """
        # Converted once (tensor values sync their device), so each backend gets Python
        # numbers and a bad value is refused before any backend writes. Values that are not
        # numbers go on as they came (LocalVisBackend writes them as JSON, as in MMEngine),
        # except to backends that record numbers only.
        all_values, numbers = logged_scalars(scalar_dict)
        backends = list(self._backends_for(all_values, numbers))
        if global_step is None and epoch is None:
            for backend in backends:
                values = all_values if numbers is None or not _numbers_only(backend) else numbers
                backend.add_scalars(values, step, file_path, **kwargs)
            return
        routes = {False: global_step_routes(all_values, step, global_step, epoch)}
        if numbers is not None:
            routes[True] = global_step_routes(numbers, step, global_step, epoch)
        for backend in backends:
            numbers_only = numbers is not None and _numbers_only(backend)
            values, axis = (numbers if numbers_only else all_values), routes[numbers_only]
            if backend.step_axis == CALLER_STEP_AXIS:
                backend.add_scalars(values, step, file_path, **axis.caller_kwargs, **kwargs)
            else:
                backend.add_scalars(
                    axis.tracker_scalars,
                    axis.tracker_step,
                    file_path,
                    **axis.tracker_kwargs,
                    **kwargs,
                )

    def _backends_for(self, values: dict, numbers: dict | None) -> Any:
        """The backends that get a call with ``values``: all of them when ``numbers`` is None
        (every value is a number); else a backend that records numbers only gets ``numbers``
        from add_scalars (and nothing from add_scalar of a non-number), and a warning, once
        per name, says which values it does not get."""
        if numbers is None:
            return self._vis_backends.values()
        skipped = [b for b in self._vis_backends.values() if _numbers_only(b)]
        left_out = [name for name in values if name not in numbers]
        if skipped and not set(left_out) <= self._warned_non_numbers:
            self._warned_non_numbers.update(left_out)
            kinds = ", ".join(sorted({type(b).__name__ for b in skipped}))
            names = ", ".join(map(repr, left_out))
            what = (
                f"scalars {names} are not numbers"
                if len(left_out) > 1
                else (f"scalar {names} is not a number")
            )
            warnings.warn(
                f"{what}: {kinds} record numbers only and do not get it (LocalVisBackend "
                "writes such values as JSON, as MMEngine does)",
                SuspiciousInputWarning,
                stacklevel=4,
            )
        if numbers:
            return self._vis_backends.values()
        return [b for b in self._vis_backends.values() if not _numbers_only(b)]

    @master_only
    def add_datasample(
        self,
        name: str,
        image: np.ndarray,
        data_sample: Any = None,
        draw_gt: bool = True,
        draw_pred: bool = True,
        show: bool = False,
        wait_time: int = 0,
        step: int = 0,
    ) -> None:
        """Draw a data sample (ground truth and/or prediction) and record or show it.

        This base class draws nothing: it is the extension point of downstream visualizers
        (a detection visualizer draws boxes and masks). A subclass typically calls
        ``set_image(image)``, draws ``data_sample`` with the ``draw_*`` methods, then
        ``show(...)`` if ``show`` else ``add_image(name, self.get_image(), step)``.
        """

    def flush(self) -> None:
        """Write what the backends buffer (``scalars.json``'s last seconds) and keep them open;
        backends without a ``flush`` (trackers that send as they go) are left alone. The
        Runner calls it before each checkpoint, so the scalars of every iteration up to a
        checkpoint are on disk with it. treadle's addition to MMEngine's Visualizer.

        Example:
            >>> visualizer.add_scalars({'loss': 0.5}, step=10)  # doctest: +SKIP
            >>> visualizer.flush()  # scalars.json holds step 10 now  # doctest: +SKIP
        """
        for backend in self._vis_backends.values():
            flush = getattr(backend, "flush", None)
            if callable(flush):
                flush()

    def close(self) -> None:
        """Close every backend (flushing what they buffer) and any window ``show`` opened.

        A backend whose close raises does not keep the others open: each is closed, then the
        first error is raised again.
        """
        errors = []
        for backend in self._vis_backends.values():
            try:
                backend.close()
            except Exception as error:  # re-raised below, once the others are closed
                errors.append(error)
        self._window.close()
        if self._made_canvas is not None:
            self._made_canvas.close()
        if errors:
            raise errors[0]

    def __del__(self) -> None:
        # Runs on half-built objects too (a backend config that failed to build): touch
        # nothing that may be missing, and never raise during garbage collection.
        window = self.__dict__.get("_window")
        if window is not None:
            # At interpreter shutdown pyplot may already be torn down.
            with contextlib.suppress(Exception):
                window.close()


def _build_backends(vis_backends: Any, save_dir: str | None) -> list[tuple[str, BaseVisBackend]]:
    """Build the configs, with ``save_dir/vis_data`` as every backend's default save_dir."""
    if vis_backends is None:
        return []
    if isinstance(vis_backends, (dict, BaseVisBackend)):
        vis_backends = [vis_backends]
    if (
        isinstance(vis_backends, (str, bytes))
        or not isinstance(vis_backends, Sequence)
        or not all(isinstance(item, (dict, BaseVisBackend)) for item in vis_backends)
    ):
        raise TypeError(
            "vis_backends must be a backend config dict, a BaseVisBackend, or a list of them, "
            f"got {vis_backends!r:.120}"
        )
    backend_dir = None if save_dir is None else os.path.join(save_dir, "vis_data")
    built = []
    for item in vis_backends:
        name = None
        if isinstance(item, dict):
            cfg = dict(item)  # never change the caller's config
            name = cfg.pop("name", None)
            cfg.setdefault("save_dir", backend_dir)
            item = VISBACKENDS.build(cfg)
        if _needs_save_dir(item):
            # As MMEngine: a backend that writes files but was given nowhere to write them
            # is left out, with a warning, rather than failing the run.
            warnings.warn(
                f"vis_backend {type(item).__name__} needs a save_dir and none was given "
                "(pass save_dir to the Visualizer or to the backend); it is not used",
                UserWarning,
                stacklevel=3,
            )
            continue
        built.append((name or type(item).__name__, item))
    return built


def _needs_save_dir(backend: BaseVisBackend) -> bool:
    parameter = inspect.signature(type(backend).__init__).parameters.get("save_dir")
    return (
        parameter is not None
        and parameter.default is inspect.Parameter.empty
        and getattr(backend, "_save_dir", None) is None
    )


def _numbers_only(backend: Any) -> bool:
    return bool(getattr(backend, "numbers_only", False))
