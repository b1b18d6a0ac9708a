"""BaseStrategy: how a model and its optimizer are placed, synchronized and saved.

The Runner talks to one strategy whatever the hardware: it asks it to set up the process
environment, to prepare the model (and optimizer wrapper and schedulers) together, for a
context that skips gradient synchronization while gradients accumulate, for the model,
optimizer and scheduler states of a checkpoint, and to write and read whole checkpoints
(through ``checkpoint_io``). The base versions keep one file per checkpoint, written by rank 0;
FSDP and DeepSpeed override the state and IO methods to shard them.
"""

from __future__ import annotations

import contextlib
import difflib
import inspect
import logging
import os.path as osp
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

import torch
from torch import nn

from treadle import dist
from treadle.logging import MMLogger, print_log
from treadle.runner.checkpoint import (
    _load_checkpoint,
    _load_checkpoint_to_model,
    save_checkpoint,
    tensors_to_cpu,
    weights_to_cpu,
)
from treadle.runner.device import get_device
from treadle.runner.model import unwrap_model
from treadle.runner.utils.process_group import end_process_group_at_exit

from .activation_checkpointing import apply_activation_checkpointing
from .async_sources import optimizers_of, step_changed_tensors
from .checkpoint_io import CheckpointIO, takes_backend_args

DEFAULT_REVISE_KEYS = [(r"^module.", "")]
# MMEngine's BaseStrategy arguments: accepted by every strategy (the Runner sets up the
# environment and the logger itself, so a strategy only keeps them).
_BASE_ARGUMENTS = (
    "dist_cfg",
    "work_dir",
    "experiment_name",
    "env_kwargs",
    "log_kwargs",
    "auto_scale_lr",
)


def _is_stateful(value: Any) -> bool:
    return callable(getattr(value, "state_dict", None)) and callable(
        getattr(value, "load_state_dict", None)
    )


def _compile_arguments() -> list[str]:
    return [name for name in inspect.signature(torch.compile).parameters if name != "model"]


