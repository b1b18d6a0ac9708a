"""The type aliases MMEngine 0.10.7's modules define (``ModelType``, ``ConfigType``,
``IndexType``, ...) and toolboxes import to annotate their own code: the same unions, of
treadle's classes. mmdetection's and mmsegmentation's inferencers import ``ModelType`` from
``mmengine.infer.infer``, so their ``apis`` packages need it to import at all."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch

from treadle.config import Config, ConfigDict
from treadle.runner.optim import BaseOptimWrapper, OptimWrapper, OptimWrapperDict
from treadle.runner.optim.scheduler import _ParamScheduler
from treadle.runner.structures import BaseDataElement, InstanceData
from treadle.visual import BaseVisBackend

# mmengine.infer.infer
InstanceList = list[InstanceData]
ImgType = np.ndarray | Sequence[np.ndarray]
ResType = dict | list[dict]
ConfigType = Config | ConfigDict
ModelType = dict | Config | ConfigDict | str

# mmengine.runner.runner, mmengine.runner._flexible_runner, mmengine._strategy.base
RunnerConfigType = dict | Config | ConfigDict
ParamSchedulerType = list[_ParamScheduler] | dict[str, list[_ParamScheduler]]
OptimWrapperType = OptimWrapper | OptimWrapperDict

# mmengine.optim.scheduler.param_scheduler
OptimizerType = BaseOptimWrapper | torch.optim.Optimizer

# mmengine.structures.instance_data (MMEngine adds the NPU/MLU/MUSA tensor types on those
# devices; treadle has no such backends)
BoolTypeTensor = torch.BoolTensor | torch.cuda.BoolTensor
LongTypeTensor = torch.LongTensor | torch.cuda.LongTensor
IndexType = str | slice | int | list | LongTypeTensor | BoolTypeTensor | np.ndarray

# mmengine.model.base_model.data_preprocessor
CastData = tuple | dict | BaseDataElement | torch.Tensor | list | bytes | str | None

# mmengine.model.test_time_aug
EnhancedBatchInputs = list[torch.Tensor | list[torch.Tensor]]
EnhancedBatchDataSamples = list[list[BaseDataElement]]
MergedDataSamples = list[BaseDataElement]

# mmengine.visualization.visualizer
VisBackendsType = list[dict | BaseVisBackend] | dict | BaseVisBackend | None
