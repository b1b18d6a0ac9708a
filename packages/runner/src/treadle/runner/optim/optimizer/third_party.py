"""Optimizers of optional packages (D-Adaptation, lion-pytorch, Sophia, bitsandbytes,
transformers), in the OPTIMIZERS registry by name whether or not their package is installed.

Each name is held by a stand-in class that imports its package only when an optimizer is built,
so that importing treadle.runner.optim never imports bitsandbytes or transformers, a config that
names ``'Lion'`` always resolves, and a missing package is an ImportError naming the extra to
install instead of "'Lion' is not in the registry".
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any

import torch

from treadle.runner.registry import OPTIMIZERS


@dataclass(frozen=True)
class OptionalPackage:
    """Where an optional package's optimizers are, and how to install it.

    Args:
        distribution: the name pip installs (``'lion-pytorch'``).
        modules: the modules that hold the optimizer classes, tried in order (a package that
            renamed its module between versions lists both).
        extra: the treadle-runner extra that installs it.

    Example:
        >>> OptionalPackage('lion-pytorch', ('lion_pytorch',), 'lion').install_hint
        'pip install treadle-runner[lion]'
    """

    distribution: str
    modules: tuple[str, ...]
    extra: str

    @property
    def install_hint(self) -> str:
        return f"pip install treadle-runner[{self.extra}]"


DADAPTATION = OptionalPackage("dadaptation", ("dadaptation",), "dadaptation")
LION = OptionalPackage("lion-pytorch", ("lion_pytorch",), "lion")
# Sophia-Optimizer renamed its module from 'Sophia' (up to 0.2.1, which MMEngine imports) to
# 'sophia' (0.2.3 on).
SOPHIA = OptionalPackage("Sophia-Optimizer", ("sophia", "Sophia"), "sophia")
BITSANDBYTES = OptionalPackage("bitsandbytes", ("bitsandbytes.optim",), "bitsandbytes")
TRANSFORMERS = OptionalPackage("transformers", ("transformers",), "transformers")


class LazyOptimizer:
    """Stands in the registry for the optimizer class ``attribute`` of an optional package:
    calling it imports the package and builds the real optimizer, whose class it resolves.

    Subclasses are made by :func:`register_lazy_optimizer`, one per registered name.

    Example:
        >>> import torch
        >>> lion_cls = OPTIMIZERS.get('Lion')
        >>> optimizer = lion_cls([torch.nn.Parameter(torch.zeros(2))], lr=1e-4)  # doctest: +SKIP
        >>> type(optimizer).__module__  # doctest: +SKIP
        'lion_pytorch.lion_pytorch'
    """

    package: OptionalPackage
    attribute: str
    registered_name: str
    note: str = ""

    def __new__(cls, params: Any, *args: Any, **kwargs: Any) -> torch.optim.Optimizer:
        # An instance of the real class is returned, so this class's __init__ never runs.
        return cls.resolve()(params, *args, **kwargs)

    @classmethod
    def resolve(cls) -> type[torch.optim.Optimizer]:
        """The real optimizer class; ImportError naming the extra when its package is missing
        or too old to have it."""
        errors = []
        for module_name in cls.package.modules:
            try:
                module = importlib.import_module(module_name)
            except ImportError as error:
                errors.append(f"import {module_name}: {error}")
                continue
            found = getattr(module, cls.attribute, None)
            if isinstance(found, type) and issubclass(found, torch.optim.Optimizer):
                return found
            errors.append(f"{module_name} has no optimizer class {cls.attribute!r}")
        raise ImportError(
            f"the optimizer {cls.registered_name!r} is {cls.attribute} of the package "
            f"{cls.package.distribution}, which could not be used ({'; '.join(errors)}). "
            f"{cls.note}Install it with: {cls.package.install_hint}"
        )


def register_lazy_optimizer(
    package: OptionalPackage, attribute: str, name: str | None = None, note: str = ""
) -> str:
    """Register ``attribute`` of ``package`` in OPTIMIZERS as ``name`` (default: ``attribute``)
    without importing the package; return the registered name."""
    name = name or attribute
    stand_in = type(
        name,
        (LazyOptimizer,),
        {
            "package": package,
            "attribute": attribute,
            "registered_name": name,
            "note": note,
            "__module__": __name__,
            "__qualname__": name,
            "__doc__": f"{attribute} of {package.distribution} ({package.install_hint}).",
        },
    )
    OPTIMIZERS.register_module(name=name, module=stand_in)
    return name


def is_lazy_optimizer(obj: Any) -> bool:
    """Whether ``obj`` is a stand-in registered by :func:`register_lazy_optimizer`."""
    return isinstance(obj, type) and issubclass(obj, LazyOptimizer)


def real_optimizer_class(obj: Any) -> Any:
    """``obj`` itself, or the class a stand-in resolves to (importing its package)."""
    return obj.resolve() if is_lazy_optimizer(obj) else obj


# The optimizer classes of bitsandbytes.optim (0.50); a name that torch.optim (or lion-pytorch,
# for 'Lion') already has is registered with the prefix 'bnb_'.
BITSANDBYTES_NAMES = (
    "AdEMAMix",
    "AdEMAMix32bit",
    "AdEMAMix8bit",
    "Adagrad",
    "Adagrad32bit",
    "Adagrad8bit",
    "Adam",
    "Adam32bit",
    "Adam8bit",
    "AdamW",
    "AdamW32bit",
    "AdamW8bit",
    "LAMB",
    "LAMB32bit",
    "LAMB8bit",
    "LARS",
    "LARS32bit",
    "LARS8bit",
    "Lion",
    "Lion32bit",
    "Lion8bit",
    "PagedAdEMAMix",
    "PagedAdEMAMix32bit",
    "PagedAdEMAMix8bit",
    "PagedAdam",
    "PagedAdam32bit",
    "PagedAdam8bit",
    "PagedAdamW",
    "PagedAdamW32bit",
    "PagedAdamW8bit",
    "PagedLion",
    "PagedLion32bit",
    "PagedLion8bit",
    "PytorchLARS",
    "RMSprop",
    "RMSprop32bit",
    "RMSprop8bit",
    "SGD",
    "SGD32bit",
    "SGD8bit",
)


def register_dadaptation_optimizers() -> list[str]:
    """Register D-Adaptation's optimizers (``pip install treadle-runner[dadaptation]``)."""
    names = ("DAdaptAdaGrad", "DAdaptAdam", "DAdaptSGD", "DAdaptAdan", "DAdaptLion")
    return [register_lazy_optimizer(DADAPTATION, name) for name in names]


def register_lion_optimizers() -> list[str]:
    """Register lion-pytorch's Lion (``pip install treadle-runner[lion]``)."""
    return [register_lazy_optimizer(LION, "Lion")]


def register_sophia_optimizers() -> list[str]:
    """Register Sophia-Optimizer's SophiaG (``pip install treadle-runner[sophia]``)."""
    return [register_lazy_optimizer(SOPHIA, "SophiaG")]


def register_bitsandbytes_optimizers() -> list[str]:
    """Register bitsandbytes' optimizers (``pip install treadle-runner[bitsandbytes]``); a name
    already registered (torch's ``Adam``, lion-pytorch's ``Lion``) gets the prefix ``bnb_``."""
    names = []
    for attribute in BITSANDBYTES_NAMES:
        name = f"bnb_{attribute}" if attribute in OPTIMIZERS.module_dict else attribute
        names.append(register_lazy_optimizer(BITSANDBYTES, attribute, name))
    return names


def register_transformers_optimizers() -> list[str]:
    """Register transformers' Adafactor (``pip install treadle-runner[transformers]``)."""
    note = "(torch's own Adafactor is registered as 'TorchAdafactor'.) "
    return [register_lazy_optimizer(TRANSFORMERS, "Adafactor", note=note)]
