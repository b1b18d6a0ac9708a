"""JSON, with sets, ranges and array-like objects (numpy, torch) written as lists."""

from __future__ import annotations

from .base import BaseFileHandler

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import IO, Any


def _to_json(obj: Any) -> Any:
    """What json cannot write on its own. Duck-typed, so numpy is never imported."""
    if isinstance(obj, (set, frozenset, range)):
        return list(obj)
    if hasattr(obj, "tolist"):  # numpy arrays and scalars, torch tensors
        return obj.tolist()
    if hasattr(obj, "item"):
        return obj.item()
    raise TypeError(f"Object of type {type(obj).__name__} is not JSON serializable")


class JsonHandler(BaseFileHandler):
    """``.json`` files.

    Example:
        >>> JsonHandler().dump_to_str({'a': {1, 2}})
        '{"a": [1, 2]}'
    """

    def load_from_fileobj(self, file: IO[Any], **kwargs: Any) -> Any:
        import json

        return json.load(file, **kwargs)

    def dump_to_fileobj(self, obj: Any, file: IO[Any], **kwargs: Any) -> None:
        import json

        kwargs.setdefault("default", _to_json)
        json.dump(obj, file, **kwargs)

    def dump_to_str(self, obj: Any, **kwargs: Any) -> str:
        import json

        kwargs.setdefault("default", _to_json)
        return json.dumps(obj, **kwargs)
