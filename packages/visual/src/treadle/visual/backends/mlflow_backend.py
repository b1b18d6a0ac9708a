"""``MLflowVisBackend``: metrics, params, images and the config in an MLflow run."""

from __future__ import annotations

import os
import pathlib
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import urlparse

from treadle.visual import scalars
from treadle.visual.config_view import config_dict, config_text
from treadle.visual.image_check import check_image
from treadle.visual.optional import import_tracker
from treadle.visual.registry import VISBACKENDS

from .base import BaseVisBackend, force_init_env

# Names that make add_image store one image file (MMEngine's use of ``log_image``); any other
# name becomes a time-stepped image series (``log_image(key=name, step=step)``).
_IMAGE_FILE_SUFFIXES = (".png", ".jpg", ".jpeg", ".bmp", ".gif", ".tif", ".tiff", ".webp")


# MMEngine's name, and the "Mlflow" spelling that users also write.
@VISBACKENDS.register_module(name=["MLflowVisBackend", "MlflowVisBackend"])
class MLflowVisBackend(BaseVisBackend):
    """Log to an MLflow run: metrics with steps, the config as params and ``config.py``.

    Without ``tracking_uri`` the runs go to a local file store in ``save_dir`` (see them with
    ``mlflow ui --backend-store-uri SAVE_DIR``); nothing leaves the machine. MLflow 3 refuses
    file stores unless ``MLFLOW_ALLOW_FILE_STORE`` is true, so when the store is local files
    the backend sets that variable to ``true`` if it is not set at all; a value the user set,
    ``false`` included, is left alone. MLflow's tracking URI and active run are global to the
    process, as in MLflow's own API, so use one MLflowVisBackend at a time. If a run is
    already active when the backend opens, it logs into that run and leaves it open at close;
    otherwise it starts a run and ends it at close. Needs ``pip install treadle-visual[mlflow]``;
    nothing is imported or written until the first ``add_*`` call.

    Args:
        save_dir: The file store's folder, used when ``tracking_uri`` is None.
        exp_name: The experiment; created if missing. Defaults to ``'Default'``.
        run_name: The run's name; MLflow picks one if None.
        tags: Tags set on the run.
        params: Params logged when the run opens.
        tracking_uri: An MLflow server or store (``http://...``, ``sqlite:///...``,
            ``file:...``); None means the file store in ``save_dir``.
        artifact_suffix: At close, files with these endings under the recorded config's
            ``work_dir`` are uploaded as artifacts (MLflow's own store folders excepted).
        tracked_config_keys: The top-level config keys logged as params; None logs all.
        artifact_location: Where a newly created experiment keeps its artifacts.

    Example:
        >>> backend = MLflowVisBackend(save_dir='work_dir/vis_data', exp_name='resnet')
        >>> backend.add_config(dict(lr=0.01, model=dict(depth=18)))  # params lr, model.depth
        >>> backend.add_scalars({'loss': 0.3, 'acc': 0.8}, step=10)
        >>> backend.close()
    """

    numbers_only = True  # the Visualizer hands it numbers only

    def __init__(
        self,
        save_dir: str,
        exp_name: str | None = None,
        run_name: str | None = None,
        tags: dict | None = None,
        params: dict | None = None,
        tracking_uri: str | None = None,
        artifact_suffix: str | tuple[str, ...] = (".json", ".log", ".py", "yaml"),
        tracked_config_keys: Iterable[str] | None = None,
        artifact_location: str | None = None,
    ) -> None:
        if save_dir is None and tracking_uri is None:
            raise ValueError(
                "MLflowVisBackend needs a save_dir (for its local file store) or a tracking_uri"
            )
        super().__init__(None if save_dir is None else os.fspath(save_dir))
        self._exp_name = exp_name
        self._run_name = run_name
        self._tags = tags
        self._params = params
        self._tracking_uri = tracking_uri
        self._artifact_suffix = (
            (artifact_suffix,) if isinstance(artifact_suffix, str) else tuple(artifact_suffix)
        )
        self._tracked_config_keys = (
            None if tracked_config_keys is None else list(tracked_config_keys)
        )
        self._artifact_location = artifact_location
        self._mlflow: Any = None
        self._owns_run = False
        self._work_dir: str | None = None

    def _init_env(self) -> None:
        mlflow = import_tracker("mlflow", "mlflow", type(self).__name__)
        uri = self._tracking_uri
        if uri is None:
            os.makedirs(self._save_dir, exist_ok=True)
            uri = pathlib.Path(self._save_dir).resolve().as_uri()
        if _local_store_path(uri) is not None:
            # MLflow 3 raises on file stores unless allowed; a user's own value wins.
            os.environ.setdefault("MLFLOW_ALLOW_FILE_STORE", "true")
        mlflow.set_tracking_uri(uri)
        exp_name = self._exp_name or "Default"
        if mlflow.get_experiment_by_name(exp_name) is None:
            mlflow.create_experiment(exp_name, artifact_location=self._artifact_location)
        mlflow.set_experiment(exp_name)
        # Kept before anything else can fail, so that close() ends a run started here.
        self._mlflow = mlflow
        self._owns_run = False
        if mlflow.active_run() is None:
            mlflow.start_run(run_name=self._run_name, tags=self._tags)
            self._owns_run = True
        else:
            if self._run_name is not None:
                mlflow.set_tag("mlflow.runName", self._run_name)
            if self._tags:
                mlflow.set_tags(self._tags)
        if self._params:
            mlflow.log_params(self._params)

    @property  # type: ignore[misc]
    @force_init_env
    def experiment(self) -> Any:
        """The ``mlflow`` module, with this backend's run active (opened on first access)."""
        return self._mlflow

    @force_init_env
    def add_config(self, config: Any, **kwargs: Any) -> None:
        """Log the config as flat params (``model.depth``) and its text as ``config.py``.

        With ``tracked_config_keys``, only those top-level keys become params; a key the
        config lacks raises KeyError naming it. The whole text is logged either way.
        """
        values = config_dict(config)
        work_dir = values.get("work_dir")
        if self._tracked_config_keys is not None:
            missing = [key for key in self._tracked_config_keys if key not in values]
            if missing:
                raise KeyError(
                    f"tracked_config_keys {missing} are not in the config; its top-level keys "
                    f"are {sorted(map(str, values))}"
                )
            values = {key: values[key] for key in self._tracked_config_keys}
        self._mlflow.log_params(flatten_params(values))
        self._mlflow.log_text(config_text(config), "config.py")
        self._work_dir = work_dir if isinstance(work_dir, str) else None

    @force_init_env
    def add_image(self, name: str, image: Any, step: int = 0, **kwargs: Any) -> None:
        """Log an RGB image of shape (H, W, 3).

        A ``name`` ending in an image suffix (``pred.png``) is stored as that artifact file,
        replaced at each call, as MMEngine does; any other name is a series of images with
        steps, shown in the run's image view.
        """
        checked = check_image(image, name=f"image {name!r}")
        if name.lower().endswith(_IMAGE_FILE_SUFFIXES):
            self._mlflow.log_image(checked, artifact_file=name)
        else:
            self._mlflow.log_image(checked, key=name, step=scalars.step_value(step))

    @force_init_env
    def add_scalar(self, name: str, value: Any, step: int = 0, **kwargs: Any) -> None:
        """Log one metric; a value that is not a number raises TypeError naming ``name``."""
        value = scalars.scalar_value(name, value)
        self._mlflow.log_metric(name, value, step=scalars.step_value(step))

    @force_init_env
    def add_scalars(
        self,
        scalar_dict: dict,
        step: int = 0,
        file_path: str | None = None,
        **kwargs: Any,
    ) -> None:
        """Log each number of ``scalar_dict`` as a metric at ``step``; ``file_path`` is ignored.

        Every value is checked before any is logged, so a bad one leaves no partial step.
        """
        checked = scalars.scalar_dict(scalar_dict)
        self._mlflow.log_metrics(checked, step=scalars.step_value(step))

    def close(self) -> None:
        """Upload the work_dir's files (see ``artifact_suffix``) and end the run.

        Safe to call twice, or when nothing was logged.
        """
        if self._mlflow is None:
            return
        for path, folder in self._work_dir_artifacts():
            self._mlflow.log_artifact(path, folder or None)
        if self._owns_run:
            self._mlflow.end_run()
        self._mlflow = None
        self._env_initialized = False

    def _work_dir_artifacts(self) -> list[tuple[str, str]]:
        """(file, artifact folder) for each file of the work_dir worth keeping with the run."""
        if self._work_dir is None or not os.path.isdir(self._work_dir):
            return []
        work_dir = pathlib.Path(self._work_dir).resolve()
        own_folders = self._mlflow_folders()
        found = []
        for path in sorted(work_dir.rglob("*")):
            if not path.is_file() or not path.name.endswith(self._artifact_suffix):
                continue
            if any(folder in path.parents for folder in own_folders):
                continue  # MLflow's own records (meta.yaml, earlier artifacts): not run output
            folder = path.parent.relative_to(work_dir).as_posix()
            found.append((str(path), "" if folder == "." else folder))
        return found

    def _mlflow_folders(self) -> list[pathlib.Path]:
        """The folders where MLflow keeps this run's store and artifacts, when they are local."""
        folders = []
        store = _local_store_path(self._mlflow.get_tracking_uri())
        if store is not None:
            # Experiments live in the store's subfolders; files directly in it (the local
            # backend's scalars.json and config.py, when save_dir is shared) are run output.
            folders += [entry.resolve() for entry in store.iterdir() if entry.is_dir()]
        artifacts = _local_store_path(self._mlflow.get_artifact_uri())
        if artifacts is not None:
            folders.append(artifacts.resolve())
        return folders


