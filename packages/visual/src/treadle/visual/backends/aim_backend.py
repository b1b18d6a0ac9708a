"""``AimVisBackend``: scalars, images and the config as an Aim run."""

from __future__ import annotations

import datetime
import os
from typing import Any

from treadle.visual import scalars
from treadle.visual.config_view import config_dict
from treadle.visual.image_check import check_image
from treadle.visual.optional import import_tracker
from treadle.visual.registry import VISBACKENDS

from .base import BaseVisBackend, force_init_env


@VISBACKENDS.register_module()
class AimVisBackend(BaseVisBackend):
    """Track metrics, images and hyperparameters in an Aim run (``aim up`` shows them).

    ``init_kwargs`` go to ``aim.Run`` as they are: ``repo`` (default: the nearest ``.aim``
    repository above the working directory, created there if there is none), ``experiment``,
    ``run_hash`` (to resume a run), ``system_tracking_interval`` (seconds, None turns system
    metrics off), ``capture_terminal_logs``, ``log_system_params`` ... The experiment defaults
    to the last two folders of ``save_dir`` joined by ``_`` (``20240101_120000_vis_data`` in a
    runner's work_dir), or to the current time when there is no ``save_dir``. Needs
    ``pip install treadle-visual[aim]``; nothing is imported and no run is created until the
    first ``add_*`` call.

    Args:
        save_dir: Only names the experiment; Aim writes into its repository.
        init_kwargs: Keyword arguments of ``aim.Run``.

    Example:
        >>> backend = AimVisBackend(init_kwargs=dict(repo='work_dir', experiment='resnet'))
        >>> backend.add_config(dict(lr=0.01))
        >>> backend.add_scalars({'loss': 0.3, 'acc': 0.8}, step=10)
        >>> backend.close()
    """

    numbers_only = True  # the Visualizer hands it numbers only

    def __init__(self, save_dir: str | None = None, init_kwargs: dict | None = None) -> None:
        super().__init__(save_dir)
        self._init_kwargs = dict(init_kwargs or {})
        self._aim_run: Any = None

    def _init_env(self) -> None:
        aim = import_tracker("aim", "aim", type(self).__name__)
        self._init_kwargs.setdefault("experiment", self._default_experiment())
        self._aim_run = aim.Run(**self._init_kwargs)

    def _default_experiment(self) -> str:
        if self._save_dir is None:
            return datetime.datetime.now().strftime("%Y%m%d_%H%M%S")
        parts = [part for part in os.path.normpath(self._save_dir).split(os.sep) if part]
        return "_".join(parts[-2:])

    @property  # type: ignore[misc]
    @force_init_env
    def experiment(self) -> Any:
        """The ``aim.Run`` (created on first access)."""
        return self._aim_run

    @force_init_env
    def add_config(self, config: Any, **kwargs: Any) -> None:
        """Record the config as the run's ``hparams`` (a nested dict)."""
        self._aim_run["hparams"] = config_dict(config)

    @force_init_env
    def add_image(self, name: str, image: Any, step: int = 0, **kwargs: Any) -> None:
        """Track an RGB image of shape (H, W, 3) as an ``aim.Image`` under ``name``."""
        from aim import Image  # already imported by _init_env

        checked = check_image(image, name=f"image {name!r}")
        self._aim_run.track(Image(checked), name=name, step=scalars.step_value(step))

    @force_init_env
    def add_scalar(self, name: str, value: Any, step: int = 0, **kwargs: Any) -> None:
        """Track one number; a value that is not a number raises TypeError naming ``name``."""
        value = scalars.scalar_value(name, value)
        self._aim_run.track(value, name=name, step=scalars.step_value(step))

    @force_init_env
    def add_scalars(
        self,
        scalar_dict: dict,
        step: int = 0,
        file_path: str | None = None,
        **kwargs: Any,
    ) -> None:
        """Track each number of ``scalar_dict`` under its key; ``file_path`` is ignored.

        Every value is checked before any is tracked, so a bad one leaves no partial step. An
        ``epoch`` keyword (a runner passes it, see ``Visualizer.add_scalars``) is Aim's own
        ``epoch`` of each tracked value, beside its step.
        """
        step = scalars.step_value(step)
        epoch = kwargs.get("epoch")
        for name, value in scalars.scalar_dict(scalar_dict).items():
            self._aim_run.track(value, name=name, step=step, epoch=epoch)

    def close(self) -> None:
        """Finish the run (its end time is set and its files closed); safe to call twice."""
        if self._aim_run is not None:
            self._aim_run.close()
            self._aim_run = None
            self._env_initialized = False
