"""The torch format (``torch.save``'s zip file): reading with ``weights_only`` by default, and
turning torch's refusal into an error that says which option allows the file."""

from __future__ import annotations

import os
import pickle
import re
from typing import IO, Any

import torch

from .direct_file import DirectFile
from .disk_writeback import open_untruncated
from .errors import UnsafeCheckpointError
from .write_pacing import PacedFile, current_pace

_GLOBAL_IN_MESSAGE = re.compile(r"GLOBAL ([\w.]+)")
_UNPICKLER_DETAIL = re.compile(r"WeightsUnpickler error:\s*([^\n]+)")
# The end-of-central-directory record: the last 22 bytes of every complete zip that has no
# comment, which torch.save never writes.
_ZIP_START = b"PK\x03\x04"
_ZIP_END = b"PK\x05\x06"
_ZIP_END_SIZE = 22


def save_torch(checkpoint: Any, file: str | IO[bytes]) -> None:
    pace = current_pace()
    if pace is None or not isinstance(file, str):
        torch.save(checkpoint, file)
        return
    # A background write spread over the next training steps (see .write_pacing), around the
    # page cache where the file system allows it (see .direct_file).
    direct = DirectFile.open(file)
    if direct is not None:
        with direct:
            torch.save(checkpoint, PacedFile(direct, pace))
        return
    with open_untruncated(file) as handle:
        paced = PacedFile(handle, pace)
        torch.save(checkpoint, paced)
        paced.finish()


def load_torch(
    source: str | IO[bytes], map_location: Any, weights_only: bool, filename: str
) -> Any:
    """``torch.load`` whose errors name ``filename`` (what the user asked for, which may be a
    URL whose local copy is ``source``)."""
    try:
        return torch.load(source, map_location=map_location, weights_only=weights_only)
    except pickle.UnpicklingError as err:
        if weights_only and "Weights only load failed" in str(err):
            raise _refused(source, filename, err) from err
        raise pickle.UnpicklingError(f"cannot read the checkpoint {filename}: {err}") from err
    except RuntimeError as err:
        if "central directory" in str(err):
            raise incomplete_error(filename) from err
        if "PytorchStreamReader" in str(err) or "corrupt" in str(err):
            raise corrupt_error(filename, err) from err
        raise
    except (UnicodeDecodeError, EOFError) as err:  # a garbled pickle inside the archive
        raise corrupt_error(filename, err) from err


def corrupt_error(filename: str, err: BaseException) -> RuntimeError:
    first_line = str(err).splitlines()[0] if str(err) else ""
    return RuntimeError(
        f"cannot read the checkpoint {filename}: it is corrupt ({type(err).__name__}: "
        f"{first_line}); resume=True (--resume without a path) takes the newest complete "
        "checkpoint before it"
    )


def incomplete_error(filename: str) -> RuntimeError:
    return RuntimeError(
        f"{filename} is not a complete checkpoint: its zip archive does not end with a central "
        "directory (a file cut short while it was written or copied)"
    )


def _unsafe_globals(source: str | IO[bytes], err: Exception) -> list[str]:
    try:
        if not isinstance(source, (str, os.PathLike)):
            source.seek(0)
        return list(torch.serialization.get_unsafe_globals_in_checkpoint(source))
    except Exception:  # a legacy (non-zip) file: torch's message names the first one
        return _GLOBAL_IN_MESSAGE.findall(str(err))[:1]


def _refused(source: str | IO[bytes], filename: str, err: Exception) -> UnsafeCheckpointError:
    names = _unsafe_globals(source, err)
    if not names:
        # No class named: torch stopped at an opcode it does not allow (garbage, or a legacy
        # pickle doing something unusual).
        detail = _UNPICKLER_DETAIL.search(str(err))
        return UnsafeCheckpointError(
            f"cannot read the checkpoint {filename}: loading with weights_only=True stopped at "
            f"something it does not allow ({detail.group(1) if detail else 'see the cause'}). "
            "Either the file is not a torch checkpoint, or it is a pickle that only "
            "weights_only=False can load: do that only for a checkpoint you trust.",
            filename,
            names,
        )
    return UnsafeCheckpointError(
        f"{filename} holds Python objects that loading with weights_only=True refuses to "
        f"build: {', '.join(names)}. Loading them would run code named by the file. If you "
        "trust this checkpoint, load it with weights_only=False (load_checkpoint(..., "
        "weights_only=False), or _load_checkpoint / CheckpointLoader.load_checkpoint with the "
        "same argument), or allow just these classes with "
        "torch.serialization.safe_globals([...]). Only load checkpoints you trust.",
        filename,
        names,
    )


def is_complete_torch_file(path: str) -> bool:
    """Whether a local file written by ``torch.save`` was written to the end: a zip file
    must end with its central directory; a legacy pickle file cannot be checked and counts
    as complete."""
    try:
        with open(path, "rb") as file:
            head = file.read(len(_ZIP_START))
            if head != _ZIP_START:
                return len(head) > 0
            file.seek(0, os.SEEK_END)
            if file.tell() < _ZIP_END_SIZE:
                return False
            file.seek(-_ZIP_END_SIZE, os.SEEK_END)
            return file.read(len(_ZIP_END)) == _ZIP_END
    except OSError:
        return False
