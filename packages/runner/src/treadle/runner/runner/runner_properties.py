"""The Runner's properties (MMEngine 0.10's): the run's name, folders, position, processes,
and its loops, dataloaders and evaluators, the loops built from their configs on first access."""

from __future__ import annotations

from typing import Any

from treadle.runner.hooks.hook import Hook

from .cfg_args import is_cfg
from .hook_list import HookList


class RunnerProperties:
    """The part of :class:`~treadle.runner.runner.Runner` that answers questions about the run
    (``runner.epoch``, ``runner.work_dir``, ``runner.train_dataloader``...); it reads the state
    the constructor sets and is not used on its own.

    Example:
        >>> runner.iter, runner.max_iters, runner.world_size  # doctest: +SKIP
        (120, 500, 2)
    """

    _experiment_name: str
    _model_name: str
    _work_dir: str
    _log_dir: str
    _launcher: str
    _distributed: bool
    _rank: int
    _world_size: int
    _deterministic: bool
    _seed: int
    _timestamp: str
    _dispatch: Any
    _train_loop: Any
    _val_loop: Any
    _test_loop: Any

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
            if is_cfg(loop):
                loop = self._train_loop = self.build_train_loop(loop)
            self.__dict__["_train_loop_seen"] = loop
        return loop

    @property
    def val_loop(self) -> Any:
        """The val loop, built on first access (None without validation)."""
        if is_cfg(self._val_loop):
            self._val_loop = self.build_val_loop(self._val_loop)
        return self._val_loop

    @property
    def test_loop(self) -> Any:
        """The test loop, built on first access (None without testing)."""
        if is_cfg(self._test_loop):
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
            raise RuntimeError(
                f"this runner has no {mode} loop (it should not be None here): give it {needs}"
            )
        return loop
