"""``Logger`` (MMEngine's ``MMLogger``) and ``print_log``."""

from __future__ import annotations

import logging
import os
import sys

from .formatter import MMENGINE_CONSOLE_DATE_FORMAT, LogFormatter, stream_supports_color
from .log_files import _get_device_id, _get_host_info, build_file_handler, rank_file_name
from .manager import ManagerMixin
from .rank import get_rank, get_world_size

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any


def _to_level(level: int | str) -> int:
    """Turn a level name ('info', 'WARNING') or number into a number."""
    if isinstance(level, bool) or not isinstance(level, (int, str)):
        raise TypeError(f"a log level must be an int or a level name, got {level!r}")
    if isinstance(level, int):
        return level
    number = logging.getLevelName(level.upper())
    if not isinstance(number, int):
        names = "CRITICAL, ERROR, WARNING, INFO, DEBUG, NOTSET"
        raise ValueError(f"unknown log level {level!r}: use one of {names} or an int")
    return number


def _get_rank() -> int:
    """This process's rank, as the logger reads it at construction.

    Looked up as a global of this module when a Logger is built, so a test (or treadle.compat's
    ``mock.patch('mmengine.logging.logger._get_rank', ...)``) can make the logger act as another
    rank.
    """
    return get_rank()


def _get_world_size() -> int:
    """The number of processes, as the logger reads it (patchable like :func:`_get_rank`)."""
    return get_world_size()


class _DropRepeatedWarnings(logging.Filter):
    """Lets each distinct WARNING message through once: a warning raised every iteration would
    otherwise bury the rest of the log."""

    def __init__(self) -> None:
        super().__init__()
        self._seen: set[str] = set()

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno != logging.WARNING:
            return True
        message = record.getMessage()
        if message in self._seen:
            return False
        self._seen.add(message)
        return True


def _rank_file(path: str, rank: int, mmengine_style: bool) -> str:
    if not mmengine_style:
        return rank_file_name(path, rank)
    # Through this module's globals, so that patching them here changes the name.
    return rank_file_name(path, rank, _get_host_info(), _get_device_id())


