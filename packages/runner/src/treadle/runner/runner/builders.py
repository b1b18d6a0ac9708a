"""The Runner's ``build_*`` methods: each turns one argument of the Runner (an object or its
config) into the component the run uses, as MMEngine 0.10's Runner does."""

from __future__ import annotations

import copy
import os.path as osp
from collections.abc import Mapping
from typing import Any

from torch import nn
from torch.utils.data import DataLoader

from treadle.dist import broadcast, is_distributed
from treadle.logging import MessageHub, MMLogger
from treadle.runner.evaluator import Evaluator
from treadle.runner.loops import BaseLoop, IterBasedTrainLoop
from treadle.runner.loops.device_prefetch import check_setting, pin_memory_default
from treadle.runner.model import unwrap_model
from treadle.runner.optim import OptimWrapper
from treadle.runner.registry import EVALUATOR, LOG_PROCESSORS, LOOPS, MODELS, STRATEGIES
from treadle.runner.strategies import BaseStrategy, SingleDeviceStrategy
from treadle.runner.strategies.single_device import check_model_wrapper_cfg

from .cfg_args import as_cfg, as_cfg_items, is_cfg
from .dataloader import build_dataloader as _build_dataloader
from .env import setup_env
from .errors import RunnerCallOrderError, RunnerTypeError
from .optim_setup import (
    build_optim_wrapper,
    build_param_schedulers,
    check_scheduler_cfg,
    scale_lr,
    schedulers_are_built,
)
from .randomness import set_random_seed
from .scheduler_loop import warn_epoch_schedulers_in_iter_loop


