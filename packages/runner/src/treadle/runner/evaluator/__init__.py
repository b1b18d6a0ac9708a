"""treadle.runner.evaluator: metrics, the Evaluator that runs them, and a torchmetrics adapter.

The API follows MMEngine 0.10's ``mmengine.evaluator``: ``from mmengine.evaluator import
BaseMetric`` becomes ``from treadle.runner.evaluator import BaseMetric``. Every module that
registers into METRICS or EVALUATOR is imported here, since those registries find their
built-in classes by importing this package. torchmetrics is imported only when a TorchMetric
is built.
"""

from __future__ import annotations

from .dump_results import DumpResults
from .evaluator import Evaluator
from .metric import BaseMetric
from .torch_metric import TorchMetric
from .utils import get_metric_value

__all__ = ["BaseMetric", "DumpResults", "Evaluator", "TorchMetric", "get_metric_value"]
