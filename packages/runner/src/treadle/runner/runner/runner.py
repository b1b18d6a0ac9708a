"""Runner: assembles model, data, optimizer, schedulers, evaluators, hooks, logging and
visualization, and runs the train, val and test loops (MMEngine 0.10's ``Runner``)."""

from __future__ import annotations

import copy
import os
import os.path as osp
import time
from collections.abc import Mapping
from typing import Any

from torch import nn
from torch.utils.data import DataLoader

from treadle.config import Config
from treadle.dist import master_only
from treadle.registry import DefaultScope
from treadle.runner.evaluator import Evaluator
from treadle.runner.hooks.hook import Hook
from treadle.runner.hooks.iter_timer_pauses import record_checkpoint_save
from treadle.runner.model import unwrap_model
from treadle.runner.optim import OptimWrapper
from treadle.runner.registry import RUNNERS

from . import checkpointing
from .cfg_args import as_cfg, as_cfg_items
from .config_fingerprint import config_fingerprint
from .elastic import elastic_setup
from .env import setup_env
from .hook_list import HookDispatch, HookList
from .hook_methods import RunnerHooks
from .named_resume import check_named_before_start, named_checkpoint
from .optim_setup import check_scheduler_cfg
from .preemption import preemption_handlers
from .preparation import RunnerPreparation
from .rank_watch import watch_ranks
from .runner_properties import RunnerProperties
from .settings import (
    check_elastic_argument,
    check_groups,
    check_train_cfg,
    experiment_name_for,
    runner_arguments,
)
from .startup_collector import StartupCollectorPause, paused_collector
from .world_check import check_same_config


