"""treadle.runner.hub: configs and models shipped inside installed packages (``pkg::`` paths).

The API follows MMEngine 0.10's ``mmengine.hub``: ``from mmengine.hub import get_model`` becomes
``from treadle.runner.hub import get_model``. A package is named by its import name; it must be
installed already (treadle never runs pip). Weights are loaded through CheckpointLoader, so a
metafile may list local paths, URLs or any registered scheme.

Example:
    >>> from treadle.runner.hub import get_config, get_model
    >>> cfg = get_config('treadle_toy_zoo::toy/toy-linear_4xb3_2e.py')
    >>> model = get_model('treadle_toy_zoo::toy/toy-linear_4xb3_2e.py', pretrained=True)
"""

from __future__ import annotations

from .hub import get_config, get_model

__all__ = ["get_config", "get_model"]
