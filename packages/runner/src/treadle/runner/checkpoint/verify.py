"""checkpoint_problem: whether a local checkpoint file is whole, read to its last byte.

A file cut short is caught by its missing zip end record (:func:`is_complete_torch_file`),
but a file garbled in the middle (a bad disk block, a copy that went wrong) still ends well,
and ``torch.load`` does not check the CRC-32 that ``torch.save`` writes for every record: the
garbled bytes would come back as wrong weights. Here every record is read and its CRC checked
(zlib's CRC runs at several GB/s, so a few seconds for a large checkpoint, once per resume).
"""

from __future__ import annotations

import os
import zipfile
import zlib

import torch

from .formats import SAFETENSORS, sniff_format
from .sharded_layout import is_sharded_checkpoint
from .torch_format import is_complete_torch_file

_ZIP_START = b"PK\x03\x04"
# A legacy torch file is a pickle stream, which opens with the PROTO opcode.
_PICKLE = b"\x80"
_CHUNK = 1 << 22


def _zip_problem(path: str) -> str | None:
    if not is_complete_torch_file(path):
        return "it is cut short (its zip archive has no end record)"
    try:
        with zipfile.ZipFile(path) as archive:
            for info in archive.infolist():
                crc = 0
                with archive.open(info) as member:
                    while chunk := member.read(_CHUNK):
                        crc = zlib.crc32(chunk, crc)
                # zipfile checks the CRC itself at the end of a member; kept explicit for
                # members it reads without one.
                if crc != info.CRC:
                    return "a record fails its CRC check (its bytes changed after it was written)"
    except zipfile.BadZipFile as err:
        if "CRC" in str(err):
            return "a record fails its CRC check (its bytes changed after it was written)"
        return f"it is not a readable zip archive ({err})"
    except (OSError, EOFError, zlib.error) as err:
        return f"it cannot be read to the end ({type(err).__name__}: {err})"
    except (ValueError, UnicodeDecodeError, NotImplementedError) as err:
        # A garbled directory entry: a name that is not text, an unknown compression...
        return f"its zip directory is garbled ({type(err).__name__}: {err})"
    return _torch_reader_problem(path)


def _torch_reader_problem(path: str) -> str | None:
    # torch's own zip reader (miniz) is stricter than zipfile about the end records; opening
    # it reads the directory only.
    reader_class = getattr(torch._C, "PyTorchFileReader", None)
    if reader_class is None:
        return None
    try:
        reader_class(path).get_all_records()
    except RuntimeError as err:
        return f"torch cannot open it ({str(err).splitlines()[0]})"
    return None


def _safetensors_problem(path: str, size: int) -> str | None:
    import json

    with open(path, "rb") as file:
        length = int.from_bytes(file.read(8), "little")
        try:
            header = json.loads(file.read(length))
        except ValueError:
            return "its safetensors header is not valid JSON"
    ends = [
        entry["data_offsets"][1]
        for name, entry in header.items()
        if name != "__metadata__" and isinstance(entry, dict) and "data_offsets" in entry
    ]
    if 8 + length + max(ends, default=0) > size:
        return "it is cut short (its tensors end past the end of the file)"
    return None


# The files of a checkpoint directory DeepSpeed's engine writes (its own loader checks them).
_ENGINE_FILES = ("mp_rank_", "zero_pp_rank_")


def _is_engine_directory(path: str) -> bool:
    return any(name.startswith(_ENGINE_FILES) and name.endswith(".pt") for name in os.listdir(path))


def checkpoint_problem(path: str | os.PathLike) -> str | None:
    """What is wrong with the local checkpoint at ``path`` (a torch zip, a safetensors file, a
    sharded checkpoint's directory or a DeepSpeed engine's directory), or None when it is whole.
    A legacy (non-zip) torch file cannot be checked and counts as whole when it is not empty.

    Example:
        >>> checkpoint_problem('work_dirs/toy/epoch_3.pth') is None
        True
    """
    path = os.fspath(path)
    if os.path.isdir(path):
        if is_sharded_checkpoint(path) or _is_engine_directory(path):
            return None
        return "it is a sharded checkpoint without .metadata"
    try:
        size = os.path.getsize(path)
        with open(path, "rb") as file:
            head = file.read(16)
    except OSError as err:
        return f"it cannot be opened ({err.strerror or err})"
    if size == 0:
        return "it is empty"
    if head.startswith(_ZIP_START):
        return _zip_problem(path)
    if sniff_format(head, size) == SAFETENSORS:
        return _safetensors_problem(path, size)
    if not head.startswith(_PICKLE):
        return "it is neither a torch checkpoint (zip or pickle) nor a safetensors file"
    return None
