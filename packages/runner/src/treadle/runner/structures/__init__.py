"""treadle.runner.structures: the data elements that carry samples, predictions and their
meta information through the dataset, the model and the evaluator.

The API follows MMEngine 0.10's ``mmengine.structures``: ``from mmengine.structures import
InstanceData`` becomes ``from treadle.runner.structures import InstanceData``.
"""

from __future__ import annotations

from .base_data_element import BaseDataElement
from .instance_data import InstanceData
from .label_data import LabelData
from .pixel_data import PixelData

__all__ = ["BaseDataElement", "InstanceData", "LabelData", "PixelData"]
