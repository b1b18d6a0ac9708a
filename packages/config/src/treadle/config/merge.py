"""How a child config's values merge into its bases' (and ``merge_from_dict`` into a config)."""

from __future__ import annotations

from .config_dict import DELETE_KEY, ConfigDict
from .errors import ConfigListIndexError, ConfigTypeError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    #: Maps a key path to ``(filename, line)`` for errors; either may be None.
    Locate = Callable[[tuple[Any, ...]], tuple["str | None", "int | None"]]


def _nowhere(path: tuple[Any, ...]) -> tuple[None, None]:
    return None, None


def dotted(path: tuple[Any, ...]) -> str:
    return ".".join(str(p) for p in path)


def merge_a_into_b(
    a: dict[str, Any],
    b: dict[str, Any] | list[Any],
    allow_list_keys: bool = False,
    locate: Locate | None = None,
    path: tuple[Any, ...] = (),
    plain: bool = False,
) -> Any:
    """Return ``b`` updated by ``a``, recursively, without changing ``b``.

    A dict in ``a`` merges into the dict under the same key in ``b``; with ``_delete_=True`` it
    replaces it. With ``allow_list_keys``, keys made of digits index into a list of ``b``.
    ``plain``: merge as plain dicts, for a loader whose result is copied whole afterwards
    (values are shared with ``a`` and ``b``, not made into ConfigDicts).
    """
    locate = locate or _nowhere
    # A plain merge copies with dict.copy: ConfigDict.copy would wrap what it holds.
    merged: Any = (dict.copy(b) if isinstance(b, dict) else list.copy(b)) if plain else b.copy()
    for key, value in dict.items(a):
        here = (*path, key)
        if isinstance(merged, list):
            index = _list_index(key, merged, here, locate)
            merged[index] = _merge_item(value, merged[index], allow_list_keys, locate, here, plain)
        elif isinstance(value, dict):
            if key not in merged:
                # Nothing to merge into: the value is taken as written, _delete_ included, as
                # MMEngine does (real toolbox configs put _delete_=True on new keys). Strict
                # mode reports such keys as unknown.
                _put(merged, key, value if plain else ConfigDict(value), plain)
                continue
            delete = dict.get(value, DELETE_KEY, False)
            if DELETE_KEY in value:
                value = {k: v for k, v in dict.items(value) if k != DELETE_KEY}
            if delete:
                _put(merged, key, value if plain else ConfigDict(value), plain)
            else:
                base = dict.__getitem__(merged, key) if plain else merged[key]
                _put(
                    merged,
                    key,
                    _merge_item(value, base, allow_list_keys, locate, here, plain),
                    plain,
                )
        else:
            _put(merged, key, value, plain)
    return merged


def _put(merged: Any, key: Any, value: Any, plain: bool) -> None:
    if plain:
        dict.__setitem__(merged, key, value)
    else:
        merged[key] = value


def _merge_item(
    value: Any,
    base: Any,
    allow_list_keys: bool,
    locate: Locate,
    here: tuple[Any, ...],
    plain: bool = False,
) -> Any:
    if not isinstance(value, dict):
        return value
    allowed = (dict, list) if allow_list_keys else dict
    if not isinstance(base, allowed):
        # The middle sentence is MMEngine's wording, which downstream tests match on.
        raise ConfigTypeError(
            f"'{dotted(here)}' cannot inherit from base because {here[-1]} is a dict in the "
            f"child config but is of type {type(base)} in base config (base value {base!r}); "
            f"set {DELETE_KEY}=True in it to replace the base value",
            *locate(here),
        )
    if DELETE_KEY in value:
        kept = {k: v for k, v in dict.items(value) if k != DELETE_KEY}
        if dict.get(value, DELETE_KEY):
            return kept if plain else ConfigDict(kept)
        value = kept
    return merge_a_into_b(value, base, allow_list_keys, locate, here, plain)


def _list_index(key: Any, items: list[Any], here: tuple[Any, ...], locate: Locate) -> int:
    if not (isinstance(key, int) or (isinstance(key, str) and key.isdigit())):
        raise ConfigTypeError(
            f"'{dotted(here[:-1])}' is a list: '{key}' is not an index", *locate(here)
        )
    index = int(key)
    if index >= len(items):
        raise ConfigListIndexError(
            f"Index {index} exceeds the length of list '{dotted(here[:-1])}' ({len(items)} items)",
            *locate(here),
        )
    return index
