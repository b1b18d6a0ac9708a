"""The file formats load and dump know, by extension."""

from __future__ import annotations

from .base import BaseFileHandler
from .json_handler import JsonHandler
from .pickle_handler import PickleHandler
from .yaml_handler import YamlHandler

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

#: Handler instances by file format (the extension, without its dot).
file_handlers: dict[str, BaseFileHandler] = {
    "json": JsonHandler(),
    "yaml": YamlHandler(),
    "yml": YamlHandler(),
    "pickle": PickleHandler(),
    "pkl": PickleHandler(),
}


def _register_handler(handler: BaseFileHandler, file_formats: str | list[str]) -> None:
    if not isinstance(handler, BaseFileHandler):
        raise TypeError(f"handler must be a BaseFileHandler, got {type(handler).__name__}")
    if isinstance(file_formats, str):
        file_formats = [file_formats]
    if not isinstance(file_formats, (list, tuple)) or not all(
        isinstance(f, str) for f in file_formats
    ):
        raise TypeError(f"file_formats must be a str or a list of str, got {file_formats!r}")
    for file_format in file_formats:
        file_handlers[file_format] = handler


def register_handler(file_formats: str | list[str], **kwargs: Any) -> Callable[[type], type]:
    """Class decorator: an instance of the class, made with ``kwargs``, handles
    ``file_formats`` in :func:`load` and :func:`dump`. A format registered again is replaced.

    Example:
        >>> @register_handler(['txt', 'text'])
        ... class TxtHandler(BaseFileHandler): ...
    """

    def decorate(cls: type) -> type:
        _register_handler(cls(**kwargs), file_formats)
        return cls

    return decorate