@RUNNERS.register_module()
class Runner(RunnerProperties, RunnerPreparation, RunnerHooks):
    """Trains, validates and tests a model from a config (or from built objects).

    Every argument is MMEngine 0.10's. Training needs ``train_dataloader``, ``train_cfg`` and
    ``optim_wrapper`` together; validation ``val_dataloader``, ``val_cfg`` and
    ``val_evaluator``; testing the test three. Components given as configs are built when
    first needed; ``train()`` returns the trained model, ``val()`` and ``test()`` the metrics.

    Files: ``work_dir/TIMESTAMP/TIMESTAMP.log`` (the log), ``work_dir/TIMESTAMP/vis_data/``
    (``scalars.json``, ``config.py``), checkpoints and ``last_checkpoint`` in ``work_dir``, the
    config in ``work_dir/<config name or TIMESTAMP>.py``.

    Args:
        model: an ``nn.Module`` with ``train_step``/``val_step``/``test_step`` (a BaseModel),
            or its config (MODELS).
        work_dir: where logs and checkpoints go.
        train_dataloader: a DataLoader or its config (``dataset``, ``sampler``,
            ``batch_size``...; see :meth:`build_dataloader`).
        val_dataloader: the same, for validation.
        test_dataloader: the same, for testing.
        train_cfg: ``dict(by_epoch=True, max_epochs=N, val_interval=1, val_begin=1)`` or
            ``dict(by_epoch=False, max_iters=N, ...)`` or ``dict(type=Loop, ...)``.
        val_cfg: the validation loop's config (``dict()`` for ValLoop).
        test_cfg: the test loop's config (``dict()`` for TestLoop).
        auto_scale_lr: ``dict(enable=True, base_batch_size=B)`` scales the learning rates by
            the real total batch size over B.
        optim_wrapper: an OptimWrapper or its config (``dict(optimizer=dict(type='SGD',
            lr=0.01))``).
        param_scheduler: a scheduler config, a list of them, or a dict per optimizer name.
        val_evaluator: an Evaluator, a metric config or a list of them.
        test_evaluator: the same, for testing.
        default_hooks: replaces the default hooks by name (None removes one).
        custom_hooks: more hooks (configs or Hook objects).
        data_preprocessor: merged into the model config when the model is a config.
        load_from: a checkpoint whose weights are loaded (resumed with ``resume=True``).
        resume: True continues the newest complete checkpoint of ``work_dir``, or with
            ``load_from`` that checkpoint exactly; a checkpoint path is the same as True with
            ``load_from``. A named checkpoint gives way only to newer checkpoints of
            ``work_dir`` saved by a run that started from it with the same config (the same
            command run again after a preemption goes on).
        launcher: 'none', 'pytorch', 'slurm' or 'mpi'.
        env_cfg: ``cudnn_benchmark``, ``mp_cfg``, ``dist_cfg``, ``resource_limit``.
        log_processor: the LogProcessor config (``window_size``, ``by_epoch``...).
        log_level: the level of the log.
        visualizer: a Visualizer or its config; default a LocalVisBackend in the log dir.
        default_scope: the registry scope configs are built in.
        randomness: ``dict(seed=None, diff_rank_seed=False, deterministic=False)``.
        experiment_name: the run's name (the timestamp is appended, as MMEngine does).
        cfg: the whole config, dumped to ``work_dir`` and saved in checkpoints.
        elastic: ``dict(global_batch_size=G, micro_batch_size=None)``: every step trains on
            one global batch of G samples whatever the number of processes (each takes an
            equal part; ``micro_batch_size`` lets gradient accumulation split a part), in an
            order that does not depend on it, with per-sample randomness; checkpoints then
            resume at any world size (see the fault-tolerance guide).

    Example:
        >>> runner = Runner(
        ...     model=dict(type='RunnerToyModel'), work_dir='work_dirs/toy',
        ...     train_dataloader=dict(dataset=dict(type='RunnerToyDataset'),
        ...                           sampler=dict(type='DefaultSampler'), batch_size=3),
        ...     train_cfg=dict(by_epoch=True, max_epochs=2),
        ...     optim_wrapper=dict(optimizer=dict(type='SGD', lr=0.01)))
        >>> model = runner.train()  # doctest: +SKIP
    """

    cfg: Config
    #: Whether the model is wrapped (DDP...) when the runner is built, as MMEngine's Runner
    #: does; FlexibleRunner wraps it in train/val/test.
    _wraps_model_at_init = True

    # Building a runner allocates much and frees little: no collection meanwhile, the caller's
    # collector given back at the end (startup_collector.py).
    @paused_collector
    def __init__(
        self,
        model: nn.Module | dict,
        work_dir: str,
        train_dataloader: DataLoader | dict | None = None,
        val_dataloader: DataLoader | dict | None = None,
        test_dataloader: DataLoader | dict | None = None,
        train_cfg: dict | None = None,
        val_cfg: dict | None = None,
        test_cfg: dict | None = None,
        auto_scale_lr: dict | None = None,
        optim_wrapper: OptimWrapper | dict | None = None,
        param_scheduler: Any = None,
        val_evaluator: Evaluator | dict | list | None = None,
        test_evaluator: Evaluator | dict | list | None = None,
        default_hooks: dict[str, Hook | dict] | None = None,
        custom_hooks: list[Hook | dict] | None = None,
        data_preprocessor: nn.Module | dict | None = None,
        load_from: str | None = None,
        resume: bool | str = False,
        launcher: str = "none",
        env_cfg: dict | None = None,
        log_processor: dict | None = None,
        log_level: str = "INFO",
        visualizer: Any = None,
        default_scope: str | None = "treadle",
        randomness: dict | None = None,
        experiment_name: str | None = None,
        cfg: Config | dict | None = None,
        elastic: dict | None = None,
    ) -> None:
        self._work_dir = osp.abspath(os.fspath(work_dir))
        # Any part may be a whole Config (Config.fromfile('loader.py')), as in MMEngine.
        (model, train_dataloader, val_dataloader, test_dataloader, train_cfg, val_cfg, test_cfg,
         auto_scale_lr, optim_wrapper, val_evaluator, test_evaluator, default_hooks,
         data_preprocessor, env_cfg, log_processor, visualizer, randomness) = map(as_cfg, (
            model, train_dataloader, val_dataloader, test_dataloader, train_cfg, val_cfg,
            test_cfg, auto_scale_lr, optim_wrapper, val_evaluator, test_evaluator, default_hooks,
            data_preprocessor, env_cfg, log_processor, visualizer, randomness))  # fmt: skip
        param_scheduler, custom_hooks = map(as_cfg_items, (param_scheduler, custom_hooks))
        if isinstance(cfg, Config):
            self.cfg = copy.deepcopy(cfg)
        elif isinstance(cfg, Mapping):
            self.cfg = Config(dict(cfg))
        elif cfg is None:
            self.cfg = Config(dict())
        else:
            raise TypeError(f"cfg must be a Config, a dict or None, got {type(cfg).__name__}")
        self._cfg_fingerprint = config_fingerprint(self.cfg)
        self._started_from: str | None = None
        named = named_checkpoint(resume, load_from)
        if named is not None:
            # A checkpoint to resume that is missing or is no checkpoint is refused before
            # anything is written to work_dir.
            check_named_before_start(self._work_dir, named, self._cfg_fingerprint)
        os.makedirs(self._work_dir, exist_ok=True)

        check_groups(
            train_dataloader=train_dataloader,
            train_cfg=train_cfg,
            optim_wrapper=optim_wrapper,
            val_dataloader=val_dataloader,
            val_cfg=val_cfg,
            val_evaluator=val_evaluator,
            test_dataloader=test_dataloader,
            test_cfg=test_cfg,
            test_evaluator=test_evaluator,
        )
        check_train_cfg(train_cfg)
        if param_scheduler is not None and optim_wrapper is None:
            raise ValueError(
                "param_scheduler should be None when optim_wrapper is None: schedulers change "
                "the optimizer's learning rate, so they need one"
            )
        check_scheduler_cfg(param_scheduler)

        self._train_dataloader = train_dataloader
        self._train_loop: Any = train_cfg
        self.optim_wrapper: Any = optim_wrapper
        self.auto_scale_lr = auto_scale_lr
        self.param_schedulers: Any = param_scheduler
        self._val_dataloader = val_dataloader
        self._val_loop: Any = val_cfg
        self._val_evaluator = val_evaluator
        self._test_dataloader = test_dataloader
        self._test_loop: Any = test_cfg
        self._test_evaluator = test_evaluator

        self._launcher = launcher
        self._distributed = launcher != "none"
        # No backend named: the one of the device in use (nccl on CUDA, gloo on the CPU...).
        env_cfg = dict(dist_cfg=dict()) if env_cfg is None else env_cfg
        self._rank, self._world_size, self._timestamp = setup_env(env_cfg, launcher)
        check_same_config(self.cfg)  # every machine the same config, before anything runs
        # A global batch the processes cannot share is refused before anything is built.
        self._elastic = elastic_setup(elastic, self._world_size, optim_wrapper)
        self._randomness_cfg = dict(seed=None) if randomness is None else dict(randomness)
        self.set_randomness(**self._randomness_cfg)

        self._experiment_name = experiment_name_for(
            experiment_name, self.cfg.filename, self._timestamp
        )
        self._log_dir = osp.join(self._work_dir, self._timestamp)
        os.makedirs(self._log_dir, exist_ok=True)
        if default_scope is not None:
            default_scope = DefaultScope.get_instance(
                self._experiment_name, scope_name=default_scope
            )
        self.default_scope = default_scope

        self.log_processor = self.build_log_processor(
            dict() if log_processor is None else log_processor
        )
        self.logger = self.build_logger(log_level=log_level)
        if self._elastic is not None:
            self.logger.info(self._elastic.describe())
        self._log_env(env_cfg)
        self.message_hub = self.build_message_hub()
        self.visualizer = self.build_visualizer(visualizer)
        if self.cfg:
            self.visualizer.add_config(self.cfg)

        self._load_from = None if load_from is None else os.fspath(load_from)
        if not isinstance(resume, (bool, str, os.PathLike)):
            raise TypeError(
                f"resume must be True, False or a checkpoint path, got "
                f"{type(resume).__name__}: {resume!r}"
            )
        self._resume = resume if isinstance(resume, bool) else os.fspath(resume)
        self._has_loaded = False

        if isinstance(model, Mapping) and data_preprocessor is not None:
            model = dict(model)
            model.setdefault("data_preprocessor", data_preprocessor)
        self.model = self.build_model(model)
        # The plain Runner wraps at construction as MMEngine's does; FlexibleRunner wraps in
        # train/val/test, after initializing the weights (a sharded model cannot be
        # initialized on rank 0 and broadcast).
        self._model_wrapped = self._wraps_model_at_init
        if self._model_wrapped:
            self.model = self.wrap_model(self.cfg.get("model_wrapper_cfg"), self.model)
        else:
            self.strategy = self._make_strategy(self.cfg.get("model_wrapper_cfg"))
        inner = unwrap_model(self.model)
        self._model_name = type(inner).__name__

        self._dispatch = HookDispatch()
        self._hooks = HookList(self._dispatch)
        self.register_hooks(default_hooks, custom_hooks)
        self.logger.info(f"Hooks will be executed in the following order:\n{self.get_hooks_info()}")
        self.dump_config()

    @classmethod
    def from_cfg(cls, cfg: Config | dict) -> Runner:
        """A runner from a whole config: the keys are the constructor's arguments.

        Example:
            >>> runner = Runner.from_cfg(Config.fromfile('examples/digits/config.py'))
            ... # doctest: +SKIP
        """
        if not isinstance(cfg, (Config, Mapping)):
            raise TypeError(f"cfg must be a Config or a dict, got {type(cfg).__name__}")
        cfg = copy.deepcopy(cfg)
        for key in ("model", "work_dir"):
            if key not in cfg:
                raise KeyError(f"the config has no {key!r}: a runner needs model and work_dir")
        arguments = runner_arguments(cfg)
        check_elastic_argument(cls, arguments)
        return cls(**arguments, cfg=cfg)

    # ----------------------------------------------------------------- running

    def train(self) -> nn.Module:
        """Train: build what training needs, load or resume, run the train loop; returns the
        model."""
        if self._train_loop is None:
            raise RuntimeError(
                "train() needs a train loop, which should not be None: give the runner "
                "train_dataloader, train_cfg and optim_wrapper"
            )
        # Everything before the loop (torch's optimizer imports torch._dynamo, data sets are
        # read) runs without collections; the loop with the caller's collector
        # (startup_collector.py).
        with StartupCollectorPause():
            self._prepare_train()
        # Preemption signals (SIGTERM, SLURM's SIGUSR1) save a checkpoint and stop the run.
        preemption = preemption_handlers(self, self.cfg.get("preemption"))
        with self._checkpoints_finished(), preemption, watch_ranks(self):
            model = self.train_loop.run()
            self.call_hook("after_run")
        return model

    def val(self) -> dict:
        """Validate once (loading ``load_from`` first); returns the metrics."""
        if self._val_loop is None:
            raise RuntimeError(
                "val() needs a val loop, which should not be None: give the runner "
                "val_dataloader, val_cfg and val_evaluator"
            )
        self._require_step("val_step")
        self._val_loop = self.build_val_loop(self._val_loop)
        self._wrap_deferred_model(init_weights=self.cfg.get("init_weights_for_test_or_val", True))
        self.call_hook("before_run")
        self._prepare_strategy("val")
        self.load_or_resume()
        with self._checkpoints_finished():
            metrics = self.val_loop.run()
            self.call_hook("after_run")
        return metrics

    def test(self) -> dict:
        """Test once (loading ``load_from`` first); returns the metrics."""
        if self._test_loop is None:
            raise RuntimeError(
                "test() needs a test loop, which should not be None: give the runner "
                "test_dataloader, test_cfg and test_evaluator"
            )
        self._require_step("test_step")
        self._test_loop = self.build_test_loop(self._test_loop)
        self._wrap_deferred_model(init_weights=self.cfg.get("init_weights_for_test_or_val", True))
        self.call_hook("before_run")
        self._prepare_strategy("test")
        self.load_or_resume()
        with self._checkpoints_finished():
            metrics = self.test_loop.run()
            self.call_hook("after_run")
        return metrics

    # ----------------------------------------------------------------- checkpoints

    def load_or_resume(self) -> None:
        """Resume (``resume=True``: the newest complete checkpoint of work_dir; with
        ``load_from`` or ``resume=PATH``: that checkpoint, or the newest checkpoint of work_dir
        that a run started from it with the same config saved) or load the weights of
        ``load_from``, once."""
        if self._has_loaded:
            return
        plan = checkpointing.plan_start(
            self._work_dir,
            self._resume,
            self._load_from,
            self.logger,
            self._cfg_fingerprint,
            # The store of CheckpointHook's out_dir, where the checkpoints to resume are.
            backend_args=checkpointing.checkpoint_backend_args(self),
            out_dir=checkpointing.checkpoint_out_dir(self),
        )
        # Recorded in every checkpoint this run saves (see named_resume).
        self._started_from = plan.origin
        if plan.action == "resume":
            self.resume(plan.path)
        elif plan.action == "load":
            self.load_checkpoint(plan.path)

    def resume(
        self,
        filename: str,
        resume_optimizer: bool = True,
        resume_param_scheduler: bool = True,
        map_location: Any = "default",
    ) -> None:
        """Continue the run saved in ``filename`` from the same epoch, iteration and batch:
        weights, optimizer, schedulers, message hub, hooks, loop position, sampler and random
        generators."""
        checkpointing.resume_runner(
            self,
            filename,
            resume_optimizer=resume_optimizer,
            resume_param_scheduler=resume_param_scheduler,
            map_location=map_location,
        )

    def load_checkpoint(
        self,
        filename: str,
        map_location: Any = "cpu",
        strict: bool = False,
        revise_keys: list | None = None,
    ) -> dict:
        """Load the weights of ``filename`` into the model (``revise_keys`` default strips a
        ``module.`` prefix); returns the checkpoint."""
        return checkpointing.load_runner_checkpoint(
            self, filename, map_location=map_location, strict=strict, revise_keys=revise_keys
        )

    def save_checkpoint(
        self,
        out_dir: str,
        filename: str,
        file_client_args: dict | None = None,
        save_optimizer: bool = True,
        save_param_scheduler: bool = True,
        meta: dict | None = None,
        by_epoch: bool = True,
        backend_args: dict | None = None,
        async_save: bool = False,
    ) -> None:
        """Write ``out_dir/filename`` (any treadle.fileio backend) with everything a resume
        needs, through the strategy (every rank calls; with one whole file rank 0 writes).
        ``async_save`` lets the write finish while training goes on where the strategy's
        CheckpointIO can (train/val/test wait for it before returning). The log says how
        long the save took; the train ETA counts the saves to come at that duration."""
        started = time.perf_counter()
        checkpointing.runner_save_checkpoint(
            self,
            out_dir,
            filename,
            file_client_args=file_client_args,
            save_optimizer=save_optimizer,
            save_param_scheduler=save_param_scheduler,
            meta=meta,
            by_epoch=by_epoch,
            backend_args=backend_args,
            async_save=async_save,
        )
        record_checkpoint_save(self, filename, started, async_save)

    @master_only
    def dump_config(self) -> None:
        """Write the config to ``work_dir`` (its file name, or ``TIMESTAMP.py``)."""
        name = (
            osp.basename(self.cfg.filename)
            if self.cfg.filename is not None
            else f"{self._timestamp}.py"
        )
        self.cfg.dump(osp.join(self._work_dir, name))


__all__ = ["Runner"]
