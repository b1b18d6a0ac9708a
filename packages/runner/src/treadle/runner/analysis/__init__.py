"""treadle.runner.analysis: flops, activations and parameters of a model (mmengine.analysis).

Example:
    >>> import torch
    >>> from treadle.runner.analysis import FlopAnalyzer, parameter_count
    >>> model = torch.nn.Linear(10, 10)
    >>> FlopAnalyzer(model, (torch.ones(2, 10),)).total(), parameter_count(model)['']
    (200, 110)
"""

from __future__ import annotations

from treadle.runner.analysis.complexity_analysis import (
    ActivationAnalyzer,
    FlopAnalyzer,
    activation_count,
    flop_count,
    parameter_count,
    parameter_count_table,
)
from treadle.runner.analysis.print_helper import get_model_complexity_info

__all__ = [
    "ActivationAnalyzer",
    "FlopAnalyzer",
    "activation_count",
    "flop_count",
    "get_model_complexity_info",
    "parameter_count",
    "parameter_count_table",
]
