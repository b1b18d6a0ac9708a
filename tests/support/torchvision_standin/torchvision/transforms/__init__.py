"""torchvision.transforms of the stand-in: only the base classes mmpretrain subclasses.

mmpretrain registers every capitalised class in ``dir(torchvision.transforms)`` as
``torchvision/NAME``: here that is only RandomResizedCrop, whose construction refuses.
"""

from __future__ import annotations

from torchvision._standin import module_getattr
from torchvision.transforms.transforms import RandomResizedCrop

__all__ = ["RandomResizedCrop"]

__getattr__ = module_getattr(__name__)
