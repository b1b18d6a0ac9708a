"""torchvision.ops.boxes of the stand-in: every function refuses."""

from __future__ import annotations

from torchvision._standin import module_getattr

__getattr__ = module_getattr(__name__)
