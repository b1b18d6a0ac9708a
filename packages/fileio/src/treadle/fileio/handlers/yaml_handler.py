"""YAML, through PyYAML's C loader and dumper when it was built with them."""

from __future__ import annotations

from .base import BaseFileHandler

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import IO, Any


def _loader_and_dumper() -> tuple[type, type]:
    import yaml

    return getattr(yaml, "CLoader", yaml.Loader), getattr(yaml, "CDumper", yaml.Dumper)


class YamlHandler(BaseFileHandler):
    """``.yaml`` and ``.yml`` files. Like MMEngine, the full Loader is the default (pass
    ``Loader=yaml.SafeLoader`` for files you do not trust).

    Example:
        >>> YamlHandler().dump_to_str({'lr': 0.1})
        'lr: 0.1\\n'
    """

    def load_from_fileobj(self, file: IO[Any], **kwargs: Any) -> Any:
        import yaml

        kwargs.setdefault("Loader", _loader_and_dumper()[0])
        return yaml.load(file, **kwargs)

    def dump_to_fileobj(self, obj: Any, file: IO[Any], **kwargs: Any) -> None:
        import yaml

        kwargs.setdefault("Dumper", _loader_and_dumper()[1])
        yaml.dump(obj, file, **kwargs)

    def dump_to_str(self, obj: Any, **kwargs: Any) -> str:
        import yaml

        kwargs.setdefault("Dumper", _loader_and_dumper()[1])
        text: str = yaml.dump(obj, **kwargs)  # a str, since no stream is given
        return text