def flatten_params(config: Mapping, prefix: str = "") -> dict[str, Any]:
    """``{'model': {'depth': 18}}`` -> ``{'model.depth': 18}``, the keys of MLflow params.

    Lists that hold dicts are numbered (``pipeline.0.type``), as MMEngine does; other lists
    stay one value.

    Example:
        >>> flatten_params({'a': {'b': 1}, 'p': [dict(type='Load')], 's': [1, 2]})
        {'a.b': 1, 'p.0.type': 'Load', 's': [1, 2]}
    """
    flat: dict[str, Any] = {}
    for key, value in config.items():
        name = f"{prefix}.{key}" if prefix else str(key)
        if isinstance(value, Mapping):
            flat.update(flatten_params(value, name))
        elif isinstance(value, (list, tuple)) and any(isinstance(x, Mapping) for x in value):
            flat.update(flatten_params({str(i): item for i, item in enumerate(value)}, name))
        else:
            flat[name] = value
    return flat


def _local_store_path(uri: str) -> pathlib.Path | None:
    """The local folder behind a ``file:`` URI or a plain path; None for anything else."""
    parsed = urlparse(uri)
    if parsed.scheme == "file":
        return pathlib.Path(parsed.path)
    if parsed.scheme == "" or len(parsed.scheme) == 1:  # a path, or a Windows drive letter
        return pathlib.Path(uri)
    return None
