"""``TensorboardVisBackend``: scalars, images and the config as TensorBoard event files."""

from __future__ import annotations

import os
import warnings
from collections.abc import Mapping
from typing import Any

from treadle.visual import scalars
from treadle.visual.config_view import config_text
from treadle.visual.errors import VisualTypeError, VisualValueError
from treadle.visual.image_check import check_image
from treadle.visual.mmengine_checks import MMEngineChecks
from treadle.visual.optional import import_tracker
from treadle.visual.registry import VISBACKENDS

from .base import BaseVisBackend, force_init_env


@VISBACKENDS.register_module()
class TensorboardVisBackend(BaseVisBackend):
    """Write to TensorBoard event files in ``save_dir`` (``tensorboard --logdir save_dir``).

    Uses PyTorch's ``torch.utils.tensorboard.SummaryWriter``, which needs the ``tensorboard``
    package: ``pip install treadle-visual[tensorboard]``. Nothing is imported and no file is
    created until the first ``add_*`` call. Events are buffered by the writer and flushed by
    :meth:`close`; a backend used again after ``close`` opens a new event file in the same
    directory, which TensorBoard reads as one run.

    Args:
        save_dir: The directory of the event files (created on first write).

    Example:
        >>> import numpy as np
        >>> backend = TensorboardVisBackend(save_dir='work_dir/vis_data')
        >>> backend.add_scalars({'loss': 0.3, 'acc': 0.8}, step=10)
        >>> backend.add_image('pred', np.zeros((32, 32, 3), dtype=np.uint8), step=10)
        >>> backend.close()
    """

    numbers_only = True  # the Visualizer hands it numbers only

    def __init__(self, save_dir: str) -> None:
        if save_dir is None:
            raise ValueError("TensorboardVisBackend needs a save_dir for its event files, got None")
        super().__init__(os.fspath(save_dir))
        self._tensorboard: Any = None

    def _init_env(self) -> None:
        # Checked first so that a missing tensorboard is reported as such, not as a failure
        # deep inside torch.utils.tensorboard.
        import_tracker("tensorboard", "tensorboard", type(self).__name__)
        writer_module = import_tracker(
            "torch.utils.tensorboard", "tensorboard", type(self).__name__
        )
        os.makedirs(self._save_dir, exist_ok=True)
        self._tensorboard = writer_module.SummaryWriter(self._save_dir)

    @property  # type: ignore[misc]
    @force_init_env
    def experiment(self) -> Any:
        """The ``torch.utils.tensorboard.SummaryWriter`` (opened on first access)."""
        return self._tensorboard

    @force_init_env
    def add_config(self, config: Any, **kwargs: Any) -> None:
        """Record the config's text under the tag ``config`` (the TEXT tab)."""
        self._tensorboard.add_text("config", config_text(config))

    @force_init_env
    def add_image(self, name: str, image: Any, step: int = 0, **kwargs: Any) -> None:
        """Record an RGB image of shape (H, W, 3) under ``name`` at ``step``."""
        checked = check_image(image, name=f"image {name!r}")
        self._tensorboard.add_image(name, checked, scalars.step_value(step), dataformats="HWC")

    @force_init_env
    def add_scalar(self, name: str, value: Any, step: int = 0, **kwargs: Any) -> None:
        """Record one number; a value that is not a number is skipped with a warning, as
        MMEngine does."""
        step = scalars.step_value(step)
        number = _number_or_warn(name, value, step)
        if number is not None:
            self._tensorboard.add_scalar(name, number, step)

    @force_init_env
    def add_scalars(
        self,
        scalar_dict: dict,
        step: int = 0,
        file_path: str | None = None,
        **kwargs: Any,
    ) -> None:
        """Record each number of ``scalar_dict`` under its key; ``file_path`` is ignored.

        A value that is not a number is skipped with a warning, the others are written, as in
        MMEngine. Under treadle.compat a ``"step"`` key is refused as MMEngine refuses it (pass
        the step as ``step``); treadle alone records it as a scalar named ``step``.
        """
        step = scalars.step_value(step)
        if not isinstance(scalar_dict, Mapping):
            raise VisualTypeError(
                f"add_scalars expects a dict of name -> number, got {type(scalar_dict).__name__}"
            )
        if MMEngineChecks.enabled and "step" in scalar_dict:
            raise VisualValueError(
                "scalar_dict has a 'step' key: Please set it directly through the step "
                "parameter (MMEngine's check, on under treadle.compat)"
            )
        for name, value in scalar_dict.items():
            number = _number_or_warn(name, value, step)
            if number is not None:
                self._tensorboard.add_scalar(name, number, step)

    def close(self) -> None:
        """Flush the event file and close it; does nothing if nothing was written."""
        if self._tensorboard is not None:
            self._tensorboard.close()
            self._tensorboard = None
            self._env_initialized = False


def _number_or_warn(name: Any, value: Any, step: int) -> int | float | None:
    """``value`` as a Python number, or None after a warning when it is none (a list, a str, a
    tensor of several elements): one bad value must not stop the run, nor the other scalars."""
    try:
        return scalars.scalar_value(name, value)
    except TypeError as error:
        warnings.warn(
            f"{error}: numpy array, torch tensor, int or float are expected, skip it (nothing "
            f"is written for it at step {step})",
            UserWarning,
            stacklevel=4,  # the caller of add_scalar(s), through force_init_env
        )
        return None
