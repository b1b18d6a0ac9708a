"""The safetensors format: model weights, and the checkpoint's 'meta' dict kept as metadata.

safetensors stores named tensors and a flat dict of strings, nothing else. A checkpoint
``{'state_dict': {...}, 'meta': {...}}`` (or a bare state dict) maps to it as:

- the tensors of ``state_dict``, each under its own name;
- metadata ``'format': 'pt'`` (what other tools that read safetensors expect);
- metadata ``'treadle.meta'``: ``meta`` as JSON (so ints, floats, lists and dicts come back
  as they were, not as strings);
- metadata ``'treadle.aliases'``: names that share one tensor (tied weights), as JSON
  ``{alias: name}``: safetensors refuses shared storage, so each shared tensor is stored once;
- metadata ``'treadle.module_versions'``: the state dict's ``_metadata`` (module versions that
  ``_load_from_state_dict`` reads), as JSON.

Loading gives ``{'state_dict': ..., 'meta': ...}`` back. A file written by another tool loads
with its string metadata (less 'format') as ``meta``.
"""

from __future__ import annotations

import json
from collections import OrderedDict
from contextlib import suppress
from typing import Any

import torch

META = "treadle.meta"
ALIASES = "treadle.aliases"
VERSIONS = "treadle.module_versions"
_CHECKPOINT_KEYS = {"state_dict", "meta"}


def split_checkpoint(checkpoint: Any, filename: str) -> tuple[dict, dict]:
    """The state dict and the meta dict a checkpoint saved as safetensors keeps."""
    if not isinstance(checkpoint, dict):
        raise TypeError(
            f"save_checkpoint to {filename}: a .safetensors checkpoint is a dict of tensors or "
            f"{{'state_dict': ..., 'meta': ...}}, got {type(checkpoint).__name__}"
        )
    if "state_dict" not in checkpoint:
        return checkpoint, {}
    others = sorted(str(key) for key in checkpoint if key not in _CHECKPOINT_KEYS)
    if others:
        raise ValueError(
            f"save_checkpoint to {filename}: a .safetensors file keeps the model weights "
            f"('state_dict') and a 'meta' dict only, and this checkpoint also holds "
            f"{', '.join(repr(k) for k in others)}. Save it to a .pth file to keep everything, "
            "or pass {'state_dict': ..., 'meta': ...}"
        )
    meta = checkpoint.get("meta") or {}
    if not isinstance(meta, dict):
        raise TypeError(
            f"save_checkpoint to {filename}: 'meta' must be a dict, got {type(meta).__name__}"
        )
    return checkpoint["state_dict"], meta


def _meta_json(meta: dict, filename: str) -> str:
    try:
        return json.dumps(meta)
    except (TypeError, ValueError):
        pass
    for key, value in meta.items():
        try:
            json.dumps(value)
        except (TypeError, ValueError) as err:
            raise TypeError(
                f"save_checkpoint to {filename}: meta[{key!r}] is a {type(value).__name__}, "
                f"which safetensors metadata (JSON) cannot hold: {err}. Keep meta to str, "
                "numbers, bools, None, lists and dicts, or save a .pth file"
            ) from err
    raise TypeError(f"save_checkpoint to {filename}: meta's keys must be str for safetensors")


def _storage_key(tensor: torch.Tensor) -> tuple:
    return (tensor.device, tensor.untyped_storage().data_ptr())


def _view_key(tensor: torch.Tensor) -> tuple:
    return (
        *_storage_key(tensor),
        tensor.storage_offset(),
        tuple(tensor.shape),
        tensor.stride(),
        tensor.dtype,
    )


def to_safetensors(checkpoint: Any, filename: str) -> tuple[dict[str, torch.Tensor], dict]:
    """The tensors and string metadata to write for ``checkpoint``."""
    state_dict, meta = split_checkpoint(checkpoint, filename)
    tensors: dict[str, torch.Tensor] = {}
    aliases: dict[str, str] = {}
    first_of_view: dict[tuple, str] = {}
    storages: dict[tuple, int] = {}
    for key, value in state_dict.items():
        if not isinstance(value, torch.Tensor):
            raise TypeError(
                f"save_checkpoint to {filename}: state_dict[{key!r}] is a "
                f"{type(value).__name__}; a .safetensors file holds tensors only"
            )
        if value.numel() > 0:
            storages[_storage_key(value)] = storages.get(_storage_key(value), 0) + 1
    for key, value in state_dict.items():
        tensor = value.detach()
        if tensor.numel() > 0 and storages[_storage_key(tensor)] > 1:
            view = _view_key(tensor)
            if view in first_of_view:  # the same tensor under a second name (tied weights)
                aliases[str(key)] = first_of_view[view]
                continue
            first_of_view[view] = str(key)
            # Another view of the same storage (a slice of it) must not share memory.
            tensor = tensor.clone(memory_format=torch.contiguous_format)
        tensors[str(key)] = tensor.contiguous()
    metadata = {"format": "pt", META: _meta_json(meta, filename)}
    if aliases:
        metadata[ALIASES] = json.dumps(aliases)
    versions = getattr(state_dict, "_metadata", None)
    if versions:
        # Versions a custom module made unserializable are dropped: they only tune old formats.
        with suppress(TypeError, ValueError):
            metadata[VERSIONS] = json.dumps(dict(versions))
    return tensors, metadata


def from_safetensors(tensors: dict[str, torch.Tensor], metadata: dict[str, str] | None) -> dict:
    """The checkpoint ``{'state_dict': ..., 'meta': ...}`` a safetensors file holds."""
    metadata = dict(metadata or {})
    state_dict: OrderedDict[str, torch.Tensor] = OrderedDict(tensors)
    for alias, name in json.loads(metadata.pop(ALIASES, "{}")).items():
        state_dict[alias] = state_dict[name]
    versions = metadata.pop(VERSIONS, None)
    if versions is not None:
        state_dict._metadata = OrderedDict(json.loads(versions))  # type: ignore[attr-defined]
    if META in metadata:
        meta = json.loads(metadata[META])
    else:
        metadata.pop("format", None)
        meta = metadata
    return {"state_dict": state_dict, "meta": meta}


def safetensors_device(map_location: Any, filename: str) -> str:
    """The device safetensors loads onto for ``map_location``."""
    if map_location is None:
        return "cpu"
    if isinstance(map_location, (str, torch.device)):
        return str(map_location)
    raise TypeError(
        f"loading {filename}: for a .safetensors file map_location must be None, a str or a "
        f"torch.device, got {type(map_location).__name__}"
    )
