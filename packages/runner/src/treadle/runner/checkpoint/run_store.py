"""Where a run's checkpoints are stored: the ``backend_args`` of its CheckpointHook.

A user names the store of the checkpoints once, in the CheckpointHook (``out_dir='s3://...'``,
``backend_args=dict(endpoint_url=..., aws_access_key_id=...)``). Saving uses them; so must
everything that finds and reads those checkpoints again on resume (the listing of out_dir, a
sharded checkpoint's ``.metadata`` and shard files), or a run that saved to such a store could
not resume from it.

The hook is found by its class name (its own or a base class's): this module sits below the
hooks in treadle.runner's layers (the loops use it too) and may not import them.
"""

from __future__ import annotations

import os
from typing import Any

from .sharded_storage import is_store_path


def _checkpoint_hook(runner: Any) -> Any | None:
    for hook in getattr(runner, "hooks", None) or []:
        if any(cls.__name__ == "CheckpointHook" for cls in type(hook).__mro__):
            return hook
    return None


def checkpoint_backend_args(runner: Any) -> dict | None:
    """The ``backend_args`` (or the deprecated ``file_client_args``) of ``runner``'s
    CheckpointHook, or None where it has none.

    Example:
        >>> runner = Runner(..., default_hooks=dict(checkpoint=dict(
        ...     type='CheckpointHook', out_dir='s3://bucket/run',
        ...     backend_args=dict(endpoint_url='http://127.0.0.1:9000'))))  # doctest: +SKIP
        >>> checkpoint_backend_args(runner)  # doctest: +SKIP
        {'endpoint_url': 'http://127.0.0.1:9000'}
    """
    hook = _checkpoint_hook(runner)
    return None if hook is None else hook.file_client_args or hook.backend_args


def _scheme(path: str | os.PathLike) -> str:
    text = os.fspath(path)
    return text.split("://", 1)[0] if "://" in text else ""


def store_backend_args(runner: Any, filename: str | os.PathLike) -> dict | None:
    """The CheckpointHook's ``backend_args`` for reading the checkpoint ``filename`` when it
    is on the kind of store the hook writes to (its ``out_dir``'s scheme, ``s3://``...); None
    for a local path, which is read as it is, and for another store (the hook's endpoint and
    credentials describe its own store, not a ``gs://`` or ``memory://`` path).

    Example:
        >>> store_backend_args(runner, 'work_dirs/epoch_1.pth') is None  # doctest: +SKIP
        True
    """
    hook = _checkpoint_hook(runner)
    if hook is None or not is_store_path(filename):
        return None
    out_root = getattr(hook, "_out_root", None)
    if out_root is None or _scheme(out_root) != _scheme(filename):
        return None
    return hook.file_client_args or hook.backend_args


def checkpoint_out_dir(runner: Any) -> str | None:
    """The folder ``runner``'s CheckpointHook writes to when it has an ``out_dir`` (that root
    joined with the work_dir's name, as the hook's ``before_train`` resolves it), else None.
    A resume looks there too: a new work_dir on another machine finds the checkpoints its run
    saved to the store.

    Example:
        >>> runner = Runner(work_dir='work_dirs/toy', ..., default_hooks=dict(checkpoint=dict(
        ...     type='CheckpointHook', out_dir='s3://bucket/ckpts')))  # doctest: +SKIP
        >>> checkpoint_out_dir(runner)  # doctest: +SKIP
        's3://bucket/ckpts/toy'
    """
    hook = _checkpoint_hook(runner)
    root = None if hook is None else getattr(hook, "_out_root", None)
    work_dir = os.fspath(runner.work_dir)
    if root is None or os.fspath(root) == work_dir:
        return None
    root, name = os.fspath(root), os.path.basename(work_dir.rstrip(os.sep))
    # Backends join a URL with slashes, as CheckpointHook's file_backend.join_path does.
    return f"{root.rstrip('/')}/{name}" if "://" in root else os.path.join(root, name)
