"""``LocalVisBackend``: scalars, config and images as plain files under ``save_dir``.

The default backend: nothing to install, and the files it writes are what
``python -m treadle.visual plot`` reads. The layout is MMEngine's::

    save_dir/
        scalars.json      one JSON object per line: the scalars of one call, its "step" and,
                          when the caller named it, the training iteration "iter"
        config.py         the config's text
        vis_image/        NAME_STEP.png for each image
"""

from __future__ import annotations

import io
import json
import os
from collections.abc import Mapping
from typing import Any

from treadle.fileio import atomic_write

from ..config_view import config_text
from ..errors import VisualTypeError, VisualValueError
from ..image_check import check_image
from ..mmengine_checks import MMEngineChecks
from ..registry import VISBACKENDS
from ..scalars import NotANumber, allow_non_number, json_value, logged_value, step_value
from ..scalars import scalar_dict as checked_scalars
from .base import CALLER_STEP_AXIS, BaseVisBackend, force_init_env
from .scalar_writer import DEFAULT_FLUSH_INTERVAL, BufferedLineWriter


@VISBACKENDS.register_module()
class LocalVisBackend(BaseVisBackend):
    """Write scalars, the config and images to files under ``save_dir``.

    Scalars are buffered in memory and appended to ``scalars.json`` at most every
    ``flush_interval`` seconds (by the next call, or by a background thread when logging
    pauses), at ``close()``, when the backend is garbage collected, and at interpreter exit; a
    crash of the process loses at most the last ``flush_interval`` seconds of scalars. Under
    treadle.compat (``write_through``) each call's line is in the file when the call returns,
    as in MMEngine, whose users read the file while the backend is open.
    Directories are created at the first write, on the main process only.

    ``scalars.json`` keeps the step its caller chose (MMEngine's meaning: a runner writes
    validation results at their epoch unless ``log_metric_by_epoch=False``); when the caller
    also names the training iteration (``global_step``, which ``Visualizer.add_scalars`` passes
    on), the line holds it as ``"iter"``, the axis ``treadle plot`` draws every curve on.

    Args:
        save_dir: The directory of the files (a Visualizer passes ``WORK_DIR/TIMESTAMP/vis_data``).
        img_save_dir: Folder of the images, relative to ``save_dir``.
        config_save_file: File name of the config; must end in ``.py`` (else an error that is
            both a ValueError and MMEngine's AssertionError).
        scalar_save_file: File name of the scalars; must end in ``.json`` (likewise).
        flush_interval: Seconds a logged scalar may stay in memory before it is written.

    Example:
        >>> import numpy as np
        >>> backend = LocalVisBackend(save_dir='work/vis_data')
        >>> backend.add_scalars({'loss': 0.52, 'lr': 0.01}, step=10)
        >>> backend.add_image('pred', np.zeros((32, 32, 3), dtype=np.uint8), step=10)
        >>> backend.close()  # scalars.json now holds {"loss": 0.52, "lr": 0.01, "step": 10}
    """

    step_axis = CALLER_STEP_AXIS
    #: Whether a line names the training iteration as ``"iter"``; treadle-compat turns it off
    #: so that scalars.json holds exactly MMEngine's keys (toolbox scripts read that file).
    write_iteration = True
    #: Whether each scalars line is written to its file at once instead of buffered;
    #: treadle-compat turns it on (MMEngine appends each call's line before returning).
    write_through = False

    def __init__(
        self,
        save_dir: str | os.PathLike | None,
        img_save_dir: str = "vis_image",
        config_save_file: str = "config.py",
        scalar_save_file: str = "scalars.json",
        flush_interval: float = DEFAULT_FLUSH_INTERVAL,
    ) -> None:
        _check_suffix("config_save_file", config_save_file, "py")
        _check_suffix("scalar_save_file", scalar_save_file, "json")
        if not flush_interval > 0:
            raise ValueError(
                f"flush_interval must be a positive number of seconds, got {flush_interval!r}"
            )
        super().__init__(None if save_dir is None else os.fspath(save_dir))
        self._img_save_dir = img_save_dir
        self._config_save_file = config_save_file
        self._scalar_save_file = scalar_save_file
        self._flush_interval = flush_interval
        self._writers: dict[str, BufferedLineWriter] = {}  # path -> its writer, opened lazily
        self._non_numbers: set[str] = set()  # names already warned about (not a number)

    def _init_env(self) -> None:
        if self._save_dir is None:
            raise ValueError(
                "LocalVisBackend needs a save_dir to write to, got None (a Visualizer passes "
                "its save_dir joined with 'vis_data')"
            )
        os.makedirs(self._save_dir, exist_ok=True)
        # From here on the three are full paths, as in MMEngine.
        self._img_save_dir = os.path.join(self._save_dir, self._img_save_dir)
        self._config_save_file = os.path.join(self._save_dir, self._config_save_file)
        self._scalar_save_file = os.path.join(self._save_dir, self._scalar_save_file)

    @property  # type: ignore[misc]
    @force_init_env
    def experiment(self) -> LocalVisBackend:
        """The backend itself: the files are the experiment."""
        return self

    @force_init_env
    def add_config(self, config: Any, **kwargs: Any) -> None:
        """Write the config's text (a ``Config``'s ``pretty_text``, or a dict) to config.py."""
        atomic_write(self._config_save_file, config_text(config).encode("utf-8"))

    @force_init_env
    def add_image(self, name: str, image: Any, step: int = 0, **kwargs: Any) -> None:
        """Save the RGB ``image`` as ``img_save_dir/{name}_{step}.png``.

        Integer and float images in [0, 255] are saved as uint8; under treadle.compat only
        uint8 images are taken, as in MMEngine.
        """
        if MMEngineChecks.enabled and getattr(image, "dtype", None) != "uint8":
            raise VisualTypeError(
                f"image {name!r} must have dtype uint8, got {getattr(image, 'dtype', type(image))}"
                " (MMEngine's check, on under treadle.compat)"
            )
        image = check_image(image, name=f"image {name!r}")
        from PIL import Image  # matplotlib's own image library, loaded only to save images

        encoded = io.BytesIO()
        Image.fromarray(image).save(encoded, format="png")  # (H, W, 3) uint8: an RGB PNG
        path = os.path.join(self._img_save_dir, f"{name}_{step_value(step)}.png")
        # A name like 'val/pred' puts the image in a subfolder instead of failing.
        os.makedirs(os.path.dirname(path), exist_ok=True)
        atomic_write(path, encoded.getbuffer())

    @force_init_env
    def add_scalar(self, name: str, value: Any, step: int = 0, **kwargs: Any) -> None:
        """Append ``{name: value, "step": step}`` to scalars.json.

        A value that is not a number is written as JSON, as MMEngine writes it, with a
        warning the first time for each name (see :meth:`add_scalars`).
        """
        record = {name: self._loggable(name, value), "step": step_value(step)}
        self._append(record, self._scalar_save_file)

    @force_init_env
    def add_scalars(
        self,
        scalar_dict: dict,
        step: int = 0,
        file_path: str | None = None,
        **kwargs: Any,
    ) -> None:
        """Append the scalars and their step as one line of scalars.json.

        A ``"step"`` key in ``scalar_dict`` wins over ``step``. With ``file_path`` (a ``.json``
        name relative to ``save_dir``, other than scalars.json) the line goes to that file too.
        A ``global_step`` keyword (the training iteration) is written as ``"iter"`` unless the
        scalars already hold an ``"iter"``.

        Numbers (numpy numbers, one-element arrays and tensors too) are written as numbers.
        Other values are written as JSON, as MMEngine writes them (numpy arrays and tensors as
        lists), with a :class:`~treadle.visual.strict_checks.SuspiciousInputWarning` the first
        time for each name, since a plot or a tracker skips them; a value JSON cannot hold
        raises TypeError ("... is unsupported for json dump"). Under strict checks a value
        that is not a number raises TypeError.
        """
        if not isinstance(scalar_dict, Mapping):
            checked_scalars(scalar_dict)  # raises the error that is also MMEngine's assertion
        record = {}  # a new dict: the caller's is left as it was
        for name, value in scalar_dict.items():
            if not isinstance(name, str):
                raise TypeError(f"scalar names must be str, got {name!r} ({type(name).__name__})")
            plain = type(value) is float or type(value) is int  # the common case, checked first
            record[name] = value if plain else self._loggable(name, value)
        record.setdefault("step", step_value(step))
        global_step = kwargs.get("global_step")
        if global_step is not None and self.write_iteration:
            record.setdefault("iter", step_value(global_step))
        line = json.dumps(record) + "\n"
        if file_path is not None:
            self._writer(self._extra_scalar_file(file_path)).write(line)
        self._writer(self._scalar_save_file).write(line)

    def flush(self) -> None:
        """Write every buffered scalar to its file now."""
        for writer in self._writers.values():
            writer.flush()

    def close(self) -> None:
        """Write the buffered scalars and close the files; a later write opens them again."""
        writers, self._writers = self._writers, {}
        for writer in writers.values():
            writer.close()

    def _loggable(self, name: Any, value: Any) -> Any:
        """``value`` as scalars.json holds it: a number, or a JSON value with a warning."""
        number = logged_value(name, value)
        if not isinstance(number, NotANumber):
            return number
        written = json_value(name, value)
        if name not in self._non_numbers:
            self._non_numbers.add(name)
            allow_non_number(
                name, value, "written to scalars.json as JSON, as MMEngine does; plots skip it"
            )
        return written

    def _append(self, record: dict, path: str) -> None:
        self._writer(path).write(json.dumps(record) + "\n")

    def _writer(self, path: str) -> BufferedLineWriter:
        writer = self._writers.get(path)
        if writer is None:
            os.makedirs(os.path.dirname(path), exist_ok=True)  # file_path may name a subfolder
            writer = self._writers[path] = BufferedLineWriter(
                path, self._flush_interval, write_through=self.write_through
            )
        return writer

    def _extra_scalar_file(self, file_path: str) -> str:
        _check_suffix("file_path", file_path, "json")
        path = os.path.join(self._save_dir, file_path)  # type: ignore[arg-type]
        if os.path.abspath(path) == os.path.abspath(self._scalar_save_file):
            raise VisualValueError(
                f"``file_path`` and ``scalar_save_file`` have the same name ({file_path!r}): every "
                "line already goes to scalar_save_file, so name another file"
            )
        return path


def _check_suffix(argument: str, name: str, suffix: str) -> None:
    if not isinstance(name, str) or name.rsplit(".", 1)[-1] != suffix:
        raise VisualValueError(
            f"{argument} must be a file name ending in '.{suffix}', got {name!r}"
        )