class Logger(logging.Logger, ManagerMixin):
    """A rank-aware logger with a global instance per name (MMEngine's ``MMLogger``).

    Rank 0 prints to stdout at ``log_level``; other ranks print only errors unless
    ``console_all_ranks=True``. With ``log_file``, rank 0 writes that file; with
    ``distributed=True`` (or the environment variable ``DISTRIBUTED_LOGGING=1``) and several
    processes, every rank writes ``{stem}_rank{rank}{suffix}`` beside it. The logger lives outside
    the ``logging`` module's registry (``logging.getLogger`` does not return it), has no parent
    and does not propagate, so its lines are never printed twice by the root logger. Each of its
    handlers lets a repeated warning through once (a handler added later, such as
    ``assertLogs``', sees every one).

    ``mmengine_style`` (switched on by treadle.compat, with the default names 'mmengine') makes
    new loggers MMEngine's: its line layout and console date, the logger's own level left
    NOTSET (the handlers filter), every rank's file at DEBUG level, and per-rank files named
    ``{stem}_{user@host}_device{id}_rank{rank}{suffix}``.

    Args:
        name: the instance name, used by ``get_instance`` and ``print_log(logger=name)``.
        logger_name: the name shown in each line (``default_logger_name`` when None).
        log_file: path of the log file; None writes no file.
        log_level: level name or number of the logger and its handlers.
        file_mode: 'w' to truncate the file, 'a' to append to it.
        distributed: every rank writes its own file.
        file_handler_cfg: ``{'type': 'RotatingFileHandler', 'maxBytes': ...}`` and so on, built
            from ``logging.handlers``; the type defaults to 'FileHandler'. A ``filename`` in it
            is written instead of ``log_file``.
        console_all_ranks: every rank prints at ``log_level``, not only rank 0.

    Example:
        >>> logger = Logger.get_instance('train', log_file='work_dirs/run.log')
        >>> logger.info('epoch 1 done')  # doctest: +SKIP
        2024/05/01 12:00:00 - treadle - INFO - epoch 1 done
        >>> Logger.get_current_instance() is logger
        True
    """

    # get_current_instance() with no instance yet creates this one, so print_log(logger='current')
    # always has a logger to write to.
    default_instance_name = "treadle"
    #: The name shown in the lines of a logger built without ``logger_name``.
    default_logger_name = "treadle"
    #: MMEngine's lines, levels and file names for loggers built from now on (see above).
    mmengine_style = False

    def __init__(
        self,
        name: str,
        logger_name: str | None = None,
        log_file: str | os.PathLike[str] | None = None,
        log_level: int | str = "INFO",
        file_mode: str = "w",
        distributed: bool = False,
        file_handler_cfg: Mapping[str, Any] | None = None,
        *,
        console_all_ranks: bool = False,
    ) -> None:
        ManagerMixin.__init__(self, name)
        if logger_name is None:
            logger_name = self.default_logger_name
        mmengine_style = self.mmengine_style
        # Not logging.getLogger: that would register the logger in logging's global tree, where
        # it would get a parent and could be reconfigured by other libraries.
        logging.Logger.__init__(self, logger_name)
        self.parent = None
        self.propagate = False
        level = _to_level(log_level)
        if file_mode not in ("w", "a"):
            raise ValueError(f"file_mode must be 'w' or 'a', got {file_mode!r}")
        if file_handler_cfg is not None and not hasattr(file_handler_cfg, "keys"):
            raise TypeError(
                f"file_handler_cfg must be a dict or None, got {type(file_handler_cfg).__name__}"
            )
        # Through this module's globals, at call time: patching them changes the rank seen here.
        rank, world_size = _get_rank(), _get_world_size()
        self.rank = rank
        self.world_size = world_size
        self.distributed = (
            distributed
            or os.environ.get("DISTRIBUTED_LOGGING") == "1"
            or (mmengine_style and level <= logging.DEBUG)
        )
        # Rank 0, or every rank when asked, prints at the chosen level; others print errors only.
        self._console_at_level = console_all_ranks or rank == 0
        layout = "mmengine" if mmengine_style else "treadle"

        stream = sys.stdout
        self._console_handler = logging.StreamHandler(stream)
        color = stream_supports_color(stream)
        if mmengine_style:
            console_format = LogFormatter(color, MMENGINE_CONSOLE_DATE_FORMAT, layout)
        else:
            console_format = LogFormatter(color)
        self._console_handler.setFormatter(console_format)
        # On each handler, not on the logger: a handler added later (unittest's assertLogs)
        # sees every warning, as with MMEngine.
        self._console_handler.addFilter(_DropRepeatedWarnings())
        self.addHandler(self._console_handler)

        # The path this process writes, if any (None on ranks > 0 of a non-distributed run).
        self.log_file: str | None = None
        self._file_handler: logging.Handler | None = None
        if log_file is not None:
            path = os.fspath(log_file)
            if self.distributed and world_size > 1:
                path = _rank_file(path, rank, mmengine_style)
            if rank == 0 or (self.distributed and world_size > 1):
                directory = os.path.dirname(path)
                if directory:
                    os.makedirs(directory, exist_ok=True)
                handler, path = build_file_handler(path, file_mode, file_handler_cfg)
                handler.setFormatter(LogFormatter(color=False, layout=layout))
                handler.addFilter(_DropRepeatedWarnings())
                self._file_handler = handler
                self.addHandler(handler)
                self.log_file = path
        self.setLevel(level)
        if mmengine_style:
            # MMEngine leaves the logger's own level unset: its handlers alone filter.
            self.level = logging.NOTSET

    @property
    def _log_file(self) -> str | None:
        """MMEngine's private name of :attr:`log_file` (toolbox tests open
        ``runner.logger._log_file`` to read the log)."""
        return self.log_file

    def setLevel(self, level: int | str) -> None:
        """Set the level of the logger and of the handlers it created.

        Handlers added later with ``addHandler`` keep their own level. On ranks other than 0 the
        console still shows only errors unless the logger was built with
        ``console_all_ranks=True``.
        """
        level = _to_level(level)
        self.level = level
        # logging clears the isEnabledFor caches of the loggers it manages only; this one is not.
        # typeshed leaves out Logger._cache, which CPython has had since 3.7.
        self._cache.clear()  # type: ignore[attr-defined]
        console_level = level if self._console_at_level else max(level, logging.ERROR)
        self._console_handler.setLevel(console_level)
        if self._file_handler is not None:
            self._file_handler.setLevel(level)

    def close(self) -> None:
        """Flush, close and remove every handler of this logger (the log file is released)."""
        for handler in list(self.handlers):
            self.removeHandler(handler)
            handler.close()
        self._file_handler = None

    def __reduce__(self) -> tuple[Any, tuple[str]]:
        # logging.Logger pickles by logger name through logging.getLogger, which knows nothing of
        # this logger; pickle by instance name instead, so workers get the same-named instance.
        return type(self).get_instance, (self.instance_name,)

    def __repr__(self) -> str:
        level = logging.getLevelName(self.level)
        return f"<{type(self).__name__} {self.instance_name!r} ({self.name}, {level})>"


#: The MMEngine name of :class:`Logger`, so ported code keeps working.
MMLogger = Logger


def print_log(
    msg: Any, logger: logging.Logger | str | None = None, level: int = logging.INFO
) -> None:
    """Print ``msg`` or log it through a logger.

    Args:
        msg: the message.
        logger: None prints with ``print``; 'silent' drops the message; 'current' logs through
            ``Logger.get_current_instance()``; the name of a created ``Logger`` instance logs
            through it; a ``logging.Logger`` logs through that logger.
        level: the logging level, ``logging.INFO`` by default.

    Example:
        >>> print_log('hello')
        hello
        >>> print_log('saved', logger='current')  # doctest: +SKIP
    """
    if logger is None:
        print(msg)
    elif isinstance(logger, logging.Logger):
        # stacklevel=2: a warning's file:line points at the caller of print_log, not here.
        logger.log(level, msg, stacklevel=2)
    elif isinstance(logger, str):
        if logger == "silent":
            return
        if logger == "current":
            Logger.get_current_instance().log(level, msg, stacklevel=2)
        elif Logger.check_instance_created(logger):
            Logger.get_instance(logger).log(level, msg, stacklevel=2)
        else:
            created = ", ".join(repr(n) for n in Logger._instance_dict) or "none created yet"
            raise ValueError(
                f"print_log got logger={logger!r}, which is no created Logger instance; accepted: "
                f"None, 'silent', 'current', a logging.Logger, or the name of a created Logger "
                f"instance ({created})"
            )
    else:
        raise TypeError(
            f"print_log's logger must be None, 'silent', 'current', a logging.Logger or the name "
            f"of a created Logger instance, got {type(logger).__name__}: {logger!r}"
        )
