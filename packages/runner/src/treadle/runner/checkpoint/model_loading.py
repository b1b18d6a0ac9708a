"""load_checkpoint: a checkpoint from anywhere into a model, with its keys revised."""

from __future__ import annotations

import logging
import re
from collections import OrderedDict
from collections.abc import Iterable
from typing import Any

from torch import nn

from .errors import MissingPrefixError
from .loader import _load_checkpoint
from .state import load_state_dict

DEFAULT_REVISE_KEYS = ((r"^module\.", ""),)


def _state_dict_of(checkpoint: dict) -> dict:
    return checkpoint.get("state_dict", checkpoint)


def _load_checkpoint_to_model(
    model: nn.Module,
    checkpoint: dict,
    strict: bool = False,
    logger: logging.Logger | str | None = None,
    revise_keys: Iterable[tuple[str, str]] = DEFAULT_REVISE_KEYS,
) -> dict:
    state_dict = _state_dict_of(checkpoint)
    metadata = getattr(state_dict, "_metadata", OrderedDict())
    # A copy in any case: a plain dict (no revise_keys given) cannot carry _metadata, and the
    # caller's checkpoint is left as it was.
    state_dict = OrderedDict(state_dict)
    for pattern, replacement in revise_keys:
        state_dict = OrderedDict(
            (re.sub(pattern, replacement, k), v) for k, v in state_dict.items()
        )
    state_dict._metadata = metadata  # type: ignore[attr-defined]
    load_state_dict(model, state_dict, strict, logger)
    return checkpoint


def load_checkpoint(
    model: nn.Module,
    filename: str,
    map_location: Any = None,
    strict: bool = False,
    logger: logging.Logger | str | None = None,
    revise_keys: Iterable[tuple[str, str]] = DEFAULT_REVISE_KEYS,
    weights_only: bool = True,
) -> dict:
    """Load the checkpoint ``filename`` (a local path, a URL, ``s3://...``,
    ``torchvision://resnet50``, ``pkg::package/weights.pth``, ...) into ``model`` and return
    it whole.

    ``revise_keys`` are ``(pattern, replacement)`` regular expressions applied in turn to every
    key of the state dict (by default, a leading ``module.`` is removed). ``strict`` and
    ``logger`` are :func:`load_state_dict`'s. ``weights_only=True`` refuses a checkpoint that
    holds other Python objects than tensors and containers; pass False only for a file you
    trust.

    Example:
        >>> checkpoint = load_checkpoint(model, 'work_dirs/epoch_3.pth', map_location='cpu')
        >>> checkpoint['meta']['epoch']
        3
    """
    checkpoint = _load_checkpoint(filename, map_location, logger, weights_only=weights_only)
    if not isinstance(checkpoint, dict):
        raise RuntimeError(
            f"No state_dict found in checkpoint file {filename}: it holds a "
            f"{type(checkpoint).__name__}, not a dict"
        )
    return _load_checkpoint_to_model(model, checkpoint, strict, logger, revise_keys)


def _load_checkpoint_with_prefix(
    prefix: str, filename: str, map_location: Any = None, weights_only: bool = True
) -> dict:
    """The weights under ``prefix`` (a submodule's name) of a checkpoint, without the prefix."""
    checkpoint = _load_checkpoint(filename, map_location=map_location, weights_only=weights_only)
    state_dict = _state_dict_of(checkpoint)
    if not prefix.endswith("."):
        prefix += "."
    selected = {k[len(prefix) :]: v for k, v in state_dict.items() if k.startswith(prefix)}
    if not selected:
        heads = sorted({key.split(".", 1)[0] for key in state_dict})
        raise MissingPrefixError(
            f"{prefix[:-1]!r} is not in the pretrained model {filename}: its keys start with "
            f"{', '.join(repr(h) for h in heads[:10])}"
        )
    return selected
