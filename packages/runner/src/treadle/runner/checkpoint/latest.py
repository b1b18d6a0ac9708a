"""find_latest_checkpoint: the checkpoint to resume from in a work directory.

MMEngine returns whatever the ``last_checkpoint`` pointer file says (treadle's pointer names the
checkpoint relative to the work directory, see :mod:`.pointer`; the path returned here is the
resolved one, under ``path``). The pointer is written
after the checkpoint, so a run stopped between the two leaves it missing or one checkpoint
behind; and a checkpoint written in place by another tool can be cut short. Here the pointer
is followed only when it names a complete file at least as far in training as any other
complete checkpoint in the directory; otherwise the complete ``*.pth`` with the highest number
in its name (``epoch_12.pth``, ``iter_4000.pth``) wins. Temporary files (treadle writes
``.epoch_12.pth.<random>.tmp``) never end in ``.pth`` and are never picked.

A checkpoint may also be a directory: a sharded checkpoint (FSDP, torch.distributed.checkpoint)
is complete once it holds its ``.metadata`` file (see :mod:`.sharded_layout`); one without it is
skipped like a cut-short file.

Each file is checked before it is returned (:func:`.verify.checkpoint_problem`: every record's CRC;
an object on S3 or another store against the digest written beside it,
:func:`.remote_integrity.remote_problem`), so a checkpoint garbled after it was written is named in
a warning and the one before it is taken. Only the checkpoints a run resumes from are candidates:
``best_*`` files (written without the optimizer) and published copies (``epoch_3-1c2d3e4f.pth``)
are not, nor a file whose name does not end in its number. When the pointer names a checkpoint in
another folder (``CheckpointHook(out_dir='s3://...')``), or the work directory's
``.checkpoint_out_dir`` names one (written by CheckpointHook before its first save), that folder's
checkpoints are candidates too. ``backend_args`` (CheckpointHook's: the endpoint and credentials
of its S3 out_dir) are used for every URL: listing, ``.metadata`` and digests.
"""

from __future__ import annotations

import logging
import os
import re

from treadle import fileio
from treadle.fileio import LocalBackend
from treadle.logging import print_log

from .pointer import POINTER, read_pointer
from .remote_integrity import stored_checkpoint_problem
from .sharded_layout import is_sharded_checkpoint
from .store_paths import path_backend
from .torch_format import is_complete_torch_file

# Written by CheckpointHook(out_dir=...) into work_dir: where its checkpoints go.
OUT_DIR_NOTE = ".checkpoint_out_dir"
SUFFIX = ".pth"
_NUMBER = re.compile(r"(\d+)(?!.*\d)")
# A resumable checkpoint's name ends in its number: epoch_12.pth, iter_4000.pth.
_RESUMABLE = re.compile(r"(\d+)\.pth$")
_PUBLISHED = re.compile(r"-[0-9a-f]{8}\.pth$")


def _number(name: str) -> int | None:
    match = _NUMBER.search(os.path.basename(name))
    return int(match.group(1)) if match else None


def _is_complete(path: str, local: bool, backend_args: dict | None = None) -> bool:
    # Object stores replace whole objects: what exists there is complete (and is checked
    # against its digest before it is taken); a folder there is a sharded checkpoint.
    if not local:
        return path_backend(path, backend_args).isfile(path) or is_sharded_checkpoint(
            path, backend_args
        )
    if os.path.isdir(path):
        return is_sharded_checkpoint(path)
    return is_complete_torch_file(path)


def _exists(path: str, local: bool, backend_args: dict | None = None) -> bool:
    return (
        (local and os.path.isdir(path))
        or path_backend(path, backend_args).isfile(path)
        or is_sharded_checkpoint(path, backend_args)
    )


def _sharded_names(directory: str, local: bool, backend_args: dict | None) -> list[str]:
    if not local:
        backend = path_backend(directory, backend_args)
        return [
            name.rstrip("/")
            for name in backend.list_dir_or_file(directory, list_file=False)
            if name.rstrip("/").endswith(SUFFIX)
        ]
    return [
        entry.name
        for entry in os.scandir(directory)
        if entry.is_dir() and entry.name.endswith(SUFFIX)
    ]


def _resumable_number(base: str) -> int | None:
    if base.startswith((".", "best_")) or _PUBLISHED.search(base):
        return None
    match = _RESUMABLE.search(base)
    return int(match.group(1)) if match else None


def _candidates(
    directory: str, local: bool, backend_args: dict | None = None
) -> list[tuple[int, str]]:
    found = []
    backend = path_backend(directory, backend_args)
    try:
        files = list(backend.list_dir_or_file(directory, list_dir=False, suffix=SUFFIX))
    except FileNotFoundError:
        return []
    listed = set(files)
    for name in [*files, *_sharded_names(directory, local, backend_args)]:
        number = _resumable_number(os.path.basename(name))
        if number is None:
            continue
        path = backend.join_path(directory, name)
        # An object the listing shows is whole (it is checked against its digest later).
        if (not local and name in listed) or _is_complete(path, local, backend_args):
            found.append((number, path))
    return sorted(found)


