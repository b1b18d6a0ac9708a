"""Reading an annotation file in MMEngine's format: a dict with ``metainfo`` and ``data_list``.

The file is read through treadle.fileio, so it can live on any backend (a local disk,
``s3://``, ``memory://`` ...); json, yaml and pickle are recognized by the extension.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from treadle import fileio


def load_annotation_file(ann_file: str) -> tuple[Mapping[str, Any], list[Any]]:
    """``(metainfo, data_list)`` of ``ann_file``. A missing file is a FileNotFoundError naming
    the path and the backend (from treadle.fileio); a file of another shape is an error that
    names the file and what is wrong with it.

    Example:
        >>> fileio.dump({'metainfo': {'classes': ['cat']}, 'data_list': [{'img': 'a.png'}]},
        ...             'memory://ann.json')
        >>> load_annotation_file('memory://ann.json')
        ({'classes': ['cat']}, [{'img': 'a.png'}])
    """
    annotations = fileio.load(ann_file)
    if not isinstance(annotations, Mapping):
        raise TypeError(
            f"the annotation file {ann_file!r} must hold a dict with the keys 'metainfo' and "
            f"'data_list', but it holds a {type(annotations).__name__}"
        )
    missing = [key for key in ("metainfo", "data_list") if key not in annotations]
    if missing:
        raise ValueError(
            f"the annotation file {ann_file!r} has no {' and no '.join(map(repr, missing))} "
            f"key; it must hold a dict with the keys 'metainfo' and 'data_list' (its keys: "
            f"{sorted(map(str, annotations))})"
        )
    metainfo, data_list = annotations["metainfo"], annotations["data_list"]
    if not isinstance(metainfo, Mapping):
        raise TypeError(
            f"'metainfo' in the annotation file {ann_file!r} must be a dict, got "
            f"{type(metainfo).__name__}"
        )
    if not isinstance(data_list, list):
        raise TypeError(
            f"'data_list' in the annotation file {ann_file!r} must be a list, got "
            f"{type(data_list).__name__}"
        )
    return metainfo, data_list
