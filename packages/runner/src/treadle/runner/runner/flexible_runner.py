"""FlexibleRunner: the Runner with the strategy named in its arguments (MMEngine 0.10's
``FlexibleRunner`` signature, keyword arguments after the model)."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from torch import nn

from treadle.config import Config
from treadle.dist import infer_launcher
from treadle.runner.registry import RUNNERS, STRATEGIES
from treadle.runner.strategies import BaseStrategy

from .cfg_args import as_cfg
from .runner import Runner
from .settings import check_elastic_argument


@RUNNERS.register_module()
class FlexibleRunner(Runner):
    """The same engine as :class:`Runner`, with ``strategy`` choosing how the model is placed
    and wrapped (a BaseStrategy or a STRATEGIES config; default SingleDeviceStrategy).

    Differences in the arguments, as MMEngine's FlexibleRunner: everything after ``model`` is
    keyword-only; ``work_dir`` defaults to 'work_dirs'; ``launcher=None`` infers the launcher
    from the environment (torchrun, slurm, mpirun); ``resume`` may be a checkpoint path;
    ``compile`` (bool or torch.compile arguments, see ``BaseStrategy.compile_model``) compiles
    the model's forward after wrapping. The model is wrapped (and its weights initialized
    first) when train/val/test starts, so that sharding strategies (FSDP, DeepSpeed) get
    initialized weights; the strategy is built with ``work_dir``, ``experiment_name`` and
    ``auto_scale_lr`` unless its config sets them; with no strategy, DDPStrategy under a
    launcher, else SingleDeviceStrategy.

    Example:
        >>> runner = FlexibleRunner(
        ...     model=dict(type='RunnerToyModel'), work_dir='work_dirs/toy',
        ...     strategy=dict(type='SingleDeviceStrategy'),
        ...     train_dataloader=dict(dataset=dict(type='RunnerToyDataset'),
        ...                           sampler=dict(type='DefaultSampler'), batch_size=3),
        ...     train_cfg=dict(by_epoch=True, max_epochs=1),
        ...     optim_wrapper=dict(optimizer=dict(type='SGD', lr=0.01)))  # doctest: +SKIP
    """

    _wraps_model_at_init = False

    def __init__(
        self,
        model: nn.Module | dict,
        *,
        work_dir: str = "work_dirs",
        experiment_name: str | None = None,
        train_dataloader: Any = None,
        optim_wrapper: Any = None,
        param_scheduler: Any = None,
        train_cfg: dict | None = None,
        val_dataloader: Any = None,
        val_evaluator: Any = None,
        val_cfg: dict | None = None,
        test_dataloader: Any = None,
        test_evaluator: Any = None,
        test_cfg: dict | None = None,
        strategy: BaseStrategy | dict | None = None,
        auto_scale_lr: dict | None = None,
        default_hooks: dict | None = None,
        custom_hooks: list | None = None,
        data_preprocessor: Any = None,
        load_from: str | None = None,
        resume: bool | str = False,
        launcher: str | None = None,
        env_cfg: dict | None = None,
        log_processor: dict | None = None,
        log_level: str = "INFO",
        visualizer: Any = None,
        default_scope: str | None = "treadle",
        randomness: dict | None = None,
        compile: bool | dict = False,
        cfg: Config | dict | None = None,
        elastic: dict | None = None,
    ) -> None:
        strategy = as_cfg(strategy)  # a whole Config too, as every part of the Runner
        if strategy is not None and not isinstance(strategy, (BaseStrategy, Mapping)):
            raise TypeError(
                f"strategy must be a BaseStrategy, a config dict or None, got "
                f"{type(strategy).__name__}: {strategy!r}"
            )
        self._strategy_arg = strategy
        if cfg is None:
            cfg = Config(dict())
        elif not isinstance(cfg, Config):
            cfg = Config(dict(cfg))
        if compile:
            cfg["compile"] = compile
        super().__init__(
            model,
            work_dir,
            train_dataloader=train_dataloader,
            val_dataloader=val_dataloader,
            test_dataloader=test_dataloader,
            train_cfg=train_cfg,
            val_cfg=val_cfg,
            test_cfg=test_cfg,
            auto_scale_lr=auto_scale_lr,
            optim_wrapper=optim_wrapper,
            param_scheduler=param_scheduler,
            val_evaluator=val_evaluator,
            test_evaluator=test_evaluator,
            default_hooks=default_hooks,
            custom_hooks=custom_hooks,
            data_preprocessor=data_preprocessor,
            load_from=load_from,
            resume=resume,
            launcher=infer_launcher() if launcher is None else launcher,
            env_cfg=env_cfg,
            log_processor=log_processor,
            log_level=log_level,
            visualizer=visualizer,
            default_scope=default_scope,
            randomness=randomness,
            experiment_name=experiment_name,
            cfg=cfg,
            elastic=elastic,
        )

    @classmethod
    def from_cfg(cls, cfg: Config | dict) -> FlexibleRunner:
        """A FlexibleRunner from a whole config (the constructor's keys)."""
        cfg = copy.deepcopy(cfg)
        keys = (
            "work_dir", "experiment_name", "train_dataloader", "optim_wrapper",
            "param_scheduler", "train_cfg", "val_dataloader", "val_evaluator", "val_cfg",
            "test_dataloader", "test_evaluator", "test_cfg", "strategy", "auto_scale_lr",
            "default_hooks", "custom_hooks", "data_preprocessor", "load_from", "resume",
            "launcher", "env_cfg", "log_processor", "log_level", "visualizer", "default_scope",
            "randomness", "compile", "elastic",
        )  # fmt: skip
        if "model" not in cfg:
            raise KeyError("the config has no 'model'")
        kwargs = {key: cfg[key] for key in keys if key in cfg}
        # elastic (treadle's) only when set: a subclass may have MMEngine's parameters.
        if "elastic" in kwargs and kwargs["elastic"] is None:
            del kwargs["elastic"]
        check_elastic_argument(cls, kwargs)
        return cls(cfg["model"], cfg=cfg, **kwargs)

    def _make_strategy(self, model_wrapper_cfg: dict | None) -> BaseStrategy:
        strategy = self._strategy_arg
        if isinstance(strategy, BaseStrategy):
            return strategy
        if strategy is None:
            # As MMEngine: DDPStrategy under a launcher, else one device; the plain Runner's
            # model_wrapper_cfg and sync_bn keep their meaning.
            return super()._make_strategy(model_wrapper_cfg)
        strategy_cfg = dict(strategy)
        if "type" not in strategy_cfg:
            raise KeyError(
                f"strategy={strategy_cfg!r} has no 'type': name one of "
                f"{', '.join(sorted(STRATEGIES.module_dict))}"
            )
        name = strategy_cfg["type"]
        name = name if isinstance(name, str) else getattr(name, "__name__", "")
        if name == "DeepSpeedStrategy":
            # DeepSpeed's config needs the per-process batch size; the dataloader knows it.
            loader = self._train_dataloader
            batch_size = (
                loader.get("batch_size", 1)
                if isinstance(loader, Mapping)
                else getattr(loader, "batch_size", 1)
            )
            strategy_cfg.setdefault("train_micro_batch_size_per_gpu", batch_size or 1)
        strategy_cfg.setdefault("work_dir", self._work_dir)
        strategy_cfg.setdefault("experiment_name", self._experiment_name)
        strategy_cfg.setdefault("auto_scale_lr", self.auto_scale_lr)
        try:
            return STRATEGIES.build(strategy_cfg)
        except Exception as error:
            error.add_note(f"while building the strategy {dict(strategy)!r}")
            raise
