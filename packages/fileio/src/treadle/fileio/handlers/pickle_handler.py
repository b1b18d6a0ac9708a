"""Pickle. Loading a pickle runs code chosen by whoever wrote it: load only trusted files."""

from __future__ import annotations

from .base import BaseFileHandler

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import IO, Any


def _default_protocol() -> int:
    import pickle

    # MMEngine writes protocol 2; pickle's default (4 or 5) is faster and handles objects over
    # 4 GiB, and every Python 3 since 3.4 reads it.
    return pickle.DEFAULT_PROTOCOL


class PickleHandler(BaseFileHandler):
    """``.pkl`` and ``.pickle`` files.

    Example:
        >>> PickleHandler().load_from_fileobj(io.BytesIO(PickleHandler().dump_to_str([1])))
        [1]
    """

    str_like = False

    def load_from_fileobj(self, file: IO[Any], **kwargs: Any) -> Any:
        import pickle

        return pickle.load(file, **kwargs)

    def load_from_path(self, filepath: str, mode: str = "rb", **kwargs: Any) -> Any:
        return super().load_from_path(filepath, mode, **kwargs)

    def dump_to_fileobj(self, obj: Any, file: IO[Any], **kwargs: Any) -> None:
        import pickle

        kwargs.setdefault("protocol", _default_protocol())
        pickle.dump(obj, file, **kwargs)

    def dump_to_path(self, obj: Any, filepath: str, mode: str = "wb", **kwargs: Any) -> None:
        super().dump_to_path(obj, filepath, mode, **kwargs)

    def dump_to_str(self, obj: Any, **kwargs: Any) -> bytes:
        import pickle

        kwargs.setdefault("protocol", _default_protocol())
        return pickle.dumps(obj, **kwargs)