class BaseStrategy:
    """The interface every strategy implements; everything but ``wrap_model`` has a base
    version that works on one file per checkpoint.

    Args:
        dist_cfg: keyword arguments of :func:`treadle.dist.init_dist` (``backend``, ...).
        work_dir, experiment_name, env_kwargs, log_kwargs, auto_scale_lr: MMEngine's
            BaseStrategy arguments, kept as attributes (the Runner sets up the environment and
            the logger; a FlexibleRunner passes them on as MMEngine's does).

    Example:
        >>> strategy = SingleDeviceStrategy()
        >>> model, optim_wrapper = strategy.prepare(model, optim_wrapper=optim_wrapper)
        >>> strategy.save_checkpoint('work_dirs/a.pth')
        >>> strategy.load_checkpoint('work_dirs/a.pth')['meta']['time']  # doctest: +SKIP
        '20260101_120000'
    """

    #: Writes and reads whole checkpoint dicts; a strategy that shards replaces it.
    checkpoint_io: CheckpointIO

    def __init__(
        self,
        *,
        dist_cfg: dict | None = None,
        work_dir: str = "work_dirs",
        experiment_name: str | None = None,
        env_kwargs: dict | None = None,
        log_kwargs: dict | None = None,
        auto_scale_lr: dict | None = None,
        **kwargs: Any,
    ) -> None:
        if kwargs:
            self._refuse_arguments(kwargs)
        self.dist_cfg = dict(dist_cfg or {})
        self.env_kwargs = dict(env_kwargs or {})
        if "dist_cfg" in self.env_kwargs:
            self.dist_cfg = {**self.env_kwargs["dist_cfg"], **self.dist_cfg}
        self.work_dir = osp.abspath(work_dir)
        self.experiment_name = experiment_name
        self.log_kwargs = dict(log_kwargs or {})
        self.auto_scale_lr = auto_scale_lr
        self.launcher = "none"
        self.model: nn.Module | None = None
        self.optim_wrapper: Any = None
        self.param_schedulers: Any = None
        self.dispatch_kwargs: dict[str, Any] = {}
        self.checkpoint_io = CheckpointIO()

    def _refuse_arguments(self, unknown: Mapping[str, Any]) -> None:
        accepted = [
            name
            for cls in type(self).__mro__
            if "__init__" in vars(cls)
            for name in inspect.signature(vars(cls)["__init__"]).parameters
            if name not in ("self", "kwargs")
        ]
        parts = []
        for name in unknown:
            close = difflib.get_close_matches(name, accepted, n=3)
            hint = f" (did you mean {', '.join(map(repr, close))}?)" if close else ""
            parts.append(f"{name!r}{hint}")
        raise TypeError(
            f"{type(self).__name__} got unknown arguments {', '.join(parts)}; it takes "
            f"{', '.join(dict.fromkeys(accepted))}"
        )

    # -- environment --------------------------------------------------------------------
    @property
    def distributed(self) -> bool:
        return dist.is_distributed()

    @property
    def world_size(self) -> int:
        return dist.get_world_size()

    @property
    def rank(self) -> int:
        return dist.get_rank()

    @property
    def logger(self) -> MMLogger:
        """The current treadle logger (the Runner's, when a Runner built this strategy)."""
        return MMLogger.get_current_instance()

    def setup_env(
        self,
        launcher: str = "none",
        cudnn_benchmark: bool = False,
        dist_cfg: dict | None = None,
    ) -> None:
        """Start the process group for ``launcher`` ('none', 'pytorch', 'slurm', 'mpi')
        unless one exists, and set cuDNN's benchmark mode."""
        self.launcher = launcher
        if dist_cfg is not None:
            self.dist_cfg.update(dist_cfg)
        if launcher != "none" and not dist.is_distributed():
            self._setup_distributed(launcher, **self.dist_cfg)
            if dist.is_distributed():
                # The group is this run's: end it before the interpreter tears torch down
                # (a gloo group left to that teardown can abort the process at exit).
                end_process_group_at_exit()
        if cudnn_benchmark:
            torch.backends.cudnn.benchmark = True

    def _setup_distributed(self, launcher: str = "pytorch", **kwargs: Any) -> None:
        """Start the process group (MMEngine's hook for strategies that start theirs their
        own way); ``kwargs`` are :func:`treadle.dist.init_dist`'s."""
        dist.init_dist(launcher, **kwargs)

    # -- model and optimizer ------------------------------------------------------------
    def prepare(
        self,
        model: nn.Module | dict,
        *,
        optim_wrapper: Any = None,
        param_scheduler: Any = None,
        compile: bool | dict = False,
        dispatch_kwargs: dict | None = None,
    ) -> Any:
        """Place ``model`` (and wrap it for distributed training), remember the optimizer
        wrapper and schedulers, compile when asked; return the model alone, or
        ``(model, optim_wrapper)``, or ``(model, optim_wrapper, param_scheduler)`` as given,
        like MMEngine's strategies.

        ``model`` and ``optim_wrapper`` may be configs (MODELS, ``optim_wrapper`` config);
        a model this strategy has already wrapped is not wrapped again, so the Runner may
        call ``wrap_model`` at construction and ``prepare`` when it trains.
        ``dispatch_kwargs`` (``max_iters``...) is kept for the strategy's other methods.
        """
        if dispatch_kwargs is not None:
            self.dispatch_kwargs.update(dispatch_kwargs)
        if isinstance(model, Mapping):
            from treadle.runner.registry import MODELS

            model = MODELS.build(dict(model))
        if model is not self.model:
            model = self.wrap_model(model)
        model = self.compile_model(model, compile)
        self.model = model
        if isinstance(optim_wrapper, Mapping):
            from treadle.runner.optim import build_optim_wrapper

            optim_wrapper = build_optim_wrapper(unwrap_model(model), optim_wrapper)
        self.optim_wrapper = optim_wrapper
        self.param_schedulers = param_scheduler
        if optim_wrapper is None:
            return self.model
        if param_scheduler is None:
            return self.model, optim_wrapper
        return self.model, optim_wrapper, param_scheduler

    def wrap_model(self, model: nn.Module) -> nn.Module:
        """``model`` placed on its device(s) and wrapped as this strategy trains it."""
        raise NotImplementedError(f"{type(self).__name__} does not implement wrap_model")

    def convert_model(self, model: nn.Module) -> nn.Module:
        """``model`` with layers this strategy replaces (e.g. BatchNorm <-> SyncBatchNorm);
        the base version changes nothing."""
        return model

    def compile_model(self, model: nn.Module, compile: bool | dict = False) -> nn.Module:
        """``model`` with its computation compiled by ``torch.compile`` (``compile``: True, or
        a dict of torch.compile's arguments plus an optional ``target``).

        Without ``target``, the forward of the model inside its wrapper is compiled, so the
        train, val and test steps all run it compiled while the optimizer step, hooks and
        DDP/FSDP communication stay outside the graph. ``target='train_step'`` (or another
        method name) compiles that method of ``model`` instead, as MMEngine does.
        """
        if compile is None or compile is False:
            return model
        if compile is True:
            options: dict[str, Any] = {}
        elif isinstance(compile, Mapping):
            options = dict(compile)
        else:
            raise TypeError(
                f"compile must be a bool or a dict of torch.compile arguments, got "
                f"{type(compile).__name__}: {compile!r}"
            )
        target = options.pop("target", None)
        known = _compile_arguments()
        unknown = [name for name in options if name not in known]
        if unknown:
            hints = []
            for name in unknown:
                close = difflib.get_close_matches(name, known, n=2)
                hints.append(f"{name!r}" + (f" (did you mean {close[0]!r}?)" if close else ""))
            raise TypeError(
                f"compile has arguments torch.compile does not take: {', '.join(hints)}; it "
                f"takes {', '.join(known)} (and treadle's 'target')"
            )
        owner = unwrap_model(model) if target is None else model
        name = "forward" if target is None else target
        function = getattr(owner, name, None)
        if not callable(function):
            raise AttributeError(
                f"compile target={name!r}: {type(owner).__name__} has no method {name!r}"
            )
        if getattr(function, "__treadle_compiled__", False):
            return model
        compiled = torch.compile(function, **options)
        compiled.__treadle_compiled__ = True  # type: ignore[attr-defined]
        setattr(owner, name, compiled)
        self.logger.info(
            f'Model has been "compiled" ({type(owner).__name__}.{name}). The first few '
            "iterations will be slow, please be patient."
        )
        return model

    def apply_activation_checkpointing(self, model: nn.Module, spec: Any) -> list[str]:
        """Checkpoint activations of the submodules of (the model inside) ``model`` that
        ``spec`` names: a dotted name or list of them, or a dict with ``modules`` (names),
        ``module_classes`` (classes or class names) and/or ``check_fn`` (a predicate, or a
        FUNCTIONS config); non-reentrant ``torch.utils.checkpoint``. Returns the names.

        Example:
            >>> strategy.apply_activation_checkpointing(model, dict(module_classes='Block'))
            ['blocks.0', 'blocks.1']
        """
        inner = unwrap_model(model)
        if spec is None:
            return []
        if isinstance(spec, str) or (
            isinstance(spec, (list, tuple)) and all(isinstance(s, str) for s in spec)
        ):
            return apply_activation_checkpointing(inner, modules=spec)
        if isinstance(spec, Mapping):
            spec = dict(spec)
            allowed = ("modules", "module_classes", "check_fn")
            unknown = [key for key in spec if key not in allowed]
            if unknown:
                raise TypeError(
                    f"activation_checkpointing has unknown keys {unknown}; it takes "
                    f"{', '.join(allowed)}"
                )
            check_fn = spec.get("check_fn")
            if isinstance(check_fn, (str, Mapping)):
                from treadle.runner.registry import FUNCTIONS

                check_fn = FUNCTIONS.build(
                    dict(type=check_fn) if isinstance(check_fn, str) else dict(check_fn)
                )
            return apply_activation_checkpointing(
                inner,
                modules=spec.get("modules"),
                module_classes=spec.get("module_classes"),
                check_fn=check_fn,
            )
        if callable(spec):
            return apply_activation_checkpointing(inner, check_fn=spec)
        raise TypeError(
            "activation_checkpointing must be a submodule name, a list of them, a dict "
            f"(modules / module_classes / check_fn) or a callable, got "
            f"{type(spec).__name__}: {spec!r}"
        )

    @contextlib.contextmanager
    def no_sync(self, model: nn.Module | None = None) -> Iterator[None]:
        """Inside the block, backward passes do not synchronize gradients across processes
        (gradient accumulation); a model without ``no_sync`` synchronizes nothing anyway."""
        model = self.model if model is None else model
        no_sync = getattr(model, "no_sync", None)
        with no_sync() if callable(no_sync) else contextlib.nullcontext():
            yield

    # -- states ---------------------------------------------------------------------------
    def _require_optim_wrapper(self, what: str) -> Any:
        wrapper = self.optim_wrapper
        if not callable(getattr(wrapper, "state_dict", None)):
            raise TypeError(
                f"{what} needs a built optimizer wrapper (OptimWrapper or OptimWrapperDict), "
                f"but the strategy's optim_wrapper is {wrapper!r}"
            )
        return wrapper

    def model_state_dict(self) -> dict:
        """The weights of the model inside its wrapper, on the CPU
        (``checkpoint['state_dict']``)."""
        if self.model is None:
            raise RuntimeError("model_state_dict needs a prepared model: call prepare first")
        return weights_to_cpu(unwrap_model(self.model).state_dict())

    def optim_state_dict(self) -> dict:
        """The optimizer wrapper's state, on the CPU (``checkpoint['optimizer']``)."""
        wrapper = self._require_optim_wrapper("save_checkpoint(save_optimizer=True)")
        return tensors_to_cpu(wrapper.state_dict())

    def scheduler_state_dict(self) -> dict | list:
        """The schedulers' states: a list, or ``{optimizer name: list}``
        (``checkpoint['param_schedulers']``)."""
        schedulers = self.param_schedulers
        if schedulers is None:
            return []
        if isinstance(schedulers, Mapping):
            return {name: [s.state_dict() for s in group] for name, group in schedulers.items()}
        if _is_stateful(schedulers):
            schedulers = [schedulers]
        return [scheduler.state_dict() for scheduler in schedulers]

    def checkpoint_template(self) -> dict:
        """What this strategy would save now, without copies (``state_dict`` and, when there
        is an optimizer wrapper, ``optimizer``): the template a sharded CheckpointIO loads
        into in place."""
        template: dict[str, Any] = {}
        if self.model is not None:
            template["state_dict"] = unwrap_model(self.model).state_dict()
        if callable(getattr(self.optim_wrapper, "state_dict", None)):
            template["optimizer"] = self.optim_wrapper.state_dict()
        return template

    @property
    def checkpoint_on_every_rank(self) -> bool:
        """Whether every rank must build the checkpoint dict it writes. The base versions read
        local state and write one file from rank 0, so rank 0 alone builds it (the others pass
        an empty dict to ``write_checkpoint``); a strategy whose state methods gather or shard
        (collectives), or that writes with its own CheckpointIO, needs every rank."""
        cls = type(self)
        return (
            cls.model_state_dict is not BaseStrategy.model_state_dict
            or cls.optim_state_dict is not BaseStrategy.optim_state_dict
            or type(self.checkpoint_io) is not CheckpointIO
        )

    def load_model_state_dict(
        self,
        state_dict: dict,
        *,
        strict: bool = False,
        revise_keys: list = DEFAULT_REVISE_KEYS,
    ) -> None:
        """Load weights into the model inside its wrapper, after renaming keys by
        ``revise_keys`` (``(pattern, replacement)`` regexes; the default strips ``module.``).
        With ``strict``, missing or unexpected keys are an error; else a warning."""
        if self.model is None:
            raise RuntimeError("load_model_state_dict needs a prepared model: call prepare first")
        if not isinstance(state_dict, OrderedDict):
            # The loader keeps the _metadata (versions) of an OrderedDict, which torch.save
            # preserves; a plain dict has none.
            metadata = getattr(state_dict, "_metadata", None)
            state_dict = OrderedDict(state_dict)
            if metadata is not None:
                state_dict._metadata = metadata  # type: ignore[attr-defined]
        _load_checkpoint_to_model(
            unwrap_model(self.model),
            {"state_dict": state_dict},
            strict,
            revise_keys=revise_keys,
        )

    def load_optim_state_dict(self, state_dict: dict) -> None:
        """Load the optimizer wrapper's state (with its grad scaler)."""
        self._require_optim_wrapper("load_optim_state_dict").load_state_dict(state_dict)

    def load_scheduler_state_dict(self, state_dict: dict | list) -> None:
        """Load the schedulers' states in order; a different number of schedulers is a warning
        (the first ones are loaded), a list for a dict of groups (or the reverse) an error."""
        schedulers = self.param_schedulers
        if schedulers is None:
            raise RuntimeError("load_scheduler_state_dict: the strategy has no param_schedulers")
        if isinstance(schedulers, Mapping):
            if not isinstance(state_dict, Mapping):
                raise TypeError(
                    "the checkpoint's param_schedulers is a list, but this run has schedulers "
                    f"per optimizer ({', '.join(schedulers)})"
                )
            for name, group in schedulers.items():
                self._load_scheduler_group(f" for {name!r}", group, state_dict.get(name, []))
            return
        if isinstance(state_dict, Mapping):
            raise TypeError(
                "the checkpoint has param_schedulers per optimizer "
                f"({', '.join(state_dict)}), but this run has one list of schedulers"
            )
        if _is_stateful(schedulers):
            schedulers = [schedulers]
        self._load_scheduler_group("", schedulers, state_dict)

    @staticmethod
    def _load_scheduler_group(name: str, schedulers: list, states: list) -> None:
        if len(schedulers) != len(states):
            print_log(
                f"the checkpoint has {len(states)} parameter schedulers{name} and this run has "
                f"{len(schedulers)}: only the first {min(len(states), len(schedulers))} are "
                "resumed",
                logger="current",
                level=logging.WARNING,
            )
        for scheduler, state in zip(schedulers, states, strict=False):
            scheduler.load_state_dict(state)

    # -- whole checkpoints ------------------------------------------------------------------
    def write_checkpoint(
        self,
        checkpoint: dict,
        filepath: str,
        *,
        backend_args: dict | None = None,
        async_save: bool = False,
        also_in_background: Iterable[torch.Tensor] = (),
    ) -> None:
        """Write a whole checkpoint dict (every rank calls; see ``checkpoint_on_every_rank``).
        ``async_save`` returns before the write is done where the CheckpointIO can;
        ``also_in_background`` are tensors besides the model's and the optimizers' that may be
        copied after that (their owner waits for the copy before it changes them)."""
        if async_save and self.model is not None:
            # Parameters and optimizer state are copied while the next forward and backward run;
            # the optimizers' next step waits for that copy.
            optimizers = optimizers_of(self.optim_wrapper)
            tensors = step_changed_tensors(self.model, optimizers)
            tensors.extend(also_in_background)
            self.checkpoint_io.copy_in_background(optimizers, tensors)
        self.checkpoint_io.save(
            checkpoint, filepath, backend_args=backend_args, async_save=async_save
        )

    def prepare_async_save(self, also_in_background: Callable[[], Iterable[torch.Tensor]]) -> None:
        """Get the host buffers of the first asynchronous save ready ahead of it, where the
        CheckpointIO can (CheckpointHook(async_save=True) calls it before training);
        ``also_in_background()`` as for :meth:`write_checkpoint`."""
        prepare = getattr(self.checkpoint_io, "prepare_async_save", None)
        if prepare is None or self.model is None:
            return
        optimizers = optimizers_of(self.optim_wrapper)
        model = self.model

        def tensors() -> list[torch.Tensor]:
            return [*step_changed_tensors(model, optimizers), *also_in_background()]

        prepare(optimizers, tensors)

    def read_checkpoint(
        self, filepath: str, *, map_location: Any = "cpu", backend_args: dict | None = None
    ) -> dict:
        """Read a whole checkpoint dict (every rank calls); ``map_location='default'`` is the
        current device; ``backend_args`` (CheckpointHook's) describe the store it is on."""
        if map_location == "default":
            map_location = get_device()
        # Given only when set and taken: a CheckpointIO of the user's may not take them.
        extra = {}
        if backend_args is not None and takes_backend_args(self.checkpoint_io.load):
            extra["backend_args"] = backend_args
        checkpoint = self.checkpoint_io.load(
            filepath, map_location=map_location, template=self.checkpoint_template(), **extra
        )
        if not isinstance(checkpoint, dict):
            raise RuntimeError(
                f"No state_dict found in checkpoint file {filepath}: it holds a "
                f"{type(checkpoint).__name__}, not a dict"
            )
        return checkpoint

    def wait_for_checkpoint(self) -> None:
        """Return once every asynchronous checkpoint write has finished."""
        self.checkpoint_io.wait()

    # -- MMEngine's helpers built on the above ------------------------------------------------
    def save_checkpoint(
        self,
        filename: str,
        *,
        save_optimizer: bool = True,
        save_param_scheduler: bool = True,
        extra_ckpt: dict | None = None,
        callback: Callable[[dict], None] | None = None,
    ) -> None:
        """Write the model (and optimizer, schedulers) plus ``extra_ckpt`` to ``filename``;
        ``callback(checkpoint)`` may edit the dict before it is written. Every rank calls."""
        if not self.checkpoint_on_every_rank and self.rank != 0:
            self.write_checkpoint({}, filename)
            return
        checkpoint: dict[str, Any] = {"state_dict": self.model_state_dict()}
        if save_optimizer and self.optim_wrapper is not None:
            checkpoint["optimizer"] = self.optim_state_dict()
        if save_param_scheduler and self.param_schedulers is not None:
            checkpoint["param_schedulers"] = self.scheduler_state_dict()
        extra = dict(extra_ckpt or {})
        meta = dict(extra.pop("meta", None) or {})
        from treadle.runner import __version__

        meta.update(
            time=time.strftime("%Y%m%d_%H%M%S", time.localtime()), treadle_version=__version__
        )
        checkpoint.update(extra)
        checkpoint["meta"] = meta
        if callback is not None:
            callback(checkpoint)
        self.write_checkpoint(checkpoint, filename)

    def load_checkpoint(
        self,
        filename: str,
        *,
        map_location: Any = "cpu",
        strict: bool = False,
        revise_keys: list = DEFAULT_REVISE_KEYS,
        callback: Callable[[dict], None] | None = None,
    ) -> dict:
        """Load the weights of ``filename`` into the model (``callback(checkpoint)`` first may
        edit it); returns the checkpoint without its ``state_dict``."""
        self.logger.info(f"Load checkpoint from {filename}")
        checkpoint = self.read_checkpoint(filename, map_location=map_location)
        if callback is not None:
            callback(checkpoint)
        state_dict = checkpoint.pop("state_dict", None)
        if state_dict is None:
            # A file of bare weights (torchvision's, a state_dict saved alone).
            state_dict, checkpoint = checkpoint, {}
        self.load_model_state_dict(state_dict, strict=strict, revise_keys=revise_keys)
        return checkpoint

    def resume(
        self,
        filename: str,
        *,
        resume_optimizer: bool = True,
        resume_param_scheduler: bool = True,
        map_location: Any = "default",
        callback: Callable[[dict], None] | None = None,
    ) -> dict:
        """Load weights, optimizer and scheduler states of ``filename``; returns the rest of the
        checkpoint (``meta``...). With ``accumulative_counts`` the optimizer wrapper's counters
        restart at the saved iteration (``dispatch_kwargs['max_iters']`` is needed then)."""
        self.logger.info(f"Resume checkpoint from {filename}")
        checkpoint = self.load_checkpoint(filename, map_location=map_location, callback=callback)
        if resume_optimizer and "optimizer" in checkpoint:
            self.load_optim_state_dict(checkpoint.pop("optimizer"))
        resume_schedulers = resume_param_scheduler and self.param_schedulers is not None
        if resume_schedulers and "param_schedulers" in checkpoint:
            self.load_scheduler_state_dict(checkpoint.pop("param_schedulers"))
        counts = getattr(self.optim_wrapper, "_accumulative_counts", 1)
        if counts > 1:
            if "max_iters" not in self.dispatch_kwargs:
                raise ValueError(
                    f"resume: the optimizer wrapper accumulates gradients over {counts} "
                    "iterations, so prepare(..., dispatch_kwargs=dict(max_iters=N)) must give "
                    "the number of iterations of the run"
                )
            meta = checkpoint.get("meta", {})
            self.optim_wrapper.initialize_count_status(
                self.model, meta.get("iter", 0), self.dispatch_kwargs["max_iters"]
            )
        return checkpoint

    # -- Statefuls (treadle's own) ----------------------------------------------------------
    def state_dict_of(self, states: Mapping[str, Any]) -> dict[str, Any]:
        """``{key: value.state_dict()}`` for Statefuls, other values as they are."""
        return {
            key: value.state_dict() if _is_stateful(value) else value
            for key, value in states.items()
        }

    def save(
        self, states: Mapping[str, Any], filepath: str, backend_args: dict | None = None
    ) -> None:
        """Write the state of every entry of ``states`` to ``filepath`` (rank 0 writes; the
        file appears whole or not at all)."""
        checkpoint = self.state_dict_of(states)
        if self.rank == 0:
            save_checkpoint(checkpoint, filepath, backend_args=backend_args)

    def load(
        self,
        states: Mapping[str, Any],
        filepath: str,
        map_location: Any = "cpu",
        strict: bool = False,
    ) -> list[str]:
        """Load ``filepath`` into the Statefuls of ``states``; return the checkpoint's keys
        that no entry took. An entry the checkpoint lacks is an error with ``strict``, else a
        warning."""
        checkpoint = _load_checkpoint(filepath, map_location=map_location)
        if not isinstance(checkpoint, Mapping):
            raise TypeError(f"{filepath} holds a {type(checkpoint).__name__}, not a dict of states")
        missing = [key for key in states if key not in checkpoint]
        if missing:
            message = (
                f"{filepath} has no state for {', '.join(map(repr, missing))} (it holds "
                f"{', '.join(map(repr, checkpoint))})"
            )
            if strict:
                raise KeyError(message)
            print_log(message, logger="current", level=logging.WARNING)
        for key, value in states.items():
            if key in checkpoint and _is_stateful(value):
                value.load_state_dict(checkpoint[key])
        return [key for key in checkpoint if key not in states]
