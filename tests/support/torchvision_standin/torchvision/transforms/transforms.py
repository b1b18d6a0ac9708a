"""torchvision.transforms.transforms of the stand-in: only the names used at import time."""

from __future__ import annotations

from torchvision._standin import Placeholder, RefusingBase, module_getattr

InterpolationMode = Placeholder(f"{__name__}.InterpolationMode")


class RandomResizedCrop(RefusingBase):
    """Subclassed by mmpretrain's MAERandomResizedCrop at import; constructing it refuses."""


__getattr__ = module_getattr(__name__)
