"""A checkpoint directory that every rank writes into, which takes its real name only once
all of them have finished (DeepSpeed's and ColossalAI's checkpoints).

The ranks write under ``.NAME.partial`` next to the final path; rank 0 then replaces whatever
held the final name with it, so a run killed mid-save never leaves a directory under the
checkpoint's name.
"""

from __future__ import annotations

import os
import shutil

from treadle import dist


def partial_directory(filepath: str) -> str:
    """The empty ``.NAME.partial`` directory (path) the ranks write ``filepath`` into; called
    on every rank (rank 0 clears what a stopped run left, then all wait for it).

    Example:
        >>> partial = partial_directory('work_dirs/epoch_3.pth')  # doctest: +SKIP
        >>> os.path.basename(partial)  # doctest: +SKIP
        '.epoch_3.pth.partial'
    """
    directory, name = os.path.split(os.path.abspath(filepath))
    partial = os.path.join(directory, f".{name}.partial")
    if dist.get_rank() == 0:
        shutil.rmtree(partial, ignore_errors=True)
    dist.barrier()
    return partial


def publish_directory(partial: str, filepath: str) -> None:
    """Give ``partial`` the name ``filepath`` once every rank has written its part (called on
    every rank; rank 0 renames)."""
    dist.barrier()
    if dist.get_rank() == 0:
        if os.path.isdir(filepath):
            shutil.rmtree(filepath)
        elif os.path.exists(filepath):
            os.remove(filepath)
        os.replace(partial, filepath)
    dist.barrier()
