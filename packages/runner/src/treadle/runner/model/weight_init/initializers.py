"""The weight initializers of WEIGHT_INITIALIZERS: ``Constant``, ``Xavier``, ``Normal``,
``TruncNormal``, ``Uniform``, ``Kaiming`` and ``Caffe2Xavier``.

An initializer is built from an ``init_cfg`` dict and called on a module. With ``layer`` it
initializes the submodules whose class (or one of its parent classes) has one of those names;
called through ``override`` (``wholemodule = True``) it initializes every submodule of the
module it is given.
"""

from __future__ import annotations

import logging
from typing import Any

from torch import nn

from treadle.logging import print_log
from treadle.runner.registry import WEIGHT_INITIALIZERS

from .functions import (
    _check_distribution,
    bias_init_with_prob,
    constant_init,
    kaiming_init,
    normal_init,
    trunc_normal_init,
    uniform_init,
    xavier_init,
)
from .init_info import update_init_info


def class_names(module: nn.Module) -> set[str]:
    """The names ``layer`` can match for ``module``: its class and all its parent classes."""
    return {cls.__name__ for cls in type(module).__mro__ if cls is not object}


class BaseInit:
    """What every initializer shares: the bias value and the layers it applies to.

    Args:
        bias: the value the bias is filled with.
        bias_prob: if given, the bias is ``bias_init_with_prob(bias_prob)`` instead.
        layer: a class name or a list of them; without it (and outside ``override``) nothing
            is initialized.

    Example:
        >>> init = ConstantInit(val=1, bias=0, layer=['Conv2d', 'Linear'])
        >>> model = nn.Sequential(nn.Conv2d(3, 4, 1), nn.BatchNorm2d(4))
        >>> init(model)  # the Conv2d only
        >>> float(model[0].weight.min())
        1.0
    """

    def __init__(
        self, *, bias: float = 0, bias_prob: float | None = None, layer: str | list | None = None
    ) -> None:
        self.wholemodule = False
        name = type(self).__name__
        if isinstance(bias, bool) or not isinstance(bias, (int, float)):
            raise TypeError(f"{name}: bias must be a number, got {type(bias).__name__} {bias!r}")
        if bias_prob is not None and not isinstance(bias_prob, float):
            raise TypeError(
                f"{name}: bias_prob must be a float, got {type(bias_prob).__name__} {bias_prob!r}"
            )
        if layer is None:
            layer = []
        elif isinstance(layer, str):
            layer = [layer]
        elif not isinstance(layer, list) or not all(isinstance(n, str) for n in layer):
            raise TypeError(
                f"{name}: layer must be a str or a list of str (class names), got "
                f"{type(layer).__name__} {layer!r}"
            )
        self.bias = bias_init_with_prob(bias_prob) if bias_prob is not None else bias
        self.layer: list[str] = layer

    def init_layer(self, module: nn.Module) -> None:
        """Initialize one submodule (a subclass fills the weight its way)."""
        raise NotImplementedError(f"{type(self).__name__} must implement init_layer")

    def __call__(self, module: nn.Module) -> None:
        wanted = set(self.layer)
        matched = []

        def visit(submodule: nn.Module) -> None:
            if self.wholemodule or wanted & class_names(submodule):
                self.init_layer(submodule)
                matched.append(submodule)

        # nn.Module.apply visits children before their parent: the order (and so the random
        # numbers each layer gets) is MMEngine's.
        module.apply(visit)
        if not matched and wanted and not self.wholemodule:
            # Usually a misspelt class name: the init_cfg silently did nothing.
            print_log(
                f"{type(self).__name__}: layer={self.layer} matched no submodule of "
                f"{type(module).__name__}; nothing was initialized",
                logger="current",
                level=logging.WARNING,
            )
        if hasattr(module, "_params_init_info"):
            update_init_info(module, init_info=self._get_init_info())

    def _get_init_info(self) -> str:
        return f"{type(self).__name__}, bias={self.bias}"


