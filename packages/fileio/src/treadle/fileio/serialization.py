"""load and dump: objects to and from json, yaml and pickle files on any backend, or open
file objects. A file written by dump appears whole (writes are atomic on every backend)."""

from __future__ import annotations

import os

from .backends.registry_utils import get_file_backend
from .handlers.registry_utils import file_handlers

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from .handlers.base import BaseFileHandler


def _merge_backend_args(
    file_client_args: dict[str, Any] | None, backend_args: dict[str, Any] | None
) -> dict[str, Any] | None:
    """MMEngine's deprecated ``file_client_args`` name the same backends as backend_args."""
    if file_client_args is None:
        return backend_args
    import warnings

    warnings.warn(
        '"file_client_args" is deprecated, use "backend_args" instead',
        DeprecationWarning,
        stacklevel=3,
    )
    if backend_args is not None:
        raise ValueError('"file_client_args" and "backend_args" cannot be set at the same time')
    return file_client_args


def _handler(file_format: str | None, file: object) -> BaseFileHandler:
    if file_format is None and isinstance(file, str):
        file_format = file.rsplit(".", 1)[-1] if "." in os.path.basename(file) else ""
    if file_format not in file_handlers:
        raise TypeError(
            f"Unsupported format: {file_format!r} (of {file!r}); the registered formats are "
            f"{', '.join(sorted(file_handlers))}. Pass file_format, or register a handler."
        )
    return file_handlers[file_format]


def load(
    file: Any,
    file_format: str | None = None,
    file_client_args: dict[str, Any] | None = None,
    backend_args: dict[str, Any] | None = None,
    **kwargs: Any,
) -> Any:
    """The object in ``file`` (a path on any backend, or an open file object); the format
    comes from the extension unless ``file_format`` names it. ``kwargs`` go to the handler.

    Example:
        >>> load('s3://bucket/meta.json')
        {'classes': ['cat', 'dog']}
        >>> load(open('cfg.yml'), file_format='yaml')
    """
    if isinstance(file, os.PathLike):
        file = os.fspath(file)
    handler = _handler(file_format, file)
    backend_args = _merge_backend_args(file_client_args, backend_args)
    if isinstance(file, str):
        import io

        backend = get_file_backend(file, backend_args=backend_args, enable_singleton=True)
        if handler.str_like:
            with io.StringIO(backend.get_text(file)) as text:
                return handler.load_from_fileobj(text, **kwargs)
        with io.BytesIO(backend.get(file)) as data:
            return handler.load_from_fileobj(data, **kwargs)
    if hasattr(file, "read"):
        return handler.load_from_fileobj(file, **kwargs)
    raise TypeError(f'"file" must be a path or a file object, got {type(file).__name__}')


def dump(
    obj: Any,
    file: Any = None,
    file_format: str | None = None,
    file_client_args: dict[str, Any] | None = None,
    backend_args: dict[str, Any] | None = None,
    **kwargs: Any,
) -> str | bytes | None:
    """Write ``obj`` to ``file`` (a path on any backend, or an open file object), or return
    it as a str (bytes for pickle) when ``file`` is None.

    Example:
        >>> dump({'lr': 0.1}, 's3://bucket/run1/cfg.yaml')
        >>> dump([1, 2], file_format='json')
        '[1, 2]'
    """
    if isinstance(file, os.PathLike):
        file = os.fspath(file)
    if file_format is None and file is None:
        raise ValueError("dump needs file_format when file is None")
    handler = _handler(file_format, file)
    backend_args = _merge_backend_args(file_client_args, backend_args)
    if file is None:
        return handler.dump_to_str(obj, **kwargs)
    if isinstance(file, str):
        import io

        backend = get_file_backend(file, backend_args=backend_args, enable_singleton=True)
        if handler.str_like:
            with io.StringIO() as text:
                handler.dump_to_fileobj(obj, text, **kwargs)
                backend.put_text(text.getvalue(), file)
        else:
            with io.BytesIO() as data:
                handler.dump_to_fileobj(obj, data, **kwargs)
                backend.put(data.getvalue(), file)
        return None
    if hasattr(file, "write"):
        handler.dump_to_fileobj(obj, file, **kwargs)
        return None
    raise TypeError(f'"file" must be a path or a file object, got {type(file).__name__}')
