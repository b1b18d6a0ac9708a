"""The meta information of a dataset: the class's ``METAINFO`` updated by the argument."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from treadle import fileio
from treadle.config import Config


def merge_metainfo(class_metainfo: Mapping[str, Any], metainfo: Any) -> dict[str, Any]:
    """A deep copy of ``class_metainfo`` updated with ``metainfo`` (a mapping or a Config).

    As in MMEngine, a string value that names an existing file (on any backend) is replaced
    by the file's lines: ``metainfo=dict(classes='classes.txt')``.

    Example:
        >>> merge_metainfo({'classes': ('cat',), 'palette': [0]}, {'classes': ('dog',)})
        {'classes': ('dog',), 'palette': [0]}
    """
    merged = copy.deepcopy(dict(class_metainfo))
    if metainfo is None:
        return merged
    if isinstance(metainfo, Config):
        # MMEngine takes a Config too (a config file's metainfo, loaded whole).
        metainfo = metainfo._cfg_dict
    if not isinstance(metainfo, Mapping):
        raise TypeError(
            f"metainfo should be a Mapping or Config, but got {type(metainfo)}: {metainfo!r}"
        )
    for key, value in copy.deepcopy(dict(metainfo)).items():
        merged[key] = _lines_if_file(value)
    return merged


def _lines_if_file(value: Any) -> Any:
    if not isinstance(value, str) or not value:
        return value
    try:
        return fileio.list_from_file(value)
    except (FileNotFoundError, IsADirectoryError, ValueError, TypeError):
        # Not the name of a file (a class name, a path with an unknown prefix...): a value.
        return value
