"""Reading and writing YAML and JSON config text, with errors that name the file and line.

YAML is read with PyYAML's safe loader (the C one when available) plus ``!!python/tuple``,
which is how MMEngine's YAML dumps write tuples, so those files load back to tuples.
"""

from __future__ import annotations

from .errors import ConfigSyntaxError, ConfigTypeError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

_yaml_classes: tuple[Any, ...] | None = None


def _yaml() -> tuple[Any, Any, Any]:
    global _yaml_classes
    if _yaml_classes is None:
        import yaml

        base_loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
        base_dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)

        class Loader(base_loader):  # type: ignore[misc, valid-type]
            pass

        class Dumper(base_dumper):  # type: ignore[misc, valid-type]
            pass

        def construct_tuple(loader: Any, node: Any) -> tuple[Any, ...]:
            return tuple(loader.construct_sequence(node, deep=True))

        def represent_tuple(dumper: Any, value: tuple[Any, ...]) -> Any:
            return dumper.represent_sequence("tag:yaml.org,2002:python/tuple", value)

        Loader.add_constructor("tag:yaml.org,2002:python/tuple", construct_tuple)
        Dumper.add_representer(tuple, represent_tuple)
        _yaml_classes = (yaml, Loader, Dumper)
    return _yaml_classes


def _check_mapping(data: Any, filename: str) -> dict[str, Any]:
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigTypeError(
            f"a config must be a mapping of keys to values, this one is a {type(data).__name__}",
            filename,
            1,
        )
    return data


def load_yaml(text: str, filename: str) -> dict[str, Any]:
    yaml, loader, _ = _yaml()
    try:
        data = yaml.load(text, Loader=loader)
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None) or getattr(err, "context_mark", None)
        line = mark.line + 1 if mark is not None else None
        problem = getattr(err, "problem", None) or str(err)
        context = getattr(err, "context", None)
        message = f"invalid YAML: {problem}" + (f" ({context})" if context else "")
        source = text.splitlines()[line - 1] if line and line <= len(text.splitlines()) else None
        raise ConfigSyntaxError(message, filename, line, source) from None
    return _check_mapping(data, filename)


def load_json(text: str, filename: str) -> dict[str, Any]:
    import json

    try:
        data = json.loads(text)
    except json.JSONDecodeError as err:
        source = text.splitlines()[err.lineno - 1] if text.splitlines() else None
        raise ConfigSyntaxError(
            f"invalid JSON: {err.msg}", filename, err.lineno, source, err.colno
        ) from None
    return _check_mapping(data, filename)


def dump_yaml(data: dict[str, Any]) -> str:
    yaml, _, dumper = _yaml()
    text: str = yaml.dump(
        data, Dumper=dumper, default_flow_style=False, sort_keys=False, allow_unicode=True
    )
    return text


def _json_default(value: Any) -> Any:
    if isinstance(value, (set, frozenset, range)):
        return list(value)
    raise TypeError(f"{type(value).__name__} value {value!r} cannot be written as JSON")


def dump_json(data: dict[str, Any]) -> str:
    import json

    return json.dumps(data, indent=4, default=_json_default, ensure_ascii=False) + "\n"


def key_lines(text: str) -> dict[tuple[Any, ...], int]:
    """Line of each key path of a YAML or JSON document (JSON is read as YAML); ``{}`` when the
    text does not parse."""
    yaml, loader, _ = _yaml()
    try:
        root = yaml.compose(text, Loader=loader)
    except yaml.YAMLError:
        return {}
    lines: dict[tuple[Any, ...], int] = {}

    def walk(node: Any, path: tuple[Any, ...]) -> None:
        if isinstance(node, yaml.MappingNode):
            for key_node, value_node in node.value:
                if isinstance(key_node, yaml.ScalarNode):
                    here = (*path, key_node.value)
                    lines[here] = key_node.start_mark.line + 1
                    walk(value_node, here)

    walk(root, ())
    return lines
