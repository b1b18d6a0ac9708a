"""BaseFileHandler: how one file format turns objects into text or bytes and back."""

from __future__ import annotations

from abc import ABCMeta, abstractmethod

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import IO, Any


class BaseFileHandler(metaclass=ABCMeta):
    """A file format for :func:`load` and :func:`dump`.

    ``str_like`` says whether the format is text (files opened with 'r'/'w') or binary.

    Example:
        >>> @register_handler('txt')
        ... class TxtHandler(BaseFileHandler):
        ...     def load_from_fileobj(self, file, **kwargs):
        ...         return file.read()
        ...     def dump_to_fileobj(self, obj, file, **kwargs):
        ...         file.write(str(obj))
        ...     def dump_to_str(self, obj, **kwargs):
        ...         return str(obj)
    """

    str_like = True

    @abstractmethod
    def load_from_fileobj(self, file: IO[Any], **kwargs: Any) -> Any:
        """The object read from an open file."""

    @abstractmethod
    def dump_to_fileobj(self, obj: Any, file: IO[Any], **kwargs: Any) -> None:
        """Write ``obj`` to an open file."""

    @abstractmethod
    def dump_to_str(self, obj: Any, **kwargs: Any) -> str | bytes:
        """``obj`` as text (bytes for binary formats)."""

    def load_from_path(self, filepath: str, mode: str = "r", **kwargs: Any) -> Any:
        """The object in a local file."""
        encoding = "utf-8" if "b" not in mode else None
        with open(filepath, mode, encoding=encoding) as file:
            return self.load_from_fileobj(file, **kwargs)

    def dump_to_path(self, obj: Any, filepath: str, mode: str = "w", **kwargs: Any) -> None:
        """Write ``obj`` to a local file."""
        encoding = "utf-8" if "b" not in mode else None
        with open(filepath, mode, encoding=encoding) as file:
            self.dump_to_fileobj(obj, file, **kwargs)
