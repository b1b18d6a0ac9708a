"""``ClearMLVisBackend``: scalars, images, the config and artifacts in a ClearML task."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from treadle.visual import scalars
from treadle.visual.config_view import config_dict
from treadle.visual.image_check import check_image
from treadle.visual.optional import import_tracker
from treadle.visual.registry import VISBACKENDS

from .base import BaseVisBackend, force_init_env


@VISBACKENDS.register_module()
class ClearMLVisBackend(BaseVisBackend):
    """Report to a ClearML task, created by ``clearml.Task.init`` on the first ``add_*`` call.

    Needs ``pip install treadle-visual[clearml]``. Each scalar is reported as its own plot
    (title and series both the scalar's name) at iteration ``step``. Offline use: set
    ``CLEARML_OFFLINE_MODE=1`` before Python starts (or call ``clearml.Task.set_offline(True)``);
    the task is then kept in ClearML's cache folder for ``clearml-task --import-offline-session``.

    Args:
        save_dir: Not used by ClearML; kept so that every backend is built the same way.
        init_kwargs: Keyword arguments of ``clearml.Task.init`` (project_name, task_name, ...).
        artifact_suffix: At :meth:`close`, files of the config's ``work_dir`` (not its
            subfolders) ending with one of these are uploaded as task artifacts.

    Example:
        >>> backend = ClearMLVisBackend(init_kwargs=dict(project_name='demo', task_name='run'))
        >>> backend.add_scalars({'loss': 0.3}, step=10)  # doctest: +SKIP
        >>> backend.close()
    """

    numbers_only = True  # the Visualizer hands it numbers only

    def __init__(
        self,
        save_dir: str | None = None,
        init_kwargs: dict | None = None,
        artifact_suffix: str | tuple[str, ...] = (".py", ".pth"),
    ) -> None:
        super().__init__(None if save_dir is None else os.fspath(save_dir))
        self._init_kwargs = dict(init_kwargs or {})
        self._artifact_suffix = (
            (artifact_suffix,) if isinstance(artifact_suffix, str) else tuple(artifact_suffix)
        )
        self._clearml: Any = None
        self._task: Any = None
        self._logger: Any = None
        self._work_dir: str | None = None

    def _init_env(self) -> None:
        clearml = import_tracker("clearml", "clearml", type(self).__name__)
        self._task = clearml.Task.init(**self._init_kwargs)
        self._logger = self._task.get_logger()
        self._clearml = clearml

    @property  # type: ignore[misc]
    @force_init_env
    def experiment(self) -> Any:
        """The ``clearml`` module, as in MMEngine (``clearml.Task.current_task()`` is the task)."""
        return self._clearml

    @force_init_env
    def add_config(self, config: Any, **kwargs: Any) -> None:
        """Record the config as the task's configuration; remember its ``work_dir``."""
        values = config_dict(config)
        self._task.connect_configuration(values)
        work_dir = values.get("work_dir") if isinstance(values, Mapping) else None
        self._work_dir = os.fspath(work_dir) if work_dir else None

    @force_init_env
    def add_image(self, name: str, image: Any, step: int = 0, **kwargs: Any) -> None:
        """Report an RGB image of shape (H, W, 3) as a debug sample at iteration ``step``."""
        checked = check_image(image, name=f"image {name!r}")
        step = scalars.step_value(step)
        self._logger.report_image(title=name, series=name, iteration=step, image=checked)

    @force_init_env
    def add_scalar(self, name: str, value: Any, step: int = 0, **kwargs: Any) -> None:
        """Report one number; a value that is not a number raises TypeError naming ``name``."""
        value, step = scalars.scalar_value(name, value), scalars.step_value(step)
        self._logger.report_scalar(title=name, series=name, value=value, iteration=step)

    @force_init_env
    def add_scalars(
        self,
        scalar_dict: dict,
        step: int = 0,
        file_path: str | None = None,
        **kwargs: Any,
    ) -> None:
        """Report every number of ``scalar_dict`` at ``step``; ``file_path`` is ignored.

        Every value is checked before any is reported, so a bad one leaves no partial step.
        """
        step = scalars.step_value(step)
        for name, value in scalars.scalar_dict(scalar_dict).items():
            self._logger.report_scalar(title=name, series=name, value=value, iteration=step)

    def close(self) -> None:
        """Upload the work_dir's artifacts, then close the task (flushing every report).

        Safe to call twice, and does nothing if nothing was reported.
        """
        if self._task is None:
            return
        for path in self._artifact_paths():
            self._task.upload_artifact(path.name, str(path))
        self._task.close()
        self._task = self._logger = None
        self._env_initialized = False

    def _artifact_paths(self) -> list[Path]:
        if self._work_dir is None or not os.path.isdir(self._work_dir):
            return []
        return sorted(
            path
            for path in Path(self._work_dir).iterdir()
            if path.is_file() and path.name.endswith(self._artifact_suffix)
        )
