"""Which checkpoint a run resumes when the user names one (``treadle train --resume PATH``,
``resume=True`` with ``load_from=PATH`` as in MMEngine, or ``resume=PATH``).

The named checkpoint is resumed exactly, whatever else work_dir holds, with one exception that
lets a requeued job go on instead of starting over: when work_dir holds newer complete
checkpoints written by a run that itself started from the named checkpoint with the same
config (the identical command, run again after a preemption), the newest of them is taken.
Every checkpoint a runner saves records both in its meta: ``started_from`` (the resolved path
of the checkpoint its chain of runs started from, kept by every requeue) and
``cfg_fingerprint`` (:mod:`.config_fingerprint`). A requeued run may also find the named
checkpoint gone (``max_keep_ckpts`` removed it); it goes on from those newer checkpoints too.

Only the checkpoints newer than the named one are read, newest first, and only their meta
(local files are memory-mapped); a checkpoint on another backend (an S3 ``out_dir``) is read
whole, and a sharded checkpoint directory records nothing readable this way, so it never
replaces the named one.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from typing import Any, NamedTuple

from treadle.logging import print_log
from treadle.runner.checkpoint.latest import resumable_checkpoints
from treadle.runner.checkpoint.remote_integrity import (
    CorruptCheckpointError,
    stored_checkpoint_problem,
)

from .checkpoint_meta import is_remote, read_checkpoint_meta

STARTED_FROM = "started_from"
CFG_FINGERPRINT = "cfg_fingerprint"


class Choice(NamedTuple):
    """The checkpoint to resume, and why (for the log)."""

    path: str
    reason: str


def named_checkpoint(resume: Any, load_from: Any) -> str | None:
    """The checkpoint the user named to resume from, or None (no resume, or the newest
    checkpoint of work_dir).

    Example:
        >>> named_checkpoint(True, 'work_dirs/x/epoch_12.pth')
        'work_dirs/x/epoch_12.pth'
        >>> named_checkpoint(True, None) is None
        True
    """
    if isinstance(resume, (str, os.PathLike)):
        return os.fspath(resume)
    if resume is True and isinstance(load_from, (str, os.PathLike)):
        return os.fspath(load_from)
    return None


def resolved(path: str) -> str:
    """``path`` as checkpoints record it: absolute with links resolved; a URL as it is.

    Example:
        >>> resolved('s3://bucket/run/epoch_3.pth')
        's3://bucket/run/epoch_3.pth'
    """
    path = os.fspath(path)
    return path if is_remote(path) else os.path.realpath(path)


def _meta_or_none(path: str, backend_args: dict | None) -> Mapping[str, Any] | None:
    try:
        return read_checkpoint_meta(path, backend_args)
    except Exception as err:  # a checkpoint we cannot read is one we do not continue from
        print_log(
            f"resume: cannot read the record of {path} ({err}); it is not considered",
            logger="current",
            level=logging.WARNING,
        )
        return None


def _is_sound(path: str, backend_args: dict | None) -> bool:
    problem = stored_checkpoint_problem(path, backend_args)
    if problem is not None:
        print_log(
            f"resume: {path} is corrupt ({problem}); it is not considered",
            logger="current",
            level=logging.WARNING,
        )
    return problem is None


def _mismatch(meta: Mapping[str, Any], origin: str, fingerprint: str) -> str | None:
    """Why a checkpoint with ``meta`` does not continue a run from ``origin`` with the config
    of ``fingerprint``, or None when it does."""
    if STARTED_FROM not in meta:
        return (
            "it does not record where its run started from (saved by MMEngine or an older treadle)"
        )
    if meta[STARTED_FROM] != origin:
        started = meta[STARTED_FROM] or "scratch"
        return f"its run started from {started}"
    if meta.get(CFG_FINGERPRINT) != fingerprint:
        return "its run had another config"
    return None


def _continuation(
    work_dir: str,
    named: str,
    fingerprint: str,
    named_iter: int | None,
    backend_args: dict | None = None,
) -> tuple[str | None, str | None]:
    """The newest checkpoint of work_dir that continues a run from ``named`` with this config,
    and else why the newest newer one does not."""
    origin, first_mismatch = resolved(named), None
    for candidate in resumable_checkpoints(work_dir, backend_args):
        if resolved(candidate) == origin:
            break  # the rest are older than the named one
        meta = _meta_or_none(candidate, backend_args)
        if meta is None:
            continue
        if named_iter is not None and meta.get("iter", -1) <= named_iter:
            break
        mismatch = _mismatch(meta, origin, fingerprint)
        if mismatch is None and _is_sound(candidate, backend_args):
            return candidate, None
        if mismatch is not None and first_mismatch is None:
            first_mismatch = f"work_dir holds the newer {candidate}, but {mismatch}"
    return None, first_mismatch


# Local files found whole, by (path, size, mtime): the check when the Runner is built and the
# one when it resumes read a large file once.
_found_whole: set[tuple[str, int, int]] = set()


def _identity(path: str) -> tuple[str, int, int] | None:
    try:
        stat = os.stat(path)
    except OSError:
        return None
    return os.path.realpath(path), stat.st_size, stat.st_mtime_ns


def _check_whole(named: str, backend_args: dict | None = None) -> None:
    """Raise :class:`CorruptCheckpointError`, naming ``named`` and what is wrong, when it is
    cut short or garbled (an object is checked against its digest; the download is kept for
    the load that follows)."""
    identity = None if is_remote(named) else _identity(named)
    if identity is not None and identity in _found_whole:
        return
    problem = stored_checkpoint_problem(named, backend_args)
    if problem is None and identity is not None:
        _found_whole.add(identity)
    if problem is not None:
        raise CorruptCheckpointError(
            named,
            problem,
            f"cannot resume from {named}: it is corrupt ({problem}). Name an earlier "
            "checkpoint, or resume without naming one to take the newest whole one of work_dir",
        )


def choose_named(
    work_dir: str, named: str, fingerprint: str | None, backend_args: dict | None = None
) -> Choice:
    """The checkpoint to resume when ``named`` is named: itself, or the newest checkpoint of
    ``work_dir`` whose run started from it with the config of ``fingerprint`` (None: this
    runner has no config, and ``named`` is resumed). Raises, naming ``named``, when it is
    missing (and nothing continues it), is no checkpoint, or is corrupt (cut short or garbled:
    :class:`CorruptCheckpointError`). ``backend_args`` (the CheckpointHook's) describe the
    store of a checkpoint named or found there (a file, its digest, or a sharded checkpoint).

    Example:
        >>> choose_named('work_dirs/x', 'work_dirs/x/best_acc_epoch_12.pth', 'a1b2c3d4e5f60718')
        Choice(path='work_dirs/x/best_acc_epoch_12.pth', reason='the checkpoint named ...')
    """
    missing = not is_remote(named) and not os.path.exists(named)
    if is_remote(named):
        _check_whole(named, backend_args)  # downloaded once, here, and read from that copy below
    meta = None
    if fingerprint is None or not missing:
        # Raises, naming it, for a path that is no checkpoint.
        meta = read_checkpoint_meta(named, backend_args)
    if fingerprint is None:
        if not is_remote(named):
            _check_whole(named)
        return Choice(named, "the checkpoint named (this runner has no config to compare)")
    named_iter = None if missing or meta is None else meta.get("iter")
    found, mismatch = _continuation(work_dir, named, fingerprint, named_iter, backend_args)
    if found is not None:
        gone = " (which is gone)" if missing else ""
        return Choice(
            found,
            f"the newest checkpoint of a run that started from the named {named}{gone} with "
            "the same config: the same command run again goes on",
        )
    if missing:
        read_checkpoint_meta(named)  # raises FileNotFoundError naming it
    if not is_remote(named):
        _check_whole(named)
    reason = "the checkpoint named"
    return Choice(named, f"{reason}; {mismatch}" if mismatch else reason)


def check_named_before_start(work_dir: str, named: str, fingerprint: str | None) -> None:
    """Raise, naming ``named``, when a run could not resume it: called when the Runner is
    built, before anything is written to ``work_dir``.

    Example:
        >>> check_named_before_start('work_dirs/x', 'notes.txt', None)
        Traceback (most recent call last):
        ValueError: cannot resume from notes.txt: it is not a checkpoint that treadle can read ...
    """
    if is_remote(named):
        return  # read when the run resumes it
    if os.path.exists(named) or fingerprint is None or not os.path.isdir(work_dir):
        read_checkpoint_meta(named)
        if os.path.isfile(named) and (fingerprint is None or not os.path.isdir(work_dir)):
            # Resumed for sure (nothing in work_dir can continue it): a file cut short or
            # garbled is refused before work_dir is touched. Else choose_named checks it.
            _check_whole(named)
        return
    if _continuation(work_dir, named, fingerprint, None)[0] is None:
        read_checkpoint_meta(named)  # raises FileNotFoundError naming it
