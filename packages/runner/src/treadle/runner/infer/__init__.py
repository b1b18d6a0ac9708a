"""treadle.runner.infer: the base class of task inferencers.

The API follows MMEngine 0.10's ``mmengine.infer``: ``from mmengine.infer import
BaseInferencer`` becomes ``from treadle.runner.infer import BaseInferencer``. A subclass gives
``_init_pipeline``, ``visualize`` and ``postprocess``; the model comes from a config, a
package's metafile (``'package::model-name'``) or a Runner checkpoint.

Example:
    >>> from treadle.runner.infer import BaseInferencer
    >>> BaseInferencer.list_models('treadle_toy_zoo', patterns='toy-mlp')
    ['toy-mlp_4xb3_2e', 'toy-mlp']
"""

from __future__ import annotations

from .base_inferencer import BaseInferencer, InputsType, InputType
from .meta import InferencerMeta

__all__ = ["BaseInferencer", "InferencerMeta", "InputType", "InputsType"]
