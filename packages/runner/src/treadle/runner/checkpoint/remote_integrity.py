"""Checkpoints on object stores (S3, any fsspec store of treadle.fileio), checked as local ones.

A local checkpoint is checked by reading it (:mod:`.verify`: the zip end record, every record's
CRC). An object is only read by downloading it, so what is checked there is recorded when it is
written: beside ``epoch_3.pth`` goes ``epoch_3.pth.digest``, a small JSON file with the
object's size and SHA-256 (``{"size": 1234, "sha256": "..."}``). Writing order makes it a
completion record: the old digest is removed, the object put, then the digest put; an object
whose digest is missing (written by an older treadle or another tool, or a save stopped
between the two puts) is checked like a local file after the download.

A checkpoint is downloaded once per process: the copy downloaded to check a candidate on resume
(:func:`remote_problem`) is kept, and the load that follows (:func:`verified_local_copy`)
takes it when the digest still names the same bytes. Kept copies live in one temporary folder,
removed at exit or by the next save (:func:`forget_verified_copies`).

Every function that reads a store takes ``backend_args``: the endpoint and credentials of
CheckpointHook's, with which the checkpoint was written (default: those of the environment).
"""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import json
import os
import shutil
import tempfile
import threading
from collections.abc import Iterator
from typing import Any

from treadle import fileio

from .sharded_layout import is_sharded_checkpoint
from .verify import checkpoint_problem

DIGEST_SUFFIX = ".digest"
_CHUNK = 1 << 22

_lock = threading.Lock()
_folder: str | None = None
# url -> (local copy, its sha256): candidates checked on resume, kept for the load.
_verified: dict[str, tuple[str, str]] = {}


class CorruptCheckpointError(ValueError):
    """A checkpoint whose bytes are not those that were written: cut short or garbled.

    ``filename`` is the checkpoint as the user named it and ``problem`` what is wrong.

    Example:
        >>> try:
        ...     load_checkpoint(model, 's3://bucket/run/epoch_3.pth')
        ... except CorruptCheckpointError as err:
        ...     print(err.problem)
        its SHA-256 differs from the one recorded when it was written (its bytes changed)
    """

    def __init__(self, filename: str, problem: str, message: str | None = None) -> None:
        super().__init__(message or f"the checkpoint {filename} is corrupt: {problem}")
        self.filename = filename
        self.problem = problem


def digest_path(path: str) -> str:
    """Where the digest of the checkpoint ``path`` is written.

    Example:
        >>> digest_path('s3://bucket/run/epoch_3.pth')
        's3://bucket/run/epoch_3.pth.digest'
    """
    return f"{path}{DIGEST_SUFFIX}"


def _sha256(data: bytes | memoryview) -> str:
    return hashlib.sha256(data).hexdigest()


def put_with_digest(backend: Any, data: bytes, path: str) -> None:
    """Put ``data`` as the object ``path`` through ``backend``, with its digest beside it
    (the old digest removed first, so an object replaced half-way is never taken for whole)."""
    record = digest_path(path)
    if backend.isfile(record):
        backend.remove(record)
    backend.put(data, path)
    backend.put_text(json.dumps({"size": len(data), "sha256": _sha256(data)}), record)


def remove_digest(path: str, backend: Any = None) -> None:
    """Remove the digest of the checkpoint ``path`` (through ``backend``, default the one of
    ``path``), if it has one: called when the checkpoint itself is removed.

    Example:
        >>> remove_digest('s3://bucket/run/epoch_1.pth')
    """
    if backend is None:
        backend = fileio.get_file_backend(path, enable_singleton=True)
    record = digest_path(path)
    if backend.isfile(record):
        backend.remove(record)


def _recorded(path: str, backend_args: dict | None = None) -> dict | None:
    """The digest recorded for ``path``, or None where there is none (or it cannot be read)."""
    record = digest_path(path)
    if not fileio.exists(record, backend_args=backend_args):
        return None
    try:
        recorded = json.loads(fileio.get_text(record, backend_args=backend_args))
    except ValueError:
        return None
    if not isinstance(recorded, dict) or not {"size", "sha256"} <= set(recorded):
        return None
    return recorded


