"""A stand-in runner for unit tests of CheckpointHook and LoggerHook (hooks-b).

It has what those hooks touch (work_dir, log_dir, timestamp, epoch/iter counters, a real
MessageHub, MMLogger and Visualizer with a LocalVisBackend, a log processor that records its
calls, ``save_checkpoint`` writing real files on any treadle.fileio backend) and nothing else.
Tests move the counters by hand: ``runner.epoch = 2``.

Example:
    >>> runner = StubRunner(tmp_path)
    >>> hook = CheckpointHook(interval=1)
    >>> hook.before_train(runner)
    >>> runner.epoch = 0
    >>> hook.after_train_epoch(runner)
"""

from __future__ import annotations

import itertools
import os
from types import SimpleNamespace
from typing import Any

import torch
from torch import nn

from treadle import fileio
from treadle.logging import MessageHub, MMLogger
from treadle.runner.checkpoint import save_checkpoint
from treadle.visual import Visualizer

_names = itertools.count()


class RecordingLogProcessor:
    """Returns ``({'loss': i}, 'line i')`` and records ``(batch_idx, mode)`` of each call."""

    def __init__(self) -> None:
        self.calls: list[tuple[int, str]] = []

    def get_log_after_iter(self, runner: Any, batch_idx: int, mode: str) -> tuple[dict, str]:
        self.calls.append((batch_idx, mode))
        return {"loss": float(batch_idx), "lr": 0.1}, f"{mode} line {batch_idx}"

    def get_log_after_epoch(
        self, runner: Any, batch_idx: int, mode: str, with_non_scalar: bool = False
    ) -> tuple[dict, str]:
        self.calls.append((batch_idx, f"{mode}-epoch"))
        tag: dict[str, Any] = {f"{mode}/acc": 0.5}
        if with_non_scalar:
            tag[f"{mode}/confusion"] = torch.tensor([[1, 0], [0, 1]])
            tag[f"{mode}/opaque"] = object()
        return tag, f"{mode} epoch line"


class StubRunner:
    """See the module's docstring."""

    def __init__(
        self,
        work_dir: Any,
        max_epochs: int = 3,
        max_iters: int = 12,
        epoch_length: int = 4,
        with_train_loop: bool = True,
    ) -> None:
        name = f"hooks_b_{os.getpid()}_{next(_names)}"
        self.work_dir = str(work_dir)
        self.timestamp = "20260101_000000"
        self.log_dir = os.path.join(self.work_dir, self.timestamp)
        os.makedirs(self.log_dir, exist_ok=True)
        self.experiment_name = name
        self.epoch = 0
        self.iter = 0
        self.max_epochs = max_epochs
        self.max_iters = max_iters
        self.train_dataloader = list(range(epoch_length))
        self.val_dataloader = list(range(2))
        self.test_dataloader = list(range(2))
        self._train_loop = SimpleNamespace() if with_train_loop else None
        self.model = nn.Linear(2, 1)
        self.message_hub = MessageHub.get_instance(name)
        self.logger = MMLogger.get_instance(
            name, log_file=os.path.join(self.log_dir, f"{self.timestamp}.log")
        )
        self.visualizer = Visualizer.get_instance(
            name,
            vis_backends=[dict(type="LocalVisBackend")],
            save_dir=self.log_dir,  # the Visualizer adds vis_data/
        )
        self.log_processor = RecordingLogProcessor()
        self.saved: list[dict] = []

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
        **kwargs: Any,
    ) -> None:
        """Write ``out_dir/filename`` with meta, weights and the message hub's state."""
        path = fileio.join_path(out_dir, filename, backend_args=backend_args)
        checkpoint = dict(
            meta=dict(meta or {}),
            state_dict=self.model.state_dict(),
            message_hub=self.message_hub.state_dict(),
        )
        if save_optimizer:
            checkpoint["optimizer"] = {"state": {}, "param_groups": []}
        self.saved.append(
            dict(
                path=path,
                save_optimizer=save_optimizer,
                save_param_scheduler=save_param_scheduler,
                meta=meta,
                by_epoch=by_epoch,
                kwargs=kwargs,
            )
        )
        save_checkpoint(checkpoint, path, backend_args=backend_args)


def files(directory: Any) -> list[str]:
    """The names of the files directly in ``directory``, sorted."""
    return sorted(
        name for name in os.listdir(directory) if os.path.isfile(os.path.join(directory, name))
    )
