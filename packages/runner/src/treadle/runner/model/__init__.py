"""treadle.runner.model: BaseModule and weight init, BaseModel, data preprocessors, averaged
models (EMA/SWA), test-time augmentation and model wrappers.

The API follows MMEngine 0.10's ``mmengine.model``: ``from mmengine.model import BaseModel``
becomes ``from treadle.runner.model import BaseModel``. Importing this package registers the
built-in models, wrappers and weight initializers in treadle.runner.registry.
"""

from ..utils.lazy import lazy_attributes
from .averaged import (
    BaseAveragedModel,
    ExponentialMovingAverage,
    MomentumAnnealingEMA,
    StochasticWeightAverage,
)
from .base_model import BaseModel
from .base_module import BaseModule, ModuleDict, ModuleList, Sequential
from .preprocessors import BaseDataPreprocessor, ImgDataPreprocessor
from .test_time_aug import BaseTTAModel
from .utils import (
    convert_sync_batchnorm,
    detect_anomalous_params,
    merge_dict,
    revert_sync_batchnorm,
    stack_batch,
)
from .weight_init import (
    BaseInit,
    Caffe2XavierInit,
    ConstantInit,
    KaimingInit,
    NormalInit,
    PretrainedInit,
    TruncNormalInit,
    UniformInit,
    XavierInit,
    bias_init_with_prob,
    caffe2_xavier_init,
    constant_init,
    initialize,
    kaiming_init,
    normal_init,
    trunc_normal_,
    trunc_normal_init,
    uniform_init,
    update_init_info,
    xavier_init,
)
from .wrappers import (
    MMDistributedDataParallel,
    MMSeparateDistributedDataParallel,
    is_model_wrapper,
    unwrap_model,
)

__all__ = [
    "BaseAveragedModel",
    "BaseDataPreprocessor",
    "BaseInit",
    "BaseModel",
    "BaseModule",
    "BaseTTAModel",
    "Caffe2XavierInit",
    "ConstantInit",
    "ExponentialMovingAverage",
    "ImgDataPreprocessor",
    "KaimingInit",
    "MMDistributedDataParallel",
    "MMFullyShardedDataParallel",
    "MMSeparateDistributedDataParallel",
    "ModuleDict",
    "ModuleList",
    "MomentumAnnealingEMA",
    "NormalInit",
    "PretrainedInit",
    "Sequential",
    "StochasticWeightAverage",
    "TruncNormalInit",
    "UniformInit",
    "XavierInit",
    "bias_init_with_prob",
    "caffe2_xavier_init",
    "constant_init",
    "convert_sync_batchnorm",
    "detect_anomalous_params",
    "initialize",
    "is_model_wrapper",
    "kaiming_init",
    "merge_dict",
    "normal_init",
    "revert_sync_batchnorm",
    "stack_batch",
    "trunc_normal_",
    "trunc_normal_init",
    "uniform_init",
    "unwrap_model",
    "update_init_info",
    "xavier_init",
]


# MMFullyShardedDataParallel imports torch.distributed.fsdp (about half a second): it is loaded on
# first access.
__getattr__ = lazy_attributes(__name__, {"MMFullyShardedDataParallel": ".wrappers.fully_sharded"})
