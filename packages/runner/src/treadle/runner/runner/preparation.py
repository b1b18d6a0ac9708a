"""What the Runner does around its loops: check the model has the step a loop needs, build
and prepare what training needs (weights, strategy, compile, the cfg's module features), wait
for asynchronous checkpoints, and log the environment."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from typing import Any

from torch import nn

from treadle.runner.model import unwrap_model
from treadle.runner.model.efficient_conv_bn_eval import turn_on_efficient_conv_bn_eval

from .builders import RunnerBuilders
from .env import collect_env
from .errors import RunnerTypeError


class RunnerPreparation(RunnerBuilders):
    """The part of :class:`~treadle.runner.runner.Runner` that gets the model, the strategy and
    the optimizer ready before a loop runs; not used on its own.

    Example:
        >>> runner._prepare_train()  # what train() does before its loop  # doctest: +SKIP
    """

    _model_name: str
    _model_wrapped: bool
    _randomness_cfg: dict
    _seed: int
    _train_loop: Any
    _val_loop: Any
    strategy: Any

    def _inner_model(self) -> nn.Module:
        return unwrap_model(self.model)

    def _require_step(self, name: str) -> None:
        if not callable(getattr(self._inner_model(), name, None)):
            purpose = {"train_step": "train", "val_step": "validate", "test_step": "test"}[name]
            raise RunnerTypeError(
                f"If you want to {purpose} the model, it needs {name}: the model "
                f"{self._model_name} has none; subclass treadle.runner.model.BaseModel (it "
                "provides train_step, val_step and test_step around your forward)"
            )

    def _prepare_train(self) -> None:
        """What ``train()`` does before the train loop runs: build what training needs, call
        ``before_run``, initialize the weights, load or resume."""
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
