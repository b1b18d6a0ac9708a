"""The files a Logger writes: the handler ``file_handler_cfg`` describes, and the name each rank
writes under when every rank keeps its own log."""

from __future__ import annotations

import logging
import os
import sys
import warnings

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any


def file_handler_classes() -> dict[str, type[logging.FileHandler]]:
    """``FileHandler`` and every file handler class of ``logging.handlers``, by name.

    Example:
        >>> sorted(file_handler_classes())[:2]
        ['BaseRotatingHandler', 'FileHandler']
    """
    from logging import handlers  # only when a handler type is named

    found: dict[str, type[logging.FileHandler]] = {"FileHandler": logging.FileHandler}
    for name, value in vars(handlers).items():
        if isinstance(value, type) and issubclass(value, logging.FileHandler):
            found[name] = value
    return found


def build_file_handler(
    path: str, file_mode: str, cfg: Mapping[str, Any] | None
) -> tuple[logging.FileHandler, str]:
    """The handler that writes the log to ``path``, and the path it writes.

    ``cfg`` (``file_handler_cfg``) names a file handler class of ``logging.handlers`` under
    ``'type'`` ('FileHandler' by default) and its other arguments. A ``'filename'`` in it is
    written instead of ``path``, as in MMEngine.

    Example:
        >>> import tempfile
        >>> folder = tempfile.mkdtemp()
        >>> handler, written = build_file_handler(f'{folder}/run.log', 'w', {'maxBytes': 1024,
        ...                                        'type': 'RotatingFileHandler'})
        >>> type(handler).__name__, written == f'{folder}/run.log'
        ('RotatingFileHandler', True)
        >>> handler.close()
    """
    kwargs = dict(cfg or {})
    handler_type = kwargs.pop("type", "FileHandler")
    if handler_type == "FileHandler":
        handler_cls: type[logging.FileHandler] = logging.FileHandler
    else:
        classes = file_handler_classes()
        found = classes.get(handler_type) if isinstance(handler_type, str) else None
        if found is None:
            # "`logging.handlers` does not contain": MMEngine's words, which its users match.
            raise ValueError(
                f"file_handler_cfg type {handler_type!r} is not supported: `logging.handlers` "
                f"does not contain such a file handler; use one of {', '.join(sorted(classes))}"
            )
        handler_cls = found
        from logging import handlers  # imported already, by file_handler_classes

        rotating = issubclass(handler_cls, handlers.BaseRotatingHandler)
        if rotating and not hasattr(handler_cls, "shouldRollover"):
            # BaseRotatingHandler itself: MMEngine builds it, and every record then fails.
            warnings.warn(
                f"file_handler_cfg type {handler_type!r} cannot decide when to roll the log "
                "over, so each record written through it fails with an error; use "
                "RotatingFileHandler or TimedRotatingFileHandler",
                stacklevel=4,
            )
    filename = os.fspath(kwargs.pop("filename", path))
    kwargs.setdefault("encoding", "utf-8")
    # TimedRotatingFileHandler always appends and has no mode parameter.
    if "mode" in handler_cls.__init__.__code__.co_varnames:
        kwargs.setdefault("mode", file_mode)
    return handler_cls(filename, **kwargs), filename


def _get_host_info() -> str:
    """``'user@host'`` of this process, or ``''`` with a warning where either is unknown (a
    container without a user entry). MMEngine's per-rank log files carry it.

    Example:
        >>> '@' in _get_host_info() or _get_host_info() == ''
        True
    """
    from getpass import getuser
    from socket import gethostname

    try:
        return f"{getuser()}@{gethostname()}"
    except Exception as error:  # getuser raises KeyError or OSError; neither is worth failing on
        warnings.warn(f"Host or user not found: {error}", stacklevel=2)
        return ""


def _get_device_id() -> int | str:
    """The accelerator index of this process: ``CUDA_VISIBLE_DEVICES``'s entry at
    ``LOCAL_RANK`` (the local rank itself without CUDA). MMEngine's per-rank log files carry it.

    torch is not imported here: a program that has not imported it uses no CUDA device.

    Example:
        >>> isinstance(_get_device_id(), (int, str))
        True
    """
    local_rank = int(os.getenv("LOCAL_RANK", "0"))
    cuda = getattr(sys.modules.get("torch"), "cuda", None)
    if cuda is None or not cuda.is_available():
        return local_rank
    visible = os.getenv("CUDA_VISIBLE_DEVICES")
    devices = visible.split(",") if visible is not None else list(range(cuda.device_count()))
    try:
        return int(devices[local_rank])
    except ValueError:  # a device named by UUID
        return devices[local_rank]


def rank_file_name(path: str, rank: int, host: str | None = None, device: Any = None) -> str:
    """The file rank ``rank`` writes when every rank keeps its own log: ``{stem}_rank{rank}``,
    or MMEngine's ``{stem}_{host}_device{device}_rank{rank}`` where ``device`` is given (the
    host left out when empty).

    Example:
        >>> rank_file_name('logs/run.log', 1)
        'logs/run_rank1.log'
        >>> rank_file_name('logs/run.log', 1, host='me@box', device=3)
        'logs/run_me@box_device3_rank1.log'
    """
    stem, suffix = os.path.splitext(path)
    if device is None:
        return f"{stem}_rank{rank}{suffix}"
    where = f"_{host}" if host else ""
    return f"{stem}{where}_device{device}_rank{rank}{suffix}"


__all__ = ["build_file_handler", "file_handler_classes", "rank_file_name"]
