"""The ``last_checkpoint`` pointer: the file in a folder that names the checkpoint its run
saved last.

MMEngine writes the checkpoint's full path into it, so a work dir copied or moved elsewhere
(another disk, another machine, a bucket synced down) points back at the files it was copied
from. treadle writes the name relative to the pointer's own folder when the checkpoint lies in
that folder (``epoch_12.pth``), and the full path or URL only for a checkpoint elsewhere (a
``CheckpointHook(out_dir='s3://...')``). Reading resolves a relative name against the pointer's
folder and takes a full path as it is, so MMEngine's pointers still work.
"""

from __future__ import annotations

import os

from treadle import fileio

from .store_paths import path_backend

POINTER = "last_checkpoint"


def _is_url(path: str) -> bool:
    return "://" in path


def _inside(folder: str, checkpoint: str) -> str | None:
    """``checkpoint`` relative to ``folder`` when it lies inside it, else None."""
    if _is_url(folder) != _is_url(checkpoint):
        return None
    if _is_url(folder):
        prefix = folder.rstrip("/") + "/"
        return checkpoint[len(prefix) :] if checkpoint.startswith(prefix) else None
    folder, checkpoint = os.path.abspath(folder), os.path.abspath(checkpoint)
    try:
        if os.path.commonpath([folder, checkpoint]) != folder or folder == checkpoint:
            return None
    except ValueError:  # another drive on Windows
        return None
    return os.path.relpath(checkpoint, folder)


class PointerStyle:
    """How pointers name a checkpoint that lies in their own folder: relative (treadle's
    default), or by its full path as MMEngine does (``full_path = True``; treadle.compat sets it
    while installed, since toolbox scripts read ``last_checkpoint`` and open what it names).

    Example:
        >>> PointerStyle.full_path = True
        >>> pointer_text('/w', '/w/epoch_3.pth')
        '/w/epoch_3.pth'
        >>> PointerStyle.full_path = False
    """

    full_path = False


def pointer_text(folder: str, checkpoint: str) -> str:
    """What the pointer in ``folder`` says to name ``checkpoint``: relative inside ``folder``,
    the full path or URL elsewhere (and everywhere with ``PointerStyle.full_path``).

    Example:
        >>> pointer_text('work_dirs/toy', 'work_dirs/toy/epoch_3.pth')
        'epoch_3.pth'
        >>> pointer_text('work_dirs/toy', 's3://bucket/toy/epoch_3.pth')
        's3://bucket/toy/epoch_3.pth'
    """
    folder, checkpoint = os.fspath(folder), os.fspath(checkpoint)
    if PointerStyle.full_path:
        return checkpoint
    relative = _inside(folder, checkpoint)
    return checkpoint if relative is None else relative


def write_pointer(folder: str, checkpoint: str, backend: object | None = None) -> None:
    """Point the ``last_checkpoint`` of ``folder`` at ``checkpoint`` (written whole, through
    ``backend`` when given, else the backend of ``folder``).

    Example:
        >>> write_pointer('work_dirs/toy', 'work_dirs/toy/epoch_3.pth')
    """
    folder = os.fspath(folder)
    text = pointer_text(folder, checkpoint)
    if backend is None:
        fileio.put_text(text, fileio.join_path(folder, POINTER))
    else:
        backend.put_text(text, backend.join_path(folder, POINTER))  # type: ignore[attr-defined]


def resolve_pointer(folder: str, text: str) -> str:
    """The checkpoint a pointer of ``folder`` holding ``text`` names: a relative name joined
    to ``folder``; a full path (MMEngine's pointers) or a URL as it is.

    Example:
        >>> resolve_pointer('work_dirs/toy', 'epoch_3.pth')
        'work_dirs/toy/epoch_3.pth'
    """
    text = text.strip()
    if _is_url(text) or os.path.isabs(text):
        return text
    return fileio.join_path(os.fspath(folder), text)


def read_pointer(folder: str, backend_args: dict | None = None) -> str | None:
    """The checkpoint named by the ``last_checkpoint`` of ``folder`` (resolved, see
    :func:`resolve_pointer`), or None when there is no pointer or it is empty.
    ``backend_args`` (CheckpointHook's: endpoint, credentials...) describe the store of a
    ``folder`` that is a URL; a local folder is read as it is.

    Example:
        >>> read_pointer('work_dirs/toy')
        'work_dirs/toy/epoch_3.pth'
        >>> read_pointer('s3://bucket/run', backend_args=dict(endpoint_url='http://minio:9000'))
        's3://bucket/run/epoch_3.pth'
    """
    folder = os.fspath(folder)
    backend = path_backend(folder, backend_args)
    path = backend.join_path(folder, POINTER)
    if not backend.exists(path):
        return None
    text = backend.get_text(path).strip()
    return resolve_pointer(folder, text) if text else None