def _is_local(path: str) -> bool:
    # The pointer in a local work_dir may name a checkpoint on another backend (an S3 out_dir).
    return isinstance(fileio.get_file_backend(path, enable_singleton=True), LocalBackend)


def _read_text(path: str, backend_args: dict | None = None) -> str | None:
    backend = path_backend(path, backend_args)
    if not backend.exists(path):
        return None
    return backend.get_text(path).strip() or None


def _is_folder(path: str, backend_args: dict | None) -> bool:
    return path_backend(path, backend_args).isdir(path)


def _folder(path: str) -> str:
    return path.rstrip("/").rsplit("/", 1)[0] if "://" in path else os.path.dirname(path)


def _all_candidates(
    path: str, local: bool, pointed: str | None, backend_args: dict | None = None
) -> list[tuple[int, str]]:
    """The complete resumable checkpoints of ``path`` and of the folders its pointer and its
    out_dir note name, as (number, path), oldest first."""
    candidates = _candidates(path, local, backend_args)
    folders = {_folder(pointed)} if pointed is not None else set()
    out_dir = _read_text(
        path_backend(path, backend_args).join_path(path, OUT_DIR_NOTE), backend_args
    )
    if out_dir is not None:
        folders.add(out_dir)
    for folder in folders:
        if os.path.normpath(folder) == os.path.normpath(path):
            continue
        if not _is_local(folder) or fileio.isdir(folder):
            found = _candidates(folder, _is_local(folder), backend_args)
            candidates = sorted({*candidates, *found})
    return candidates


def resumable_checkpoints(path: str, backend_args: dict | None = None) -> list[str]:
    """The complete checkpoints a run in the work directory ``path`` could resume from (its
    own, and those of the out_dir its CheckpointHook writes to, on the store ``backend_args``
    describe), newest first, without following the pointer or checking their records.

    Example:
        >>> resumable_checkpoints('work_dirs/resnet')
        ['work_dirs/resnet/epoch_12.pth', 'work_dirs/resnet/epoch_11.pth']
    """
    path = os.fspath(path)
    if not _is_folder(path, backend_args):
        return []
    pointed = read_pointer(path, backend_args)
    candidates = _all_candidates(path, _is_local(path), pointed, backend_args)
    return [candidate for _, candidate in reversed(candidates)]


def _in_order(path: str, local: bool, backend_args: dict | None = None) -> list[str]:
    """The checkpoints to try, best first: the pointer when it is complete and as far in
    training as any other, then the others, newest first."""
    pointed = read_pointer(path, backend_args)
    candidates = _all_candidates(path, local, pointed, backend_args)
    ordered = [candidate for _, candidate in reversed(candidates)]
    newest = candidates[-1] if candidates else None
    if pointed is None:
        return ordered
    pointed_local = _is_local(pointed)
    if not (
        _exists(pointed, pointed_local, backend_args)
        and _is_complete(pointed, pointed_local, backend_args)
    ):
        print_log(
            f"{POINTER} names {pointed}, which is missing or incomplete"
            + (f"; resuming from {newest[1]}" if newest else ""),
            logger="current",
            level=logging.WARNING,
        )
        return ordered
    number = _number(pointed)
    if number is None and newest is not None and _written_after(newest[1], pointed):
        # An unnumbered pointer target (preempted.pth) with a numbered checkpoint written
        # after it: the run went on from it and was stopped before the pointer moved.
        return ordered
    if newest is None or number is None or number >= newest[0]:
        return [pointed, *(c for c in ordered if c != pointed)]
    print_log(
        f"{POINTER} names {pointed}, but {newest[1]} is further in training: resuming "
        "from the newest complete checkpoint",
        logger="current",
        level=logging.WARNING,
    )
    return ordered


def _written_after(first: str, second: str) -> bool:
    """Whether the local file ``first`` was written after the local file ``second``."""
    try:
        return os.path.getmtime(first) > os.path.getmtime(second)
    except (OSError, ValueError):  # not local files
        return False


def find_latest_checkpoint(path: str, backend_args: dict | None = None) -> str | None:
    """The newest complete checkpoint in the work directory ``path``, or None. ``backend_args``
    (CheckpointHook's) describe the store of its out_dir, if it has one, or of ``path`` itself
    when it is a URL (an out_dir on S3: its pointer, listing and digests are read through them).

    Example:
        >>> find_latest_checkpoint('work_dirs/resnet')
        'work_dirs/resnet/epoch_12.pth'
        >>> find_latest_checkpoint('s3://bucket/ckpts/resnet',
        ...                        dict(endpoint_url='http://minio:9000'))  # doctest: +SKIP
        's3://bucket/ckpts/resnet/epoch_12.pth'
    """
    path = os.fspath(path)
    if not _is_folder(path, backend_args):
        print_log("Did not find last_checkpoint to be resumed.", logger="current")
        return None
    for candidate in _in_order(path, _is_local(path), backend_args):
        problem = stored_checkpoint_problem(candidate, backend_args)
        if problem is None:
            return candidate
        print_log(
            f"the checkpoint {candidate} is corrupt: {problem}; trying the one before it",
            logger="current",
            level=logging.WARNING,
        )
    print_log("Did not find last_checkpoint to be resumed.", logger="current")
    return None
