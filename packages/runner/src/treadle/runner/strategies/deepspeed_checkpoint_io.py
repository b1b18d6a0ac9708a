"""DeepSpeedCheckpointIO: checkpoints written and read by the DeepSpeed engine.

With the optimizer, a checkpoint is DeepSpeed's own directory (``epoch_3.pth/`` holding
``mp_rank_00_model_states.pt`` and one ``zero_pp_rank_N_..._optim_states.pt`` per rank), the
rest of the Runner's checkpoint riding along as DeepSpeed's client state. The directory is
written under a hidden temporary name and renamed once every rank has finished, so a
directory named like a checkpoint is always complete. Without the optimizer
(``save_optimizer=False``) the checkpoint is one ordinary file of consolidated weights, which
loads anywhere, as with MMEngine.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from treadle.logging import print_log

from .checkpoint_io import CheckpointIO
from .partial_directory import partial_directory, publish_directory

if TYPE_CHECKING:
    from .deepspeed import DeepSpeedStrategy

#: Marks ``checkpoint['optimizer']`` read from a DeepSpeed directory: the optimizer state is
#: still in the directory's files and the engine loads it from there.
DEEPSPEED_CHECKPOINT_KEY = "__deepspeed_checkpoint__"
# The Runner's checkpoint rides in DeepSpeed's client state under one key, so none of its
# keys ('optimizer'...) collides with the engine's own entries.
CLIENT_KEY = "treadle"


def is_deepspeed_checkpoint(path: str) -> bool:
    """Whether ``path`` is a directory the DeepSpeed engine wrote."""
    if not os.path.isdir(path):
        return False
    return any(
        name.startswith(("mp_rank_", "zero_pp_rank_")) and name.endswith(".pt")
        for name in os.listdir(path)
    )


def _require_local(path: str) -> None:
    if "://" in path and not path.startswith("file://"):
        raise ValueError(
            f"DeepSpeed writes and reads its checkpoints in a local directory, got {path!r}; "
            "set the CheckpointHook's out_dir to a local path (and copy the directory to "
            "remote storage afterwards)"
        )


class DeepSpeedCheckpointIO(CheckpointIO):
    """Checkpoints through ``strategy``'s DeepSpeed engine (every rank calls save and load).

    Example:
        >>> strategy.checkpoint_io.save(checkpoint, 'work_dirs/epoch_1.pth')  # doctest: +SKIP
        >>> sorted(os.listdir('work_dirs/epoch_1.pth'))  # doctest: +SKIP
        ['mp_rank_00_model_states.pt', 'zero_pp_rank_0_mp_rank_00_optim_states.pt', ...]
    """

    uses_async_writer = False  # DeepSpeed writes synchronously

    def __init__(self, strategy: DeepSpeedStrategy) -> None:
        super().__init__()
        self.strategy = strategy
        # The state dict read_checkpoint handed out: the engine has already loaded it.
        self.loaded_state_dict: dict | None = None
        self._warned_async = False

    def save(
        self,
        checkpoint: Mapping[str, Any],
        filepath: str,
        *,
        backend_args: dict | None = None,
        async_save: bool = False,
    ) -> None:
        filepath = os.fspath(filepath)
        if async_save and not self._warned_async:
            self._warned_async = True
            print_log(
                "DeepSpeedStrategy writes checkpoints synchronously (async_save is ignored)",
                logger="current",
                level=logging.WARNING,
            )
        if "optimizer" not in checkpoint:
            # Consolidated weights in one ordinary file, written by rank 0.
            super().save(checkpoint, filepath, backend_args=backend_args)
            return
        _require_local(filepath)
        # The engine writes the weights and the optimizer state itself.
        client_state = {
            CLIENT_KEY: {key: value for key, value in checkpoint.items() if key != "state_dict"}
        }
        engine = self.strategy.engine
        partial = partial_directory(filepath)
        engine.save_checkpoint(
            os.path.dirname(partial),
            tag=os.path.basename(partial),
            client_state=client_state,
            save_latest=False,
            exclude_frozen_parameters=self.strategy.exclude_frozen_parameters,
        )
        # Every rank has written its shard before the directory takes its real name.
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
        if not is_deepspeed_checkpoint(filepath):
            return super().load(
                filepath, map_location=map_location, template=template, backend_args=backend_args
            )
        # The weights now (loading them again later is skipped); the optimizer state when
        # load_optim_state_dict asks (a resume), not for load_from.
        client_state = self.strategy.load_engine_weights(filepath)
        checkpoint = dict(client_state.get(CLIENT_KEY) or {})
        wrapper_state = checkpoint.pop("optimizer", None)
        if wrapper_state is not None:
            checkpoint["optimizer"] = {DEEPSPEED_CHECKPOINT_KEY: filepath, **wrapper_state}
        state_dict = self.strategy.model_state_dict()
        self.loaded_state_dict = state_dict
        checkpoint["state_dict"] = state_dict
        return checkpoint
