"""Which format a checkpoint is in, and reading and writing one local file in it.

Writing picks the format from the file name (``.safetensors``, else torch); reading looks at
the first bytes, so a downloaded file cached under any name loads as what it is.
"""

from __future__ import annotations

import io
import os
from typing import Any

from .safetensors_format import from_safetensors, safetensors_device, to_safetensors
from .torch_format import incomplete_error, is_complete_torch_file, load_torch, save_torch

TORCH = "torch"
SAFETENSORS = "safetensors"
SAFETENSORS_SUFFIX = ".safetensors"
# A safetensors file opens with its JSON header's length (8 bytes, little-endian), then '{'.
_SAFETENSORS_HEADER_LENGTH = 8


def format_for_name(filename: str) -> str:
    """The format a checkpoint saved under ``filename`` is written in."""
    path = filename.split("?", 1)[0] if "://" in filename else filename
    return SAFETENSORS if path.lower().endswith(SAFETENSORS_SUFFIX) else TORCH


def sniff_format(head: bytes, size: int) -> str:
    """The format of a file whose first bytes are ``head`` and whose length is ``size``."""
    if len(head) > _SAFETENSORS_HEADER_LENGTH and head[_SAFETENSORS_HEADER_LENGTH:][:1] == b"{":
        header_length = int.from_bytes(head[:_SAFETENSORS_HEADER_LENGTH], "little")
        if header_length + _SAFETENSORS_HEADER_LENGTH <= size:
            return SAFETENSORS
    return TORCH


def write_checkpoint_file(checkpoint: Any, path: str, fmt: str, filename: str) -> None:
    """Write ``checkpoint`` to the local file ``path`` (``filename`` is for messages)."""
    if fmt == SAFETENSORS:
        from safetensors.torch import save_file

        tensors, metadata = to_safetensors(checkpoint, filename)
        save_file(tensors, path, metadata=metadata)
    else:
        save_torch(checkpoint, path)


def checkpoint_bytes(checkpoint: Any, fmt: str, filename: str) -> bytes:
    """``checkpoint`` serialized in ``fmt``, for backends that store whole objects."""
    if fmt == SAFETENSORS:
        from safetensors.torch import save

        tensors, metadata = to_safetensors(checkpoint, filename)
        return save(tensors, metadata=metadata)
    with io.BytesIO() as buffer:
        save_torch(checkpoint, buffer)
        return buffer.getvalue()


def read_checkpoint_file(
    path: str, map_location: Any = None, weights_only: bool = True, filename: str | None = None
) -> Any:
    """Load the local checkpoint file ``path`` in whichever format it is."""
    filename = filename or path
    with open(path, "rb") as file:
        head = file.read(_SAFETENSORS_HEADER_LENGTH + 1)
    if sniff_format(head, os.path.getsize(path)) == SAFETENSORS:
        from safetensors import safe_open

        device = safetensors_device(map_location, filename)
        with safe_open(path, framework="pt", device=device) as file:
            metadata = file.metadata()
            tensors = {key: file.get_tensor(key) for key in file.keys()}  # noqa: SIM118
        return from_safetensors(tensors, metadata)
    if not is_complete_torch_file(path):
        raise incomplete_error(filename)
    return load_torch(path, map_location, weights_only, filename)
