"""Runner: assembles model, data, optimizer, schedulers, evaluators, hooks, logging and
visualization, and runs the train, val and test loops (MMEngine 0.10's ``Runner``)."""

from __future__ import annotations

import contextlib
import copy
import os
import os.path as osp
import time
from collections.abc import Iterator, Mapping
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
from treadle.runner.model.efficient_conv_bn_eval import turn_on_efficient_conv_bn_eval
from treadle.runner.optim import OptimWrapper
from treadle.runner.registry import RUNNERS

from . import checkpointing
from .builders import RunnerBuilders
from .config_fingerprint import config_fingerprint
from .env import collect_env, setup_env
from .hook_list import (
    HookDispatch,
    HookList,
)
from .hook_methods import RunnerHooks
from .named_resume import check_named_before_start, named_checkpoint
from .optim_setup import (
    check_scheduler_cfg,
)
from .preemption import preemption_handlers
from .rank_watch import watch_ranks
from .settings import check_groups, check_train_cfg, experiment_name_for
from .world_check import check_same_config


def runner_arguments(cfg: Config | Mapping[str, Any]) -> dict[str, Any]:
    """The Runner's constructor arguments (all but ``cfg``) that a whole config gives, with
    MMEngine's defaults for the keys it leaves out.

    Example:
        >>> sorted(runner_arguments(dict(model=dict(type='M'), work_dir='w')))[:3]
        ['auto_scale_lr', 'custom_hooks', 'data_preprocessor']
    """
    return dict(
        model=cfg.get("model"),
        work_dir=cfg.get("work_dir"),
        train_dataloader=cfg.get("train_dataloader"),
        val_dataloader=cfg.get("val_dataloader"),
        test_dataloader=cfg.get("test_dataloader"),
        train_cfg=cfg.get("train_cfg"),
        val_cfg=cfg.get("val_cfg"),
        test_cfg=cfg.get("test_cfg"),
        auto_scale_lr=cfg.get("auto_scale_lr"),
        optim_wrapper=cfg.get("optim_wrapper"),
        param_scheduler=cfg.get("param_scheduler"),
        val_evaluator=cfg.get("val_evaluator"),
        test_evaluator=cfg.get("test_evaluator"),
        default_hooks=cfg.get("default_hooks"),
        custom_hooks=cfg.get("custom_hooks"),
        data_preprocessor=cfg.get("data_preprocessor"),
        load_from=cfg.get("load_from"),
        resume=cfg.get("resume", False),
        launcher=cfg.get("launcher", "none"),
        # No backend named: the one of the device in use (nccl on CUDA, gloo on the CPU...).
        env_cfg=cfg.get("env_cfg", dict(dist_cfg=dict())),
        log_processor=cfg.get("log_processor"),
        log_level=cfg.get("log_level", "INFO"),
        visualizer=cfg.get("visualizer"),
        default_scope=cfg.get("default_scope", "treadle"),
        randomness=cfg.get("randomness", dict(seed=None)),
        experiment_name=cfg.get("experiment_name"),
    )


