"""RunnerTestCase: a unittest.TestCase with ready configs to build a Runner in a few lines."""

from __future__ import annotations

import copy
import os
import shutil
import socket
import tempfile
from typing import Any, ClassVar
from unittest import TestCase
from uuid import uuid4

from treadle.config import Config
from treadle.logging import MessageHub, MMLogger
from treadle.registry import DefaultScope
from treadle.runner.registry import DATASETS, METRICS, MODELS

from .toys import ToyDataset, ToyMetric, ToyModel

_TOYS = ((MODELS, ToyModel), (METRICS, ToyMetric), (DATASETS, ToyDataset))


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _loader(sampler: str, shuffle: bool) -> dict:
    return dict(
        dataset=dict(type="ToyDataset"),
        sampler=dict(type=sampler, shuffle=shuffle),
        batch_size=3,
        num_workers=0,
    )


class RunnerTestCase(TestCase):
    """A TestCase whose ``setUp`` registers ``ToyModel``, ``ToyDataset`` and ``ToyMetric`` and
    prepares two configs that train them in a temporary work_dir: ``epoch_based_cfg`` (2
    epochs, validated every epoch) and ``iter_based_cfg`` (12 iterations, a checkpoint at the
    end). ``tearDown`` puts the registries back, closes the loggers' files, forgets the named
    instances (loggers, message hubs, visualizers, default scopes) and the process group.

    Example:
        >>> class TestMyHook(RunnerTestCase):
        ...     def test_train(self):
        ...         cfg = copy.deepcopy(self.epoch_based_cfg)
        ...         cfg.custom_hooks = [dict(type='MyHook')]
        ...         runner = self.build_runner(cfg)
        ...         runner.train()
    """

    dist_cfg: ClassVar[dict[str, Any]] = dict(
        MASTER_ADDR="127.0.0.1", MASTER_PORT=29600, RANK="0", WORLD_SIZE="1", LOCAL_RANK="0"
    )

    def setUp(self) -> None:
        self.temp_dir = tempfile.TemporaryDirectory()
        self._saved_env: dict[str, str | None] = {}
        # Another test's ToyModel comes back in tearDown.
        self._replaced = [
            (registry, toy.__name__, registry.module_dict.get(toy.__name__))
            for registry, toy in _TOYS
        ]
        for registry, toy in _TOYS:
            registry.register_module(module=toy, force=True)
        self.epoch_based_cfg = Config(
            dict(
                work_dir=self.temp_dir.name,
                model=dict(type="ToyModel"),
                train_dataloader=_loader("DefaultSampler", True),
                val_dataloader=_loader("DefaultSampler", False),
                val_evaluator=[dict(type="ToyMetric")],
                test_dataloader=_loader("DefaultSampler", False),
                test_evaluator=[dict(type="ToyMetric")],
                optim_wrapper=dict(optimizer=dict(type="SGD", lr=0.1)),
                train_cfg=dict(by_epoch=True, max_epochs=2, val_interval=1),
                val_cfg=dict(),
                test_cfg=dict(),
                default_hooks=dict(logger=dict(type="LoggerHook", interval=1)),
                custom_hooks=[],
                env_cfg=dict(dist_cfg=dict(backend="nccl")),
                experiment_name="test1",
            )
        )
        self.iter_based_cfg: Config = copy.deepcopy(self.epoch_based_cfg)
        self.iter_based_cfg.train_dataloader = _loader("InfiniteSampler", True)
        self.iter_based_cfg.log_processor = dict(by_epoch=False)
        self.iter_based_cfg.train_cfg = dict(by_epoch=False, max_iters=12)
        self.iter_based_cfg.default_hooks = dict(
            logger=dict(type="LoggerHook", interval=1),
            checkpoint=dict(type="CheckpointHook", interval=12, by_epoch=False),
        )

    def tearDown(self) -> None:
        _close_loggers()
        from treadle.visual import Visualizer

        for manager in (MMLogger, Visualizer, DefaultScope, MessageHub):
            manager._instance_dict.clear()
        for registry, name, previous in self._replaced:
            registry.module_dict.pop(name, None)
            if previous is not None:
                registry.register_module(module=previous, name=name, force=True)
        self.temp_dir.cleanup()
        import torch.distributed as torch_dist

        if torch_dist.is_available() and torch_dist.is_initialized():
            torch_dist.destroy_process_group()
        for key, value in self._saved_env.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value

    def build_runner(self, cfg: Config) -> Any:
        """``Runner.from_cfg(cfg)`` under an experiment name no other runner has."""
        from treadle.runner.runner import Runner

        cfg.experiment_name = self.experiment_name
        return Runner.from_cfg(cfg)

    @property
    def experiment_name(self) -> str:
        """The test method's name and a random suffix: loggers and message hubs are named
        instances, and two runners must not share them."""
        return f"{self._testMethodName}_{uuid4().hex}"

    def setup_dist_env(self) -> None:
        """Set the environment of a one-process ``launcher='pytorch'`` run (MASTER_ADDR,
        MASTER_PORT — a free one each time —, RANK, WORLD_SIZE, LOCAL_RANK); tearDown restores
        the variables as they were."""
        self.dist_cfg = {**self.dist_cfg, "MASTER_PORT": _free_port()}
        for key in ("MASTER_ADDR", "MASTER_PORT", "RANK", "WORLD_SIZE", "LOCAL_RANK"):
            self._saved_env.setdefault(key, os.environ.get(key))
            os.environ[key] = str(self.dist_cfg[key])

    def clear_work_dir(self) -> None:
        """Close the loggers' files and empty the work_dir."""
        _close_loggers()
        for name in os.listdir(self.temp_dir.name):
            path = os.path.join(self.temp_dir.name, name)
            if os.path.isdir(path) and not os.path.islink(path):
                shutil.rmtree(path)
            else:
                os.remove(path)


def _close_loggers() -> None:
    # Only treadle's loggers: logging.shutdown() would also close pytest's capture handlers.
    for logger in list(MMLogger._instance_dict.values()):
        for handler in list(logger.handlers):
            if hasattr(handler, "baseFilename"):
                logger.removeHandler(handler)
                handler.close()
