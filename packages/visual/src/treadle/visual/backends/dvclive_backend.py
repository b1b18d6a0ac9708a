"""``DVCLiveVisBackend``: scalars, images, params and artifacts as DVCLive files."""

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

# What DVCLive itself writes in its folder: never uploaded again as artifacts.
_DVCLIVE_OUTPUTS = {"metrics.json", "params.yaml", "dvc.yaml", "report.html", "report.md"}
_DVCLIVE_FOLDERS = {"plots", "artifacts"}


@VISBACKENDS.register_module()
class DVCLiveVisBackend(BaseVisBackend):
    """Write DVCLive files in ``save_dir`` through a ``dvclive.Live`` opened on first use.

    Needs ``pip install treadle-visual[dvclive]``. Metrics land in
    ``plots/metrics/<name>.tsv`` with their step, params in ``params.yaml``, images in
    ``plots/images/<name>/<step>.png`` (one file per step, which DVC Studio and the VS Code
    extension show as a slider; MMEngine's ``<name>.png`` kept only the last image).

    Inside a DVC repository (or a Git repository, where DVCLive initializes DVC itself) the
    MMEngine defaults apply: ``save_dvc_exp=True``, ``cache_images=True``, and :meth:`close`
    tracks the artifacts with DVC. Elsewhere the backend writes plain files, ``dvc.yaml``
    included, inside ``save_dir``, and never runs ``dvc init`` in the working directory as
    MMEngine does.

    Args:
        save_dir: DVCLive's folder (``dir`` of ``Live`` unless ``init_kwargs`` sets it).
        artifact_suffix: At :meth:`close`, files under ``save_dir`` ending with one of these
            (other than DVCLive's own outputs) are logged with ``Live.log_artifact``, when a DVC
            repository is there to keep them.
        init_kwargs: Keyword arguments of ``dvclive.Live``.

    Example:
        >>> backend = DVCLiveVisBackend('work_dir/vis_data')
        >>> backend.add_scalars({'loss': 0.3}, step=10)  # doctest: +SKIP
        >>> backend.close()
    """

    numbers_only = True  # the Visualizer hands it numbers only

    def __init__(
        self,
        save_dir: str | None = None,
        artifact_suffix: str | tuple[str, ...] = (".json", ".py", "yaml"),
        init_kwargs: dict | None = None,
    ) -> None:
        super().__init__(None if save_dir is None else os.fspath(save_dir))
        self._artifact_suffix = (
            (artifact_suffix,) if isinstance(artifact_suffix, str) else tuple(artifact_suffix)
        )
        self._init_kwargs = dict(init_kwargs or {})
        self._live: Any = None
        self._in_dvc_repo = False

    def _init_env(self) -> None:
        dvclive = import_tracker("dvclive", "dvclive", type(self).__name__)
        from dvclive.dvc import get_dvc_repo

        self._in_dvc_repo = get_dvc_repo() is not None
        init_kwargs = dict(self._init_kwargs)
        if self._save_dir is not None:
            init_kwargs.setdefault("dir", self._save_dir)
        # Without a repository, DVC experiments cannot be saved and images cannot be cached
        # (Live.end() would fail on cache_images), and dvc.yaml would land in the cwd.
        init_kwargs.setdefault("save_dvc_exp", self._in_dvc_repo)
        init_kwargs.setdefault("cache_images", self._in_dvc_repo)
        if not self._in_dvc_repo:
            live_dir = os.fspath(init_kwargs.get("dir", "dvclive"))
            init_kwargs.setdefault("dvcyaml", os.path.join(live_dir, "dvc.yaml"))
        self._live = dvclive.Live(**init_kwargs)

    @property  # type: ignore[misc]
    @force_init_env
    def experiment(self) -> Any:
        """The ``dvclive.Live``."""
        return self._live

    @force_init_env
    def add_config(self, config: Any, **kwargs: Any) -> None:
        """Record the config as DVC params (``params.yaml``)."""
        self._live.log_params(_param_like(config_dict(config)))

    @force_init_env
    def add_image(self, name: str, image: Any, step: int = 0, **kwargs: Any) -> None:
        """Save an RGB image of shape (H, W, 3) as ``plots/images/<name>/<step>.png``."""
        checked = check_image(image, name=f"image {name!r}")
        self._live.log_image(f"{name}/{scalars.step_value(step)}.png", checked)

    @force_init_env
    def add_scalar(self, name: str, value: Any, step: int = 0, **kwargs: Any) -> None:
        """Record one number at ``step``; a non-number raises TypeError naming ``name``."""
        value = scalars.scalar_value(name, value)
        self._live.step = scalars.step_value(step)
        self._live.log_metric(name, value)

    @force_init_env
    def add_scalars(
        self,
        scalar_dict: dict,
        step: int = 0,
        file_path: str | None = None,
        **kwargs: Any,
    ) -> None:
        """Record every number of ``scalar_dict`` at ``step``; ``file_path`` is ignored.

        Every value is checked before any is written, so a bad one leaves no partial step.
        """
        checked = scalars.scalar_dict(scalar_dict)
        self._live.step = scalars.step_value(step)
        for name, value in checked.items():
            self._live.log_metric(name, value)

    def close(self) -> None:
        """Log the artifacts, then end the Live (writes metrics.json, dvc.yaml; saves the DVC
        experiment). Safe to call twice, and does nothing if nothing was logged."""
        if self._live is None:
            return
        if self._in_dvc_repo:
            for path in self._artifact_paths():
                self._live.log_artifact(str(path))
        self._live.end()
        self._live = None
        self._env_initialized = False

    def _artifact_paths(self) -> list[Path]:
        root = Path(self._live.dir)
        found = []
        for path in sorted(root.rglob("*")):
            relative = path.relative_to(root)
            if (
                path.is_file()
                and path.name.endswith(self._artifact_suffix)
                and path.name not in _DVCLIVE_OUTPUTS
                and relative.parts[0] not in _DVCLIVE_FOLDERS
            ):
                found.append(path)
        return found


def _param_like(value: Any) -> Any:
    """A config value as DVC params accept it: dicts, lists, str, numbers, bool, None."""
    if isinstance(value, Mapping):
        return {str(key): _param_like(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_param_like(item) for item in value]
    if value is None or isinstance(value, (str, bool, int, float)):
        return value
    tolist = getattr(value, "tolist", None)  # numpy arrays and scalars, torch tensors
    if callable(tolist):
        return _param_like(tolist())
    return str(value)  # a class or function in a config: its name, not a crash
