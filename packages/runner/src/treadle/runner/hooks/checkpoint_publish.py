"""Publishing a checkpoint: only the keys a user ships, named after the file's hash.

The name ends in the first 8 hex digits of the SHA-256 of the published file's bytes, which is
what ``torch.hub`` and treadle's ``load_from_http(check_hash=True)`` verify. (MMEngine hashes a
pickle of the dict instead, so its published names never pass that check.)
"""

from __future__ import annotations

import hashlib
import posixpath
from collections.abc import Sequence
from typing import Any

from treadle.logging import print_log

from ..checkpoint import _load_checkpoint
from ..checkpoint.formats import TORCH, checkpoint_bytes
from ..checkpoint.remote_integrity import remove_digest


def published_name(path: str, data: bytes) -> str:
    """``path`` with ``-<hash>`` before its suffix, the hash being of ``data``.

    Example:
        >>> published_name('work_dirs/epoch_3.pth', b'...')  # doctest: +SKIP
        'work_dirs/epoch_3-1c2d3e4f.pth'
    """
    stem, _ = posixpath.splitext(path)
    return f"{stem}-{hashlib.sha256(data).hexdigest()[:8]}.pth"


def publish_checkpoint(path: str, keys: Sequence[str], backend: Any) -> str:
    """Write a copy of the checkpoint at ``path`` holding only ``keys``, next to it on
    ``backend``; return the copy's path.

    Example:
        >>> publish_checkpoint('work_dirs/epoch_3.pth', ['meta', 'state_dict'], backend)
        ... # doctest: +SKIP
        'work_dirs/epoch_3-1c2d3e4f.pth'
    """
    checkpoint = _load_checkpoint(path, map_location="cpu")
    removed = [key for key in checkpoint if key not in keys]
    for key in removed:
        del checkpoint[key]
    if removed:
        print_log(
            f"Publishing {path}: leaving out {removed}, which are not in published_keys "
            f"({list(keys)}); add them there to keep them",
            logger="current",
        )
    data = checkpoint_bytes(checkpoint, TORCH, path)
    final_path = published_name(path, data)
    backend.put(data, final_path)
    print_log(f"The checkpoint {path} is published to {final_path}.", logger="current")
    return final_path


def remove_checkpoint(path: str, backend: Any) -> bool:
    """Remove the checkpoint file (or folder: DeepSpeed writes folders) at ``path``; False
    where there is none."""
    if backend.isfile(path):
        backend.remove(path)
        remove_digest(path, backend)  # written beside checkpoints on object stores
        return True
    if backend.isdir(path):
        backend.rmtree(path)
        return True
    return False
