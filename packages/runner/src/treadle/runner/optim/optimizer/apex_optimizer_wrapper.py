"""``ApexOptimWrapper``: the name of MMEngine's NVIDIA Apex wrapper, kept so that configs that
use it fail with directions instead of an unknown type.

Apex's ``amp`` is deprecated by NVIDIA in favour of ``torch.amp``, which ``AmpOptimWrapper`` uses
on every device; treadle does not support Apex.
"""

from __future__ import annotations

from typing import Any

from treadle.runner.registry import OPTIM_WRAPPERS

from .optimizer_wrapper import OptimWrapper

# Apex opt levels and what AmpOptimWrapper does instead.
_EQUIVALENTS = {
    "O0": "OptimWrapper (full precision)",
    "O1": "AmpOptimWrapper (autocast, dynamic loss scaling)",
    "O2": "AmpOptimWrapper (autocast, dynamic loss scaling)",
    "O3": "AmpOptimWrapper with dtype='float16' (autocast)",
}


@OPTIM_WRAPPERS.register_module()
class ApexOptimWrapper(OptimWrapper):
    """Not supported: constructing it raises NotImplementedError pointing at
    ``AmpOptimWrapper``.

    Example:
        >>> ApexOptimWrapper(optimizer=optimizer, opt_level='O1')
        Traceback (most recent call last):
        NotImplementedError: ApexOptimWrapper: treadle does not support NVIDIA Apex ...
    """

    def __init__(self, opt_level: str = "O1", **kwargs: Any) -> None:
        instead = _EQUIVALENTS.get(opt_level, "AmpOptimWrapper")
        raise NotImplementedError(
            f"ApexOptimWrapper: treadle does not support NVIDIA Apex (deprecated in favour of "
            f"torch.amp). For opt_level={opt_level!r} use {instead}: "
            f"optim_wrapper=dict(type='AmpOptimWrapper', dtype='float16', optimizer=...)"
        )