@RUNNERS.register_module()
class Runner(RunnerBuilders, RunnerHooks):
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
    ) -> None:
        self._work_dir = osp.abspath(os.fspath(work_dir))
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
                "param_scheduler is set but optim_wrapper is not: schedulers change the "
                "optimizer's learning rate, so they need one"
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
        return cls(**runner_arguments(cfg), cfg=cfg)

    # ----------------------------------------------------------------- properties

    @property
    def experiment_name(self) -> str:
        """The run's name: the logger, message hub and visualizer instances carry it."""
        return self._experiment_name

    @property
    def model_name(self) -> str:
        """The class name of the model (inside its wrapper)."""
        return self._model_name

    @property
    def work_dir(self) -> str:
        """The absolute directory of checkpoints and logs."""
        return self._work_dir

    @property
    def log_dir(self) -> str:
        """``work_dir/TIMESTAMP``: the log file and vis_data of this run."""
        return self._log_dir

    @property
    def max_epochs(self) -> int:
        """The train loop's number of epochs (0 without one)."""
        loop = self.train_loop
        return loop.max_epochs if loop is not None else 0

    @property
    def max_iters(self) -> int:
        """The train loop's number of iterations (0 without one)."""
        loop = self.train_loop
        return loop.max_iters if loop is not None else 0

    @property
    def epoch(self) -> int:
        """The number of finished training epochs."""
        loop = self.train_loop
        return loop.epoch if loop is not None else 0

    @property
    def iter(self) -> int:
        """The number of finished training iterations."""
        loop = self.train_loop
        return loop.iter if loop is not None else 0

    @property
    def launcher(self) -> str:
        return self._launcher

    @property
    def distributed(self) -> bool:
        return self._distributed

    @property
    def rank(self) -> int:
        return self._rank

    @property
    def world_size(self) -> int:
        return self._world_size

    @property
    def deterministic(self) -> bool:
        return self._deterministic

    @property
    def seed(self) -> int:
        return self._seed

    @property
    def timestamp(self) -> str:
        """When the run started, ``YYYYmmdd_HHMMSS`` (rank 0's clock)."""
        return self._timestamp

    @property
    def hooks(self) -> list[Hook]:
        """The registered hooks in calling order (``register_hook`` places a new one by its
        priority; editing this list in place also takes effect)."""
        return self._hooks

    @property
    def _hooks(self) -> HookList:
        return self.__dict__["_hook_list"]

    @_hooks.setter
    def _hooks(self, hooks: list[Hook]) -> None:
        # MMEngine code assigns runner._hooks directly; the dispatch table must follow.
        self.__dict__["_hook_list"] = HookList(self._dispatch, hooks)

    @property
    def train_loop(self) -> Any:
        """The train loop, built on first access (None without training)."""
        loop = self._train_loop
        # Read several times a step by hooks: the Mapping test (an ABC check) runs only when
        # the attribute holds something not seen here before.
        if loop is not self.__dict__.get("_train_loop_seen"):
            if isinstance(loop, Mapping):
                loop = self._train_loop = self.build_train_loop(loop)
            self.__dict__["_train_loop_seen"] = loop
        return loop

    @property
    def val_loop(self) -> Any:
        """The val loop, built on first access (None without validation)."""
        if isinstance(self._val_loop, Mapping):
            self._val_loop = self.build_val_loop(self._val_loop)
        return self._val_loop

    @property
    def test_loop(self) -> Any:
        """The test loop, built on first access (None without testing)."""
        if isinstance(self._test_loop, Mapping):
            self._test_loop = self.build_test_loop(self._test_loop)
        return self._test_loop

    @property
    def train_dataloader(self) -> Any:
        return self._loop_or_raise(self.train_loop, "train").dataloader

    @property
    def val_dataloader(self) -> Any:
        return self._loop_or_raise(self.val_loop, "val").dataloader

    @property
    def test_dataloader(self) -> Any:
        return self._loop_or_raise(self.test_loop, "test").dataloader

    @property
    def val_evaluator(self) -> Any:
        return self._loop_or_raise(self.val_loop, "val").evaluator

    @property
    def test_evaluator(self) -> Any:
        return self._loop_or_raise(self.test_loop, "test").evaluator

    @property
    def val_interval(self) -> int:
        return self._loop_or_raise(self.train_loop, "train").val_interval

    @property
    def val_begin(self) -> int:
        return self._loop_or_raise(self.train_loop, "train").val_begin

    @staticmethod
    def _loop_or_raise(loop: Any, mode: str) -> Any:
        if loop is None:
            needs = {
                "train": "train_dataloader, train_cfg and optim_wrapper",
                "val": "val_dataloader, val_cfg and val_evaluator",
                "test": "test_dataloader, test_cfg and test_evaluator",
            }[mode]
            raise RuntimeError(f"this runner has no {mode} loop: give it {needs}")
        return loop

    # ----------------------------------------------------------------- running

    def _inner_model(self) -> nn.Module:
        return unwrap_model(self.model)

    def _require_step(self, name: str) -> None:
        if not callable(getattr(self._inner_model(), name, None)):
            raise TypeError(
                f"the model {self._model_name} has no {name}: subclass "
                "treadle.runner.model.BaseModel (it provides train_step, val_step and "
                "test_step around your forward)"
            )

    def train(self) -> nn.Module:
        """Train: build what training needs, load or resume, run the train loop; returns the
        model."""
        if self._train_loop is None:
            raise RuntimeError(
                "train() needs a train loop: give the runner train_dataloader, train_cfg and "
                "optim_wrapper"
            )
        self._require_step("train_step")
        if self._val_loop is not None:
            self._require_step("val_step")
        self._train_loop = self.build_train_loop(self._train_loop)
        self._wrap_deferred_model(init_weights=True)
        self.optim_wrapper = self.build_optim_wrapper(self.optim_wrapper)
        self.scale_lr(self.optim_wrapper, self.auto_scale_lr)
        if self.param_schedulers is not None:
            self.param_schedulers = self.build_param_scheduler(self.param_schedulers)
        if self._val_loop is not None:
            self._val_loop = self.build_val_loop(self._val_loop)
        self.call_hook("before_run")
        if not self._weights_initialized:
            self._init_model_weights()
        self._turn_on_cfg_features()
        self._prepare_strategy("train")
        self.load_or_resume()
        self.optim_wrapper.initialize_count_status(
            self.model, self._train_loop.iter, self._train_loop.max_iters
        )
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
                "val() needs a val loop: give the runner val_dataloader, val_cfg and val_evaluator"
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
                "test() needs a test loop: give the runner test_dataloader, test_cfg and "
                "test_evaluator"
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

    def _turn_on_cfg_features(self) -> None:
        modules = self.cfg.get("activation_checkpointing")
        if modules is not None:
            self.logger.info(
                f'Enabling the "activation_checkpointing" feature for sub-modules: {modules}'
            )
            self.strategy.apply_activation_checkpointing(self.model, modules)
        conv_bn_modules = self.cfg.get("efficient_conv_bn_eval")
        if conv_bn_modules is not None:
            self.logger.info(
                f'Enabling the "efficient_conv_bn_eval" feature for sub-modules: {conv_bn_modules}'
            )
            turn_on_efficient_conv_bn_eval(unwrap_model(self.model), conv_bn_modules)

    def _compile_cfg(self) -> bool | dict:
        compile_cfg = self.cfg.get("compile")
        if compile_cfg is None or compile_cfg is False:
            return False
        if compile_cfg is True:
            return True
        if not isinstance(compile_cfg, Mapping):
            raise TypeError(
                f"cfg.compile must be a bool or a dict of torch.compile arguments, got "
                f"{type(compile_cfg).__name__}: {compile_cfg!r}"
            )
        return dict(compile_cfg)

    def _wrap_deferred_model(self, init_weights: bool) -> None:
        """FlexibleRunner: initialize the weights, then place and wrap the model through the
        strategy, before the optimizer is built on the wrapped (possibly sharded) parameters."""
        if self._model_wrapped:
            return
        if init_weights:
            self._init_model_weights()
        self.model = self.strategy.wrap_model(self.model)
        self.strategy.model = self.model  # prepare() then knows it is wrapped
        self._model_wrapped = True

    @property
    def _weights_initialized(self) -> bool:
        return self.__dict__.get("_weights_done", False)

    def _init_model_weights(self) -> None:
        super()._init_model_weights()
        self.__dict__["_weights_done"] = True

    def _dispatch_kwargs(self) -> dict[str, Any]:
        loop = self._train_loop
        kwargs: dict[str, Any] = dict(max_iters=loop.max_iters, max_epochs=loop.max_epochs)
        loader = getattr(loop, "dataloader", None)
        with contextlib.suppress(TypeError):
            kwargs["epoch_length"] = len(loader)
        batch_size = getattr(loader, "batch_size", None)
        if batch_size is not None:
            kwargs["train_micro_batch_size_per_gpu"] = batch_size
        return kwargs

    def _prepare_strategy(self, mode: str) -> None:
        """Hand the model (and for training the built optimizer wrapper and schedulers) to the
        strategy, which compiles it when ``cfg.compile`` asks (after wrapping) and may replace
        them (DeepSpeed's engine); the runner then uses the strategy's objects."""
        strategy = self.strategy
        compile_cfg = self._compile_cfg()
        if mode == "train":
            strategy.prepare(
                self.model,
                optim_wrapper=self.optim_wrapper,
                param_scheduler=self.param_schedulers,
                compile=compile_cfg,
                dispatch_kwargs=self._dispatch_kwargs(),
            )
            self.optim_wrapper = strategy.optim_wrapper
            if self.param_schedulers is not None:
                self.param_schedulers = strategy.param_schedulers
        else:
            strategy.prepare(self.model, compile=compile_cfg)
        self.model = strategy.model

    @contextlib.contextmanager
    def _checkpoints_finished(self) -> Iterator[None]:
        # Asynchronous checkpoint writes finish before train/val/test returns, also when the
        # loop raises: the process must not exit with a half-written checkpoint.
        try:
            yield
        finally:
            self.strategy.wait_for_checkpoint()

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

    def _log_env(self, env_cfg: dict) -> None:
        runtime = dict(env_cfg)
        runtime.update(self._randomness_cfg)
        runtime["seed"] = self._seed
        runtime["Distributed launcher"] = self._launcher
        runtime["Distributed training"] = self._distributed
        runtime["GPU number"] = self._world_size
        system = "\n    " + "\n    ".join(f"{k}: {v}" for k, v in collect_env().items())
        runtime_text = "\n    " + "\n    ".join(f"{k}: {v}" for k, v in runtime.items())
        dashes = "-" * 60
        self.logger.info(
            f"\n{dashes}\nSystem environment:{system}\n\nRuntime environment:"
            f"{runtime_text}\n{dashes}\n"
        )
        if self.cfg._cfg_dict:
            self.logger.info(f"Config:\n{self.cfg.pretty_text}")


__all__ = ["Runner"]
