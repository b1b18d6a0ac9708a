"""A stand-in runner for unit tests of the hooks of part hooks-a (RuntimeInfoHook,
IterTimerHook, ParamSchedulerHook, EMAHook, EarlyStoppingHook, ProfilerHook...).

It holds what those hooks touch: a real MessageHub, MMLogger and OptimWrapper over a small
model, real parameter schedulers, a train loop with a DataLoader over a DefaultSampler, a
visualizer that records its calls, the epoch/iter counters (tests move them by hand:
``runner.iter = 3``), and ``call_hook`` that calls hooks in priority order like the Runner.

Example:
    >>> runner = HooksStubRunner(tmp_path)
    >>> runner.register_hook(RuntimeInfoHook())
    >>> runner.call_hook('before_train')
"""

from __future__ import annotations

import itertools
import os
from types import SimpleNamespace
from typing import Any, ClassVar

import torch
from torch import nn
from torch.utils.data import DataLoader

from treadle.logging import MessageHub, MMLogger
from treadle.runner.dataset import DefaultSampler
from treadle.runner.hooks import get_priority
from treadle.runner.optim import OptimWrapper

_names = itertools.count()


class RecordingVisualizer:
    """Records ``(method, args, kwargs)`` of every call in ``calls``."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, tuple, dict]] = []

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)

        def record(*args: Any, **kwargs: Any) -> None:
            self.calls.append((name, args, kwargs))

        return record


class SmallNet(nn.Module):
    """Linear(2, 2), BatchNorm1d(2), Linear(2, 1): parameters and buffers."""

    def __init__(self) -> None:
        super().__init__()
        self.linear1 = nn.Linear(2, 2)
        self.bn = nn.BatchNorm1d(2)
        self.linear2 = nn.Linear(2, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.linear2(self.bn(self.linear1(x)))


class HooksStubRunner:
    """See the module's docstring."""

    def __init__(
        self,
        work_dir: Any,
        max_epochs: int = 3,
        max_iters: int = 12,
        dataset_length: int = 8,
        batch_size: int = 2,
        lr: float = 0.1,
    ) -> None:
        name = f"hooks_a_{os.getpid()}_{next(_names)}"
        self.work_dir = str(work_dir)
        self.log_dir = os.path.join(self.work_dir, "20260101_000000")
        os.makedirs(self.log_dir, exist_ok=True)
        self.experiment_name = name
        self.seed = 7
        self.cfg = SimpleNamespace(pretty_text="model = dict(type='SmallNet')\n")
        self.epoch = 0
        self.iter = 0
        self.max_epochs = max_epochs
        self.max_iters = max_iters
        self._resume = False
        torch.manual_seed(0)
        self.model = SmallNet()
        self.optim_wrapper = OptimWrapper(torch.optim.SGD(self.model.parameters(), lr=lr))
        self.param_schedulers: Any = None
        self.message_hub = MessageHub.get_instance(name)
        self.logger = MMLogger.get_instance(name, log_level="INFO")
        self.visualizer = RecordingVisualizer()
        dataset = SimpleDataset(dataset_length)
        self.train_dataloader = DataLoader(
            dataset, batch_size=batch_size, sampler=DefaultSampler(dataset, shuffle=True, seed=0)
        )
        self.val_dataloader = DataLoader(dataset, batch_size=batch_size)
        self.test_dataloader = DataLoader(dataset, batch_size=batch_size)
        self.train_loop = SimpleNamespace(dataloader=self.train_dataloader, stop_training=False)
        self.hooks: list[Any] = []

    def register_hook(self, hook: Any) -> None:
        """Insert ``hook`` after the hooks of the same or a higher priority (a lower number)."""
        priority = get_priority(hook.priority)
        index = len(self.hooks)
        for i, other in enumerate(self.hooks):
            if priority < get_priority(other.priority):
                index = i
                break
        self.hooks.insert(index, hook)

    def call_hook(self, fn_name: str, **kwargs: Any) -> None:
        """Call ``fn_name`` of every hook, in priority order."""
        for hook in self.hooks:
            getattr(hook, fn_name)(self, **kwargs)


class SimpleDataset(torch.utils.data.Dataset):
    """``length`` samples ``dict(inputs=Tensor[2], data_samples=Tensor[])`` with a metainfo."""

    metainfo: ClassVar[dict] = dict(classes=("a", "b"))

    def __init__(self, length: int) -> None:
        generator = torch.Generator().manual_seed(0)
        self.inputs = torch.randn(length, 2, generator=generator)
        self.targets = torch.randn(length, generator=generator)

    def __len__(self) -> int:
        return len(self.inputs)

    def __getitem__(self, index: int) -> dict[str, torch.Tensor]:
        return dict(inputs=self.inputs[index], data_samples=self.targets[index])