def _file_sha256(path: str) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as file:
        while chunk := file.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def _local_problem(local: str, sha256: str, recorded: dict | None) -> str | None:
    if recorded is None:
        return checkpoint_problem(local)  # no digest: the check of a local file
    size = os.path.getsize(local)
    if size < recorded["size"]:
        return f"it is cut short: {size} of the {recorded['size']} bytes written"
    if size != recorded["size"]:
        return f"it has {size} bytes and {recorded['size']} were written"
    if sha256 != recorded["sha256"]:
        return "its SHA-256 differs from the one recorded when it was written (its bytes changed)"
    return None


def _temporary_folder() -> str:
    global _folder
    if _folder is None:
        _folder = tempfile.mkdtemp(prefix="treadle-verified-")
        atexit.register(shutil.rmtree, _folder, ignore_errors=True)
    return _folder


def _download(path: str, backend_args: dict | None = None) -> str:
    with _lock:
        folder = tempfile.mkdtemp(dir=_temporary_folder())
    local = os.path.join(folder, os.path.basename(path.rstrip("/")) or "checkpoint")
    backend = fileio.get_file_backend(path, backend_args=backend_args, enable_singleton=True)
    backend.copyfile_to_local(path, local)
    return local


def _discard(local: str) -> None:
    shutil.rmtree(os.path.dirname(local), ignore_errors=True)


def remote_problem(path: str, backend_args: dict | None = None) -> str | None:
    """What is wrong with the checkpoint object ``path`` (None when it is whole), checked
    against its digest, or as a local file where it has none; both read through the backend
    ``backend_args`` describe. A whole one's download is kept for the load that follows.

    Example:
        >>> remote_problem('s3://bucket/run/epoch_3.pth') is None
        True
    """
    recorded = _recorded(path, backend_args)
    try:
        local = _download(path, backend_args)
    except FileNotFoundError:
        return "it is missing"
    sha256 = _file_sha256(local)
    problem = _local_problem(local, sha256, recorded)
    if problem is not None:
        _discard(local)
        return problem
    with _lock:
        previous = _verified.pop(path, None)
        _verified[path] = (local, sha256)
    if previous is not None:
        _discard(previous[0])
    return None


def stored_checkpoint_problem(path: str, backend_args: dict | None = None) -> str | None:
    """What is wrong with the checkpoint ``path``, wherever it is stored, or None when it is
    whole: a local file or directory as :func:`.verify.checkpoint_problem` says; an object as
    :func:`remote_problem` says; a sharded checkpoint on a store is whole once its
    ``.metadata`` (written last) is there. A store is read through the backend
    ``backend_args`` describe.

    Example:
        >>> stored_checkpoint_problem('s3://bucket/run/epoch_3.pth') is None
        True
    """
    path = os.fspath(path)
    if isinstance(fileio.get_file_backend(path, enable_singleton=True), fileio.LocalBackend):
        return checkpoint_problem(path)
    if path.startswith(("http://", "https://")):
        return None  # a download: checked by the hash in its name, where it has one
    if is_sharded_checkpoint(path, backend_args):
        return None
    return remote_problem(path, backend_args)


@contextlib.contextmanager
def verified_local_copy(path: str, backend_args: dict | None = None) -> Iterator[str]:
    """A local copy of the checkpoint object ``path`` for the ``with`` block, checked
    (:func:`remote_problem`): the copy a resume already checked when its digest still names
    the same bytes, else a new download (through the backend ``backend_args`` describe).
    Raises :class:`CorruptCheckpointError` naming ``path`` and what is wrong.

    Example:
        >>> with verified_local_copy('s3://bucket/run/epoch_3.pth') as local:
        ...     checkpoint = torch.load(local, weights_only=True)
    """
    recorded = _recorded(path, backend_args)
    with _lock:
        kept = _verified.get(path)
    if kept is not None and recorded is not None and kept[1] == recorded["sha256"]:
        yield kept[0]
        return
    local = _download(path, backend_args)
    try:
        problem = _local_problem(local, _file_sha256(local), recorded)
        if problem is not None:
            raise CorruptCheckpointError(path, problem)
        yield local
    finally:
        _discard(local)


def forget_verified_copies() -> None:
    """Remove the copies kept for a load: a run that saves has finished resuming.

    Example:
        >>> forget_verified_copies()
    """
    with _lock:
        kept = list(_verified.values())
        _verified.clear()
    for local, _ in kept:
        _discard(local)