@WEIGHT_INITIALIZERS.register_module(name="Constant")
class ConstantInit(BaseInit):
    """Fill weights with ``val`` (config type ``'Constant'``).

    Example:
        >>> init = ConstantInit(val=0.5, bias=0, layer='Linear')
        >>> layer = nn.Linear(2, 2)
        >>> init(layer)
        >>> float(layer.weight.max())
        0.5
    """

    def __init__(self, val: float, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.val = val

    def init_layer(self, module: nn.Module) -> None:
        constant_init(module, self.val, self.bias)

    def _get_init_info(self) -> str:
        return f"{type(self).__name__}: val={self.val}, bias={self.bias}"


@WEIGHT_INITIALIZERS.register_module(name="Xavier")
class XavierInit(BaseInit):
    """Glorot initialization (config type ``'Xavier'``); ``distribution`` is 'normal' or
    'uniform'.

    Example:
        >>> XavierInit(gain=2, distribution='uniform', layer='Conv2d')(nn.Conv2d(3, 8, 3))
    """

    def __init__(self, gain: float = 1, distribution: str = "normal", **kwargs: Any) -> None:
        super().__init__(**kwargs)
        _check_distribution(distribution, type(self).__name__)
        self.gain = gain
        self.distribution = distribution

    def init_layer(self, module: nn.Module) -> None:
        xavier_init(module, self.gain, self.bias, self.distribution)

    def _get_init_info(self) -> str:
        return (
            f"{type(self).__name__}: gain={self.gain}, distribution={self.distribution}, "
            f"bias={self.bias}"
        )


@WEIGHT_INITIALIZERS.register_module(name="Normal")
class NormalInit(BaseInit):
    """Weights drawn from N(mean, std²) (config type ``'Normal'``).

    Example:
        >>> NormalInit(mean=0, std=0.01, layer='Linear')(nn.Linear(4, 2))
    """

    def __init__(self, mean: float = 0, std: float = 1, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.mean = mean
        self.std = std

    def init_layer(self, module: nn.Module) -> None:
        normal_init(module, self.mean, self.std, self.bias)

    def _get_init_info(self) -> str:
        return f"{type(self).__name__}: mean={self.mean}, std={self.std}, bias={self.bias}"


@WEIGHT_INITIALIZERS.register_module(name="TruncNormal")
class TruncNormalInit(BaseInit):
    """Weights drawn from N(mean, std²) truncated to [a, b] (config type ``'TruncNormal'``).

    Example:
        >>> TruncNormalInit(std=0.02, a=-0.04, b=0.04, layer='Linear')(nn.Linear(4, 2))
    """

    def __init__(
        self, mean: float = 0, std: float = 1, a: float = -2, b: float = 2, **kwargs: Any
    ) -> None:
        super().__init__(**kwargs)
        self.mean = mean
        self.std = std
        self.a = a
        self.b = b

    def init_layer(self, module: nn.Module) -> None:
        trunc_normal_init(module, self.mean, self.std, self.a, self.b, self.bias)

    def _get_init_info(self) -> str:
        return (
            f"{type(self).__name__}: a={self.a}, b={self.b}, mean={self.mean}, "
            f"std={self.std}, bias={self.bias}"
        )


@WEIGHT_INITIALIZERS.register_module(name="Uniform")
class UniformInit(BaseInit):
    """Weights drawn from U(a, b) (config type ``'Uniform'``).

    Example:
        >>> UniformInit(a=-0.1, b=0.1, layer='Linear')(nn.Linear(4, 2))
    """

    def __init__(self, a: float = 0, b: float = 1, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.a = a
        self.b = b

    def init_layer(self, module: nn.Module) -> None:
        uniform_init(module, self.a, self.b, self.bias)

    def _get_init_info(self) -> str:
        return f"{type(self).__name__}: a={self.a}, b={self.b}, bias={self.bias}"


@WEIGHT_INITIALIZERS.register_module(name="Kaiming")
class KaimingInit(BaseInit):
    """He initialization (config type ``'Kaiming'``); ``mode`` is 'fan_in' or 'fan_out',
    ``distribution`` 'normal' or 'uniform'.

    Example:
        >>> KaimingInit(mode='fan_in', layer='Conv2d')(nn.Conv2d(3, 8, 3))
    """

    def __init__(
        self,
        a: float = 0,
        mode: str = "fan_out",
        nonlinearity: str = "relu",
        distribution: str = "normal",
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        _check_distribution(distribution, type(self).__name__)
        if mode not in ("fan_in", "fan_out"):
            raise ValueError(
                f"{type(self).__name__}: mode must be 'fan_in' or 'fan_out', got {mode!r}"
            )
        self.a = a
        self.mode = mode
        self.nonlinearity = nonlinearity
        self.distribution = distribution

    def init_layer(self, module: nn.Module) -> None:
        kaiming_init(module, self.a, self.mode, self.nonlinearity, self.bias, self.distribution)

    def _get_init_info(self) -> str:
        return (
            f"{type(self).__name__}: a={self.a}, mode={self.mode}, "
            f"nonlinearity={self.nonlinearity}, distribution={self.distribution}, "
            f"bias={self.bias}"
        )


@WEIGHT_INITIALIZERS.register_module(name="Caffe2Xavier")
class Caffe2XavierInit(KaimingInit):
    """Caffe2's ``XavierFill`` (config type ``'Caffe2Xavier'``): He-uniform, fan_in, a=1.

    Example:
        >>> Caffe2XavierInit(layer='Conv2d')(nn.Conv2d(3, 8, 3))
    """

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(
            a=1, mode="fan_in", nonlinearity="leaky_relu", distribution="uniform", **kwargs
        )