class RunnerBuilders:
    """The part of :class:`~treadle.runner.runner.Runner` that builds its components; it reads
    the runner's state (``_experiment_name``, ``_log_dir``, ``cfg``, ``model``...) and is not
    used on its own.

    Example:
        >>> runner.build_optim_wrapper(dict(optimizer=dict(type='SGD', lr=0.1)))  # doctest: +SKIP
    """

    _launcher: str
    _distributed: bool
    _experiment_name: str
    _log_dir: str
    _timestamp: str
    _world_size: int
    cfg: Any
    logger: Any
    model: Any
    optim_wrapper: Any
    param_schedulers: Any
    train_loop: Any

    def setup_env(self, env_cfg: dict) -> None:
        """Set up cuDNN, multiprocessing, threads and the process group (see env.setup_env)."""
        self._rank, self._world_size, self._timestamp = setup_env(env_cfg, self._launcher)

    def set_randomness(
        self, seed: int | None = None, diff_rank_seed: bool = False, deterministic: bool = False
    ) -> None:
        """Seed every generator (see :func:`set_random_seed`); ``runner.seed`` is the seed used."""
        self._deterministic = deterministic
        self._seed = set_random_seed(
            seed=seed, deterministic=deterministic, diff_rank_seed=diff_rank_seed
        )

    def build_logger(
        self, log_level: int | str = "INFO", log_file: str | None = None, **kwargs: Any
    ) -> MMLogger:
        """The run's logger, writing ``log_dir/TIMESTAMP.log`` (appending: a compiled model
        may close and reopen handlers)."""
        if log_file is None:
            log_file = osp.join(self._log_dir, f"{self._timestamp}.log")
        kwargs.setdefault("name", self._experiment_name)
        kwargs.setdefault("file_mode", "a")
        return MMLogger.get_instance(log_level=log_level, log_file=log_file, **kwargs)

    def build_message_hub(self, message_hub: dict | None = None) -> MessageHub:
        """The run's message hub (where hooks leave losses, learning rates, timings)."""
        if message_hub is None:
            message_hub = dict(name=self._experiment_name)
        elif is_cfg(message_hub):
            message_hub = dict(message_hub)
            message_hub.setdefault("name", self._experiment_name)
        else:
            raise TypeError(
                f"message_hub should be a dict (MessageHub's arguments) or None, got "
                f"{type(message_hub).__name__}: {message_hub!r}"
            )
        return MessageHub.get_instance(**message_hub)

    def build_visualizer(self, visualizer: Any = None) -> Any:
        """The run's Visualizer: the one given, one built from a config (``name`` and
        ``save_dir`` default to the run's), or one with a LocalVisBackend in the log dir."""
        from treadle.visual import VISUALIZERS, Visualizer

        if visualizer is None:
            return Visualizer.get_instance(
                name=self._experiment_name,
                vis_backends=[dict(type="LocalVisBackend")],
                save_dir=self._log_dir,
            )
        if isinstance(visualizer, Visualizer):
            return visualizer
        if is_cfg(visualizer):
            visualizer = dict(visualizer)
            visualizer.setdefault("name", self._experiment_name)
            visualizer.setdefault("save_dir", self._log_dir)
            return VISUALIZERS.build(visualizer)
        raise TypeError(
            f"visualizer should be a Visualizer, a config dict or None, got "
            f"{type(visualizer).__name__}: {visualizer!r}"
        )

    def build_model(self, model: nn.Module | dict) -> nn.Module:
        """``model`` itself when it is a module, else built from MODELS."""
        if isinstance(model, nn.Module):
            return model
        if is_cfg(model):
            model = as_cfg(model)
            try:
                return MODELS.build(model)
            except Exception as error:
                error.add_note(f"while building model: {dict(model)!r}")
                raise
        raise TypeError(
            f"model should be an nn.Module or a config dict, got {type(model).__name__}: {model!r}"
        )

    def wrap_model(self, model_wrapper_cfg: dict | None, model: nn.Module) -> nn.Module:
        """Put the model on the device and, when distributed, in its wrapper (DDP by default,
        or ``model_wrapper_cfg``), through the run's strategy."""
        self.strategy = self._make_strategy(model_wrapper_cfg)
        if not self._distributed:
            self.logger.info(
                "Distributed training is not used, all SyncBatchNorm (SyncBN) layers in the "
                "model will be automatically reverted to BatchNormXd layers if they are used."
            )
        wrapped = self.strategy.wrap_model(model)
        self.strategy.model = wrapped  # prepare() then knows it is wrapped
        return wrapped

    def _make_strategy(self, model_wrapper_cfg: dict | None) -> BaseStrategy:
        # The plain Runner names no strategy: SingleDeviceStrategy in one process,
        # DDPStrategy in a process group, with MMEngine's Runner's wrapper defaults.
        check_model_wrapper_cfg(model_wrapper_cfg, "model_wrapper_cfg")
        sync_bn = self.cfg.get("sync_bn")
        if not is_distributed():
            return SingleDeviceStrategy(sync_bn=sync_bn)
        if model_wrapper_cfg is None:
            model_wrapper_cfg = dict(
                type="MMDistributedDataParallel",
                broadcast_buffers=False,
                find_unused_parameters=self.cfg.get("find_unused_parameters", False),
            )
        strategy_type = STRATEGIES.get("DDPStrategy")
        if strategy_type is None:  # without the DDP part, SingleDeviceStrategy wraps in DDP
            return SingleDeviceStrategy(model_wrapper_cfg=dict(model_wrapper_cfg), sync_bn=sync_bn)
        return strategy_type(model_wrapper=dict(model_wrapper_cfg), sync_bn=sync_bn)

    def _init_model_weights(self) -> None:
        model = unwrap_model(self.model)
        if hasattr(model, "init_weights"):
            model.init_weights()
            if self._world_size > 1:
                # Every rank starts from rank 0's weights.
                for tensor in model.state_dict().values():
                    broadcast(tensor)

    def scale_lr(self, optim_wrapper: OptimWrapper, auto_scale_lr: dict | None = None) -> None:
        """Scale the learning rates by the real total batch size over
        ``auto_scale_lr['base_batch_size']`` when ``auto_scale_lr['enable']``; call it after
        building the optimizer wrapper and before the schedulers (they keep the initial lr)."""
        if not auto_scale_lr or not auto_scale_lr.get("enable", False):
            return
        if schedulers_are_built(self.param_schedulers):
            raise RuntimeError(
                "scale_lr should be called before building the parameter schedulers: they keep "
                "the learning rate they start from"
            )
        if not isinstance(optim_wrapper, OptimWrapper):
            raise RunnerTypeError(
                f"scale_lr should be called after building OptimWrapper: it scales the learning "
                f"rates of the built optimizer wrapper (build_optim_wrapper), got "
                f"{type(optim_wrapper).__name__}"
            )
        loader = self._train_dataloader
        elastic = getattr(self, "_elastic", None)
        world_size = self._world_size
        if elastic is not None:  # the real batch is the global batch, at any world size
            batch_size, world_size = elastic.global_batch_size, 1
        elif isinstance(loader, DataLoader):
            batch_size = loader.batch_size
        elif is_cfg(loader) and "batch_size" in loader:
            batch_size = loader["batch_size"]
        else:
            raise KeyError("auto_scale_lr needs train_dataloader.batch_size")
        scale_lr(optim_wrapper, auto_scale_lr, batch_size, world_size, self.logger.info)

    def build_optim_wrapper(self, optim_wrapper: Any) -> OptimWrapper:
        """An OptimWrapper (OptimWrapperDict for several optimizers) from a config or objects;
        a config goes through the strategy first where it adjusts it (FSDP gives
        AmpOptimWrapper its sharded grad scaler)."""
        optim_wrapper = as_cfg(optim_wrapper)
        adjust = getattr(getattr(self, "strategy", None), "adjust_optim_wrapper_cfg", None)
        if callable(adjust) and isinstance(optim_wrapper, Mapping):
            optim_wrapper = adjust(optim_wrapper)
        try:
            return build_optim_wrapper(self.model, optim_wrapper)
        except Exception as error:
            error.add_note("while building optim_wrapper")
            raise

    def build_param_scheduler(self, scheduler: Any) -> Any:
        """The parameter schedulers: a list, or a dict of lists per optimizer of an
        OptimWrapperDict. Build the optimizer wrapper first. A config without ``end`` ends
        with the training."""
        if not isinstance(self.optim_wrapper, OptimWrapper):
            raise RunnerCallOrderError(
                "build_param_scheduler needs the built optimizer wrapper: build_optim_wrapper "
                "should be called before build_param_scheduler (runner.optim_wrapper = "
                f"runner.build_optim_wrapper(...)); runner.optim_wrapper is a "
                f"{type(self.optim_wrapper).__name__}"
            )
        scheduler = as_cfg_items(scheduler)
        check_scheduler_cfg(scheduler)
        loop = self.train_loop
        epoch_length = None
        if loop is not None:
            try:
                epoch_length = len(loop.dataloader)
            except TypeError:
                epoch_length = None

        def default_end(by_epoch: bool) -> int | None:
            if loop is None:
                return None
            return loop.max_epochs if by_epoch else loop.max_iters

        schedulers = build_param_schedulers(
            scheduler, self.optim_wrapper, default_end, epoch_length
        )
        if loop is not None:
            warn_epoch_schedulers_in_iter_loop(
                schedulers, isinstance(loop, IterBasedTrainLoop), self.logger
            )
        return schedulers

    def build_evaluator(self, evaluator: Any) -> Evaluator:
        """An Evaluator from one, a metric config, a list of metrics, or a config with
        ``metrics`` (EVALUATOR, type default 'Evaluator')."""
        if isinstance(evaluator, Evaluator):
            return evaluator
        if is_cfg(evaluator):
            evaluator = as_cfg(evaluator)
            if "metrics" in evaluator:
                cfg = dict(evaluator)
                cfg["metrics"] = as_cfg_items(cfg["metrics"])
                cfg.setdefault("type", "Evaluator")
                return EVALUATOR.build(cfg)
            return Evaluator(evaluator)
        if isinstance(evaluator, (list, tuple)):
            return Evaluator(list(as_cfg_items(evaluator)))
        raise TypeError(
            f"evaluator should be an Evaluator, a metric config or a list of them, got "
            f"{type(evaluator).__name__}: {evaluator!r}"
        )

    @staticmethod
    def build_dataloader(
        dataloader: DataLoader | dict, seed: int | None = None, diff_rank_seed: bool = False
    ) -> DataLoader:
        """A DataLoader from a config (see :func:`treadle.runner.runner.dataloader.
        build_dataloader`); a DataLoader is returned as it is."""
        return _build_dataloader(dataloader, seed=seed, diff_rank_seed=diff_rank_seed)

    def build_train_loop(self, loop: Any) -> Any:
        """The train loop: ``dict(type=...)`` from LOOPS, else EpochBasedTrainLoop
        (``by_epoch=True``) or IterBasedTrainLoop."""
        if isinstance(loop, BaseLoop):
            return loop
        if not is_cfg(loop):
            raise TypeError(
                f"train_cfg should be a loop or a dict, got {type(loop).__name__}: {loop!r}"
            )
        cfg = copy.deepcopy(dict(loop))
        if "type" in cfg and "by_epoch" in cfg:
            raise RuntimeError(
                f"Only one of type and by_epoch can be in train_cfg, which has both "
                f"type={cfg['type']!r} and by_epoch: by_epoch picks one of the built-in loops, "
                "type names another; keep one"
            )
        if "type" not in cfg:
            by_epoch = cfg.pop("by_epoch", "max_iters" not in cfg)
            cfg["type"] = "EpochBasedTrainLoop" if by_epoch else "IterBasedTrainLoop"
        # Not a loop argument: how batches reach the device (loops/device_prefetch.py).
        named = "device_prefetch" in cfg
        prefetch = check_setting(cfg.pop("device_prefetch", None))
        self._train_dataloader = self._loader_of(
            "train_dataloader", pin_memory_default(self._train_dataloader, prefetch)
        )
        try:
            train_loop = LOOPS.build(
                cfg, default_args=dict(runner=self, dataloader=self._train_dataloader)
            )
        except Exception as error:
            error.add_note(f"while building the train loop from train_cfg={dict(loop)!r}")
            raise
        if named:
            train_loop.device_prefetch = prefetch
        return train_loop

    def _loader_of(self, key: str, dataloader: Any) -> Any:
        """The DataLoader of a ``*_dataloader`` config, built here rather than by the loop so
        that its errors (and those of its workers, see dataloader_errors) name ``key``. A
        runner that overrides ``build_dataloader`` keeps having the loop call it."""
        if is_cfg(dataloader):
            dataloader = as_cfg(dataloader)
            if type(self).build_dataloader is not RunnerBuilders.build_dataloader:
                return dataloader
            diff_rank_seed = self._randomness_cfg.get("diff_rank_seed", False)
            # The train loader of an elastic run shares global batches (elastic_loader.py).
            elastic = getattr(self, "_elastic", None) if key == "train_dataloader" else None
            return _build_dataloader(
                dataloader,
                seed=self.seed,
                diff_rank_seed=diff_rank_seed,
                where=key,
                elastic=elastic,
            )
        if dataloader is not None and not hasattr(dataloader, "__iter__"):
            raise TypeError(
                f"{key} should be a DataLoader or a config dict, got "
                f"{type(dataloader).__name__}: {dataloader!r}"
            )
        return dataloader

    def build_val_loop(self, loop: Any) -> Any:
        """The val loop: ``dict(type=...)`` from LOOPS, else ValLoop."""
        return self._build_eval_loop(loop, "val", self._val_dataloader, self._val_evaluator)

    def build_test_loop(self, loop: Any) -> Any:
        """The test loop: ``dict(type=...)`` from LOOPS, else TestLoop."""
        return self._build_eval_loop(loop, "test", self._test_dataloader, self._test_evaluator)

    def _build_eval_loop(self, loop: Any, mode: str, dataloader: Any, evaluator: Any) -> Any:
        if isinstance(loop, BaseLoop):
            return loop
        if not is_cfg(loop):
            raise TypeError(
                f"{mode}_cfg should be a loop or a dict, got {type(loop).__name__}: {loop!r}"
            )
        cfg = copy.deepcopy(dict(loop))
        cfg.setdefault("type", "ValLoop" if mode == "val" else "TestLoop")
        dataloader = self._loader_of(f"{mode}_dataloader", dataloader)
        setattr(self, f"_{mode}_dataloader", dataloader)
        try:
            return LOOPS.build(
                cfg, default_args=dict(runner=self, dataloader=dataloader, evaluator=evaluator)
            )
        except Exception as error:
            error.add_note(f"while building the {mode} loop from {mode}_cfg={dict(loop)!r}")
            raise

    def build_log_processor(self, log_processor: Any) -> Any:
        """The LogProcessor: the one given, or built from its config (LOG_PROCESSORS, type
        default 'LogProcessor')."""
        if is_cfg(log_processor):
            cfg = copy.deepcopy(dict(log_processor))
            cfg.setdefault("type", "LogProcessor")
            return LOG_PROCESSORS.build(cfg)
        if hasattr(log_processor, "get_log_after_iter"):
            return log_processor
        raise TypeError(
            f"log_processor should be a LogProcessor or a config dict, got "
            f"{type(log_processor).__name__}: {log_processor!r}"
        )
