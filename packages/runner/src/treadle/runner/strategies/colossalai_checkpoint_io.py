"""ColossalAICheckpointIO: checkpoints written and read through ColossalAI's booster.

With the optimizer, a checkpoint is a directory as MMEngine's ColossalAIStrategy writes it:
``model/`` and ``optimizer/`` (the booster's sharded files) and ``meta.pth`` (the rest of the
Runner's checkpoint: meta, message hub, schedulers, loop...), written under a hidden temporary
name and renamed once complete. Without the optimizer it is one ordinary file of weights.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from treadle import dist
from treadle.runner.checkpoint import _load_checkpoint, save_checkpoint

from .checkpoint_io import CheckpointIO
from .partial_directory import partial_directory, publish_directory

if TYPE_CHECKING:
    from .colossalai import ColossalAIStrategy

#: Marks ``checkpoint['optimizer']`` read from a ColossalAI directory (the state stays in its
#: ``optimizer/`` files until load_optim_state_dict asks for it).
COLOSSALAI_CHECKPOINT_KEY = "__colossalai_checkpoint__"
MODEL_DIR = "model"
OPTIMIZER_DIR = "optimizer"
META_FILE = "meta.pth"


def is_colossalai_checkpoint(path: str) -> bool:
    """Whether ``path`` is a checkpoint directory written through the booster."""
    return os.path.isdir(os.path.join(path, MODEL_DIR)) and os.path.isfile(
        os.path.join(path, META_FILE)
    )


class ColossalAICheckpointIO(CheckpointIO):
    """Checkpoints through ``strategy``'s booster (every rank calls save and load).

    Example:
        >>> strategy.checkpoint_io.save(checkpoint, 'work_dirs/epoch_1.pth')  # doctest: +SKIP
        >>> sorted(os.listdir('work_dirs/epoch_1.pth'))  # doctest: +SKIP
        ['meta.pth', 'model', 'optimizer']
    """

    uses_async_writer = False  # the booster writes synchronously

    def __init__(self, strategy: ColossalAIStrategy) -> None:
        super().__init__()
        self.strategy = strategy
        self.loaded_state_dict: dict | None = None

    def save(
        self,
        checkpoint: Mapping[str, Any],
        filepath: str,
        *,
        backend_args: dict | None = None,
        async_save: bool = False,
    ) -> None:
        filepath = os.fspath(filepath)
        if "optimizer" not in checkpoint:
            super().save(checkpoint, filepath, backend_args=backend_args)
            return
        if "://" in filepath:
            raise ValueError(
                f"ColossalAI writes its checkpoints in a local directory, got {filepath!r}; set "
                "the CheckpointHook's out_dir to a local path"
            )
        booster = self.strategy.booster
        model, optimizer = self.strategy.boosted_model, self.strategy.optim_wrapper.optimizer
        partial = partial_directory(filepath)
        if dist.get_rank() == 0:
            os.makedirs(partial)
        dist.barrier()
        booster.save_model(model, os.path.join(partial, MODEL_DIR), shard=True)
        booster.save_optimizer(optimizer, os.path.join(partial, OPTIMIZER_DIR), shard=True)
        if dist.get_rank() == 0:
            rest = {key: value for key, value in checkpoint.items() if key != "state_dict"}
            save_checkpoint(rest, os.path.join(partial, META_FILE))
        publish_directory(partial, filepath)

    def load(
        self,
        filepath: str,
        *,
        map_location: Any = "cpu",
        template: Mapping[str, Any] | None = None,
        backend_args: dict | None = None,
    ) -> Any:
        filepath = os.fspath(filepath)
        if not is_colossalai_checkpoint(filepath):
            return super().load(
                filepath, map_location=map_location, template=template, backend_args=backend_args
            )
        self.strategy.booster.load_model(
            self.strategy.boosted_model, os.path.join(filepath, MODEL_DIR)
        )
        checkpoint = dict(
            _load_checkpoint(os.path.join(filepath, META_FILE), map_location=map_location)
        )
        wrapper_state = checkpoint.pop("optimizer", None)
        if wrapper_state is not None:
            checkpoint["optimizer"] = {COLOSSALAI_CHECKPOINT_KEY: filepath, **wrapper_state}
        state_dict = self.strategy.model_state_dict()
        self.loaded_state_dict = state_dict
        checkpoint["state_dict"] = state_dict
        return checkpoint
