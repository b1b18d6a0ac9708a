"""``WandbVisBackend``: scalars, images and the config in a Weights & Biases run."""

from __future__ import annotations

import os
from typing import Any

from treadle.visual import scalars
from treadle.visual.config_view import config_dict
from treadle.visual.image_check import check_image
from treadle.visual.optional import import_tracker
from treadle.visual.registry import VISBACKENDS

from .base import BaseVisBackend, force_init_env

#: The history key that carries the ``step`` given to ``add_*``; every other metric is plotted
#: against it (``define_metric('*', step_metric='step')``).
STEP_KEY = "step"

#: The key of the epoch in rows logged by a runner (``Visualizer.add_scalars(epoch=...)``).
EPOCH_KEY = "epoch"


@VISBACKENDS.register_module()
class WandbVisBackend(BaseVisBackend):
    """Log to a W&B run, opened by ``wandb.init`` on the first ``add_*`` call.

    Needs ``pip install treadle-visual[wandb]``. The run is created lazily: building the
    backend imports nothing and writes nothing.

    Steps: W&B's own row counter (``_step``) must only grow, and ``wandb.log(step=...)`` drops
    every row whose step is lower than the last one. A runner logs training scalars per
    iteration and validation scalars per epoch, so passing that step to W&B would silently lose
    the validation rows (MMEngine avoids the loss by ignoring ``step`` altogether, which loses
    the steps instead). Here every row carries the caller's step under the key ``step``, and
    every metric is declared with ``step_metric='step'``: W&B keeps all rows and plots each
    metric against the step it was logged at. Under a runner that step is the training
    iteration for every row, validation results included (see ``Visualizer.add_scalars``), and
    each row also carries ``epoch`` when training is by epoch: pick ``epoch`` as a chart's x
    axis in the W&B UI to see the curves per epoch.

    ``step_metric`` (a class attribute, True here) switches that off: treadle.compat sets it to
    False while installed, so that a ``wandb`` module (or a mock of it) sees MMEngine's calls:
    ``define_metric_cfg`` and every row go to the module-level ``wandb.define_metric`` and
    ``wandb.log``, rows without a step, and ``close`` calls ``wandb.join``.

    Args:
        save_dir: The directory of W&B's files (``dir`` of ``wandb.init`` unless
            ``init_kwargs`` sets it); created on first write.
        init_kwargs: Keyword arguments of ``wandb.init`` (project, name, mode, ...).
        define_metric_cfg: A dict ``{metric: summary}`` (for example ``{'coco/bbox_mAP':
            'max'}``) or a list of keyword-argument dicts of ``run.define_metric``, applied
            after the step metric so that they can override it (``wandb.define_metric`` with
            ``step_metric`` off).
        commit: ``commit`` of ``wandb.log``; False merges the row with the next committed one.
        log_code_name: The name of the code artifact ``add_config`` logs with ``log_code``.
        watch_kwargs: Keyword arguments of ``wandb.watch``, called by ``add_graph``.

    Example:
        >>> backend = WandbVisBackend('work_dir/vis_data', init_kwargs=dict(project='demo'))
        >>> backend.add_scalars({'loss': 0.3}, step=10)  # doctest: +SKIP
        >>> backend.close()
    """

    numbers_only = True  # the Visualizer hands it numbers only

    #: Whether rows carry the caller's step under ``step`` and every metric is plotted against
    #: it (treadle); False gives MMEngine's calls on the ``wandb`` module (treadle.compat).
    step_metric: bool = True

    def __init__(
        self,
        save_dir: str | None = None,
        init_kwargs: dict | None = None,
        define_metric_cfg: dict | list | None = None,
        commit: bool | None = True,
        log_code_name: str | None = None,
        watch_kwargs: dict | None = None,
    ) -> None:
        if define_metric_cfg is not None and not isinstance(define_metric_cfg, (dict, list)):
            raise ValueError(  # MMEngine's phrase first: downstream tests match on it
                "define_metric_cfg should be dict or list: a dict {metric: summary} or a list "
                f"of define_metric keyword dicts, got {type(define_metric_cfg).__name__}"
            )
        super().__init__(None if save_dir is None else os.fspath(save_dir))
        self._init_kwargs = dict(init_kwargs or {})
        self._define_metric_cfg = define_metric_cfg
        self._commit = commit
        self._log_code_name = log_code_name
        self._watch_kwargs = dict(watch_kwargs or {})
        self._wandb: Any = None
        self._run: Any = None
        # Where define_metric, log, config and watch go: the run, or the wandb module itself
        # when ``step_metric`` is off (MMEngine's calls, which a mocked module can assert on).
        self._target: Any = None
        self._step_metric = type(self).step_metric

    def _init_env(self) -> None:
        wandb = import_tracker("wandb", "wandb", type(self).__name__)
        init_kwargs = dict(self._init_kwargs)
        if self._save_dir is not None:
            os.makedirs(self._save_dir, exist_ok=True)
            init_kwargs.setdefault("dir", self._save_dir)
        run = wandb.init(**init_kwargs)
        # Read once per run, so that a run never mixes the two ways of logging.
        self._step_metric = step_metric = type(self).step_metric
        target = run if step_metric else wandb
        if step_metric:
            run.define_metric(STEP_KEY)
            run.define_metric("*", step_metric=STEP_KEY)
            # The epoch is a metric of its own, on the same step axis: charts can use it as x.
            run.define_metric(EPOCH_KEY, step_metric=STEP_KEY)
        if isinstance(self._define_metric_cfg, dict):
            for metric, summary in self._define_metric_cfg.items():
                target.define_metric(metric, summary=summary)
        elif isinstance(self._define_metric_cfg, list):
            for metric_kwargs in self._define_metric_cfg:
                target.define_metric(**metric_kwargs)
        self._target = target
        self._wandb, self._run = wandb, run

    @property  # type: ignore[misc]
    @force_init_env
    def experiment(self) -> Any:
        """The ``wandb`` module, as in MMEngine (its ``run`` is this backend's run)."""
        return self._wandb

    @force_init_env
    def add_config(self, config: Any, **kwargs: Any) -> None:
        """Record the config in the run's config and the code of the cwd as an artifact."""
        allow_val_change = self._init_kwargs.get("allow_val_change", False)
        self._target.config.update(config_dict(config), allow_val_change=allow_val_change)
        code_run = self._run if self._step_metric else self._wandb.run
        code_run.log_code(name=self._log_code_name)

    @force_init_env
    def add_graph(self, model: Any, data_batch: Any = None, **kwargs: Any) -> None:
        """Watch ``model``'s gradients and parameters with ``wandb.watch``."""
        self._target.watch(model, **self._watch_kwargs)

    @force_init_env
    def add_image(self, name: str, image: Any, step: int = 0, **kwargs: Any) -> None:
        """Record an RGB image of shape (H, W, 3) under ``name`` at ``step``."""
        checked = check_image(image, name=f"image {name!r}")
        self._log({name: self._wandb.Image(checked)}, step)

    @force_init_env
    def add_scalar(self, name: str, value: Any, step: int = 0, **kwargs: Any) -> None:
        """Record one number; a value that is not a number raises TypeError naming ``name``
        (with ``step_metric`` off, the value goes to ``wandb.log`` unchecked, as in MMEngine)."""
        if not self._step_metric:
            self._wandb.log({name: value}, commit=self._commit)
            return
        self._log({name: scalars.scalar_value(name, value)}, step)

    @force_init_env
    def add_scalars(
        self,
        scalar_dict: dict,
        step: int = 0,
        file_path: str | None = None,
        **kwargs: Any,
    ) -> None:
        """Record every number of ``scalar_dict`` in one W&B row; ``file_path`` is ignored.

        A ``"step"`` key in ``scalar_dict`` is the row's step and wins over ``step``, as in
        LocalVisBackend (that key is the column every metric is plotted against). With
        ``step_metric`` off, ``scalar_dict`` goes to ``wandb.log`` as it is, as in MMEngine.
        """
        if not self._step_metric:
            self._wandb.log(scalar_dict, commit=self._commit)
            return
        checked = scalars.scalar_dict(scalar_dict)
        if STEP_KEY in checked:
            step = checked.pop(STEP_KEY)
        self._log(checked, step)

    def _log(self, row: dict, step: int) -> None:
        if not self._step_metric:  # MMEngine's rows: no step at all
            self._wandb.log(row, commit=self._commit)
            return
        self._run.log({**row, STEP_KEY: scalars.step_value(step)}, commit=self._commit)

    def close(self) -> None:
        """Finish the run and make sure its file is complete on disk; safe to call twice.

        ``run.finish()`` of wandb 0.31 can return before its service process has written the
        run's last records (an offline run read right after ``finish`` is sometimes empty).
        Shutting the service down waits for that, so it is done when no other run of this
        process still needs the service; the next ``wandb.init`` starts a new one. With
        ``step_metric`` off it calls ``wandb.join()`` (which finishes ``wandb.run``), as MMEngine.
        """
        if self._run is None:
            return
        if self._step_metric:
            self._run.finish()
        else:
            self._wandb.join()
        self._run = None
        self._env_initialized = False
        if _no_active_run(self._wandb):
            self._wandb.teardown()


def _no_active_run(wandb: Any) -> bool:
    """Whether no run of this process is still open (runs made with ``reinit='create_new'``
    are not all ``wandb.run``); where wandb keeps no list of them, ``wandb.run`` decides."""
    setup = wandb.setup()
    if hasattr(type(setup), "most_recent_active_run"):  # a property
        return setup.most_recent_active_run is None
    return wandb.run is None
