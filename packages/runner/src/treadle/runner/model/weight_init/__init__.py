"""Weight initialization: the init functions, the initializers of WEIGHT_INITIALIZERS
(MMEngine's names), ``initialize`` and the per-parameter record of ``update_init_info``."""

from .functions import (
    bias_init_with_prob,
    caffe2_xavier_init,
    constant_init,
    kaiming_init,
    normal_init,
    trunc_normal_,
    trunc_normal_init,
    uniform_init,
    xavier_init,
)
from .init_info import update_init_info
from .initialize import initialize
from .initializers import (
    BaseInit,
    Caffe2XavierInit,
    ConstantInit,
    KaimingInit,
    NormalInit,
    TruncNormalInit,
    UniformInit,
    XavierInit,
)
from .pretrained import PretrainedInit

__all__ = [
    "BaseInit",
    "Caffe2XavierInit",
    "ConstantInit",
    "KaimingInit",
    "NormalInit",
    "PretrainedInit",
    "TruncNormalInit",
    "UniformInit",
    "XavierInit",
    "bias_init_with_prob",
    "caffe2_xavier_init",
    "constant_init",
    "initialize",
    "kaiming_init",
    "normal_init",
    "trunc_normal_",
    "trunc_normal_init",
    "uniform_init",
    "update_init_info",
    "xavier_init",
]
