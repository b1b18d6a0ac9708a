"""The loading functions that treadle.runner.model's ``Pretrained`` finds in FUNCTIONS.

``Pretrained`` lives in a lower layer than this package (which imports it), so it cannot
import these functions; it names what it needs and looks the names up in FUNCTIONS when it
runs, and importing this package registers them. The names are Pretrained's, imported from it,
so the two sides cannot drift apart.

Example:
    >>> from treadle.runner.registry import FUNCTIONS
    >>> FUNCTIONS.get('checkpoint:load_checkpoint') is load_checkpoint
    True
"""

from __future__ import annotations

from treadle.runner.model.weight_init.pretrained import (
    LOAD_CHECKPOINT,
    LOAD_CHECKPOINT_WITH_PREFIX,
    LOAD_STATE_DICT,
)
from treadle.runner.registry import FUNCTIONS

from .model_loading import _load_checkpoint_with_prefix, load_checkpoint
from .state import load_state_dict

FUNCTIONS.register_module(name=LOAD_CHECKPOINT, module=load_checkpoint)
FUNCTIONS.register_module(name=LOAD_CHECKPOINT_WITH_PREFIX, module=_load_checkpoint_with_prefix)
FUNCTIONS.register_module(name=LOAD_STATE_DICT, module=load_state_dict)
