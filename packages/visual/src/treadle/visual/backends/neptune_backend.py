"""``NeptuneVisBackend``: scalars, images and the config in a Neptune run."""

from __future__ import annotations

import os
from typing import Any

from treadle.visual import scalars
from treadle.visual.config_view import config_text
from treadle.visual.image_check import check_image
from treadle.visual.optional import import_tracker
from treadle.visual.registry import VISBACKENDS

from .base import BaseVisBackend, force_init_env


@VISBACKENDS.register_module()
class NeptuneVisBackend(BaseVisBackend):
    """Log to a Neptune run, created by ``neptune.init_run`` on the first ``add_*`` call.

    Needs ``pip install treadle-visual[neptune]``. Each scalar is a float series at the path
    of its name, appended at ``step``. Without a project or API token (neither in
    ``init_kwargs`` nor in ``NEPTUNE_PROJECT`` / ``NEPTUNE_API_TOKEN``) and no mode chosen
    (``init_kwargs['mode']`` or ``NEPTUNE_MODE``), the run is ``offline``: it is kept under
    ``.neptune/`` (or ``NEPTUNE_DATA_DIRECTORY``) for ``neptune sync``.

    Images go to one series per name, ``images/<name>``: Neptune keeps one value per step in a
    series, so MMEngine's single ``images`` series lost all but one image logged at a step.

    Args:
        save_dir: Not used by Neptune; kept so that every backend is built the same way.
        init_kwargs: Keyword arguments of ``neptune.init_run`` (project, api_token, mode, ...).

    Example:
        >>> backend = NeptuneVisBackend(init_kwargs=dict(mode='offline'))
        >>> backend.add_scalars({'loss': 0.3}, step=10)  # doctest: +SKIP
        >>> backend.close()
    """

    numbers_only = True  # the Visualizer hands it numbers only

    def __init__(self, save_dir: str | None = None, init_kwargs: dict | None = None) -> None:
        super().__init__(None if save_dir is None else os.fspath(save_dir))
        self._init_kwargs = dict(init_kwargs or {})
        self._neptune: Any = None
        self._last_points: dict[str, tuple[int, Any]] = {}  # name -> (step, value) last appended

    def _init_env(self) -> None:
        neptune = import_tracker("neptune", "neptune", type(self).__name__)
        init_kwargs = dict(self._init_kwargs)
        if "mode" not in init_kwargs and not os.environ.get("NEPTUNE_MODE"):
            has_project = init_kwargs.get("project") or os.environ.get("NEPTUNE_PROJECT")
            has_token = init_kwargs.get("api_token") or os.environ.get("NEPTUNE_API_TOKEN")
            if not (has_project and has_token):
                init_kwargs["mode"] = "offline"
        self._neptune = neptune.init_run(**init_kwargs)

    @property  # type: ignore[misc]
    @force_init_env
    def experiment(self) -> Any:
        """The ``neptune.Run``."""
        return self._neptune

    @force_init_env
    def add_config(self, config: Any, **kwargs: Any) -> None:
        """Upload the config's text as the file ``config``."""
        from neptune.types import File

        self._neptune["config"].upload(File.from_content(config_text(config)))

    @force_init_env
    def add_image(self, name: str, image: Any, step: int = 0, **kwargs: Any) -> None:
        """Append an RGB image of shape (H, W, 3) to the series ``images/<name>`` at ``step``."""
        from neptune.types import File
        from PIL import Image

        # A PIL image is stored as it is; a numpy array would go through Neptune's guess of
        # its value range, which rescales a dark uint8 image (all values <= 1) by 255.
        pixels = Image.fromarray(check_image(image, name=f"image {name!r}"))
        self._neptune[f"images/{name}"].append(File.as_image(pixels), step=scalars.step_value(step))

    @force_init_env
    def add_scalar(self, name: str, value: Any, step: int = 0, **kwargs: Any) -> None:
        """Append one number to the series ``name``; a non-number raises TypeError naming it."""
        value = scalars.scalar_value(name, value)
        self._neptune[name].append(value, step=scalars.step_value(step))

    @force_init_env
    def add_scalars(
        self,
        scalar_dict: dict,
        step: int = 0,
        file_path: str | None = None,
        **kwargs: Any,
    ) -> None:
        """Append every number of ``scalar_dict`` at ``step``; ``file_path`` is ignored.

        Every value is checked before any is written, so a bad one leaves no partial step. A
        value that repeats the last one of its series at the same step is left out: Neptune
        keeps one value per step, and a runner logs ``epoch`` in the train row and in the
        validation row of the same iteration.
        """
        step = scalars.step_value(step)
        for name, value in scalars.scalar_dict(scalar_dict).items():
            if self._last_points.get(name) == (step, value):
                continue
            self._last_points[name] = (step, value)
            self._neptune[name].append(value, step=step)

    def close(self) -> None:
        """Stop the run: flush its queue and end its background threads. Safe to call twice."""
        if self._neptune is None:
            return
        self._neptune.stop()
        self._neptune = None
        self._last_points = {}
        self._env_initialized = False
