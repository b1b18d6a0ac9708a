"""What every module of the import-only torchvision stand-in shares.

mmpretrain imports torchvision at module level (its transforms wrap torchvision's, its box
utilities import torchvision.ops), and no CPU build of torchvision exists for the pinned torch.
The downstream tests never call into torchvision, so these modules only have to import: any
name that is not defined here raises, naming the stand-in, instead of silently doing nothing.
"""

from __future__ import annotations

from typing import Any, NoReturn


class TorchvisionStandInError(AttributeError):
    """Raised when code reaches for something in the torchvision stand-in.

    It subclasses AttributeError so that ``hasattr(torchvision, "x")`` and ``getattr(..., None)``
    keep their meaning for code that probes for optional features.

    Example:
        >>> import torchvision.ops as ops
        >>> ops.nms  # doctest: +SKIP
        TorchvisionStandInError: torchvision.ops.nms is not available: ...
    """


def refuse(module: str, name: str) -> NoReturn:
    """Raise the stand-in's error for ``module.name``."""
    raise TorchvisionStandInError(
        f"{module}.{name} is not available: this torchvision is the import-only stand-in of "
        "treadle's downstream tests (tests/support/torchvision_standin), which has no "
        "implementation of anything"
    )


def module_getattr(module: str):
    """A module-level ``__getattr__`` that refuses every public name and lets dunders through.

    Dunder look-ups (``__path__``, ``__file__``...) come from the import system and pickle:
    they must get a plain AttributeError, as from any module that does not define them.
    """

    def __getattr__(name: str) -> Any:
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        refuse(module, name)

    return __getattr__


class Placeholder:
    """A name that must exist at import time but may never be used.

    mmpretrain does ``from torchvision.transforms.transforms import InterpolationMode`` at
    import; any attribute of it, a call or an instance check fails with the stand-in's error.
    """

    def __init__(self, qualname: str) -> None:
        object.__setattr__(self, "_qualname", qualname)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        refuse(self._qualname, name)

    def __call__(self, *args: Any, **kwargs: Any) -> NoReturn:
        refuse(self._qualname, "__call__")

    def __repr__(self) -> str:
        return f"<torchvision stand-in placeholder {self._qualname}>"


class RefusingBase:
    """A base class that mmpretrain subclasses at import time; constructing one refuses.

    mmpretrain defines ``class MAERandomResizedCrop(transforms.RandomResizedCrop)`` at module
    level, so the name must be a real class; building such a transform raises.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        refuse(type(self).__module__, type(self).__name__)
