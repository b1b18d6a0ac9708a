"""find_latest_checkpoint: the checkpoint to resume from in a work directory.

MMEngine returns whatever the ``last_checkpoint`` pointer file says. The pointer is written
after the checkpoint, so a run stopped between the two leaves it missing or one checkpoint
behind; and a checkpoint written in place by another tool can be cut short. Here the pointer
is followed only when it names a complete file at least as far in training as any other
complete checkpoint in the directory; otherwise the complete ``*.pth`` with the highest number
in its name (``epoch_12.pth``, ``iter_4000.pth``) wins. Temporary files (treadle writes
``.epoch_12.pth.<random>.tmp``) never end in ``.pth`` and are never picked.
"""

from __future__ import annotations

import logging
import os
import re

from treadle import fileio
from treadle.fileio import LocalBackend
from treadle.logging import print_log

from .torch_format import is_complete_torch_file

POINTER = "last_checkpoint"
SUFFIX = ".pth"
_NUMBER = re.compile(r"(\d+)(?!.*\d)")


def _number(name: str) -> int | None:
    match = _NUMBER.search(os.path.basename(name))
    return int(match.group(1)) if match else None


def _is_complete(path: str, local: bool) -> bool:
    # Object stores replace whole objects: what exists there is complete.
    return is_complete_torch_file(path) if local else True


def _candidates(directory: str, local: bool) -> list[tuple[int, str]]:
    found = []
    for name in fileio.list_dir_or_file(directory, list_dir=False, suffix=SUFFIX):
        base = os.path.basename(name)
        number = _number(base)
        if number is None or base.startswith("."):
            continue
        path = fileio.join_path(directory, name)
        if _is_complete(path, local):
            found.append((number, path))
    return sorted(found)


def _is_local(path: str) -> bool:
    # The pointer in a local work_dir may name a checkpoint on another backend (an S3 out_dir).
    return isinstance(fileio.get_file_backend(path, enable_singleton=True), LocalBackend)


def _read_pointer(directory: str) -> str | None:
    pointer = fileio.join_path(directory, POINTER)
    if not fileio.exists(pointer):
        return None
    return fileio.get_text(pointer).strip() or None


def find_latest_checkpoint(path: str) -> str | None:
    """The newest complete checkpoint in the work directory ``path``, or None.

    Example:
        >>> find_latest_checkpoint('work_dirs/resnet')
        'work_dirs/resnet/epoch_12.pth'
    """
    path = os.fspath(path)
    if not fileio.isdir(path):
        print_log("Did not find last_checkpoint to be resumed.", logger="current")
        return None
    local = _is_local(path)
    pointed = _read_pointer(path)
    candidates = _candidates(path, local)
    newest = candidates[-1] if candidates else None
    if pointed is not None and fileio.isfile(pointed) and _is_complete(pointed, _is_local(pointed)):
        number = _number(pointed)
        if newest is None or number is None or number >= newest[0]:
            return pointed
        print_log(
            f"{POINTER} names {pointed}, but {newest[1]} is further in training: resuming "
            "from the newest complete checkpoint",
            logger="current",
            level=logging.WARNING,
        )
        return newest[1]
    if pointed is not None:
        print_log(
            f"{POINTER} names {pointed}, which is missing or incomplete"
            + (f"; resuming from {newest[1]}" if newest else ""),
            logger="current",
            level=logging.WARNING,
        )
    if newest is None:
        print_log("Did not find last_checkpoint to be resumed.", logger="current")
        return None
    return newest[1]
