"""``Pretrained``: initialize a module, or part of it, from a checkpoint.

treadle.runner.model is a layer below treadle.runner.checkpoint (which imports it), so this
module cannot import checkpoint's loading functions. It names the three it needs instead
(``LOAD_CHECKPOINT``, ``LOAD_CHECKPOINT_WITH_PREFIX``, ``LOAD_STATE_DICT``); checkpoint
registers them in FUNCTIONS under these names, and ``Pretrained`` looks them up when it runs.
FUNCTIONS has treadle.runner.checkpoint among its ``locations``, so the first look-up imports
it: ``import treadle.runner.model`` alone stays free of checkpoint.
"""

from __future__ import annotations

import pickle
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from torch import nn

from treadle.logging import print_log
from treadle.registry.suggestions import close_matches
from treadle.runner.registry import FUNCTIONS, WEIGHT_INITIALIZERS

from .init_info import update_init_info

# Names without a dot (a dot would be read as a registry scope) and with a 'checkpoint:'
# prefix, so a project that registers its own 'load_checkpoint' in FUNCTIONS does not clash.
LOAD_CHECKPOINT = "checkpoint:load_checkpoint"
LOAD_CHECKPOINT_WITH_PREFIX = "checkpoint:_load_checkpoint_with_prefix"
LOAD_STATE_DICT = "checkpoint:load_state_dict"


def _checkpoint_function(name: str) -> Callable[..., Any]:
    function = FUNCTIONS.get(name)
    if function is None:
        near = close_matches(name, list(FUNCTIONS))
        hint = f" (closest registered: {', '.join(map(repr, near))})" if near else ""
        raise KeyError(
            f"Pretrained loads weights with {name!r} from the FUNCTIONS registry, which "
            f"treadle.runner.checkpoint registers when imported, but it is not there{hint}. "
            "Is treadle.runner.checkpoint importable, and was the name replaced or removed?"
        )
    return function


@WEIGHT_INITIALIZERS.register_module(name="Pretrained")
class PretrainedInit:
    """Load weights from ``checkpoint`` (config type ``'Pretrained'``).

    In a BaseModule's ``init_cfg`` it runs after every other initializer and after the
    children's ``init_weights``, so the loaded weights are what remains. Loading is
    treadle.runner.checkpoint's, as ``load_checkpoint(..., strict=False)``: keys that are
    missing, unexpected or of another shape are skipped and logged as one warning.

    Args:
        checkpoint: anything ``CheckpointLoader`` reads: a local ``.pth`` or ``.safetensors``
            file, any treadle.fileio URI (``s3://``, ``memory://``...), ``http(s)://`` (downloaded
            once into torch.hub's cache), ``torchvision://NAME``, ``open-mmlab://NAME``,
            ``pkg::package/path.pth`` or a scheme registered by the user.
        prefix: load only the keys under ``prefix.`` with the prefix removed, e.g.
            ``'backbone'`` to initialize a backbone from a whole detector's checkpoint.
        map_location: where tensors are loaded, as in ``torch.load``.
        weights_only: ``torch.load``'s safe mode; set False only for a file you trust.

    Example:
        >>> init_cfg = dict(type='Pretrained', checkpoint='detector.pth', prefix='backbone')
        >>> backbone = ResNet(depth=50, init_cfg=init_cfg)  # doctest: +SKIP
        >>> backbone.init_weights()  # doctest: +SKIP
    """

    def __init__(
        self,
        checkpoint: str,
        prefix: str | None = None,
        map_location: Any = "cpu",
        *,
        weights_only: bool = True,
    ) -> None:
        self.checkpoint = checkpoint
        self.prefix = prefix
        self.map_location = map_location
        self.weights_only = weights_only
        # Set by ``initialize`` for MMEngine's interface; loading always targets the module.
        self.wholemodule = False

    def __call__(self, module: nn.Module) -> None:
        with self._hint_at_weights_only():
            if self.prefix is None:
                print_log(f"load model from: {self.checkpoint}", logger="current")
                _checkpoint_function(LOAD_CHECKPOINT)(
                    module,
                    self.checkpoint,
                    map_location=self.map_location,
                    strict=False,
                    logger="current",
                    weights_only=self.weights_only,
                )
            else:
                print_log(f"load {self.prefix} in model from: {self.checkpoint}", logger="current")
                state_dict = _checkpoint_function(LOAD_CHECKPOINT_WITH_PREFIX)(
                    self.prefix,
                    self.checkpoint,
                    map_location=self.map_location,
                    weights_only=self.weights_only,
                )
                _checkpoint_function(LOAD_STATE_DICT)(
                    module, state_dict, strict=False, logger="current"
                )
        if hasattr(module, "_params_init_info"):
            update_init_info(module, init_info=self._get_init_info())

    @contextmanager
    def _hint_at_weights_only(self) -> Iterator[None]:
        # checkpoint's refusal names load_checkpoint's argument; a Pretrained user writes an
        # init_cfg, so say where the switch goes there (Python 3.11+ shows notes). Only when
        # the file names the classes it needs: a file that is no checkpoint needs no switch.
        try:
            yield
        except pickle.UnpicklingError as err:
            if getattr(err, "unsafe_globals", None) and hasattr(err, "add_note"):
                err.add_note(
                    f"Pretrained: only if you trust {self.checkpoint}, add weights_only=False "
                    "to this Pretrained init_cfg."
                )
            raise

    def _get_init_info(self) -> str:
        return f"{type(self).__name__}: load from {self.checkpoint}"
