"""Import-only stand-in for torchvision (see ``_standin``): importing works, using raises."""

from __future__ import annotations

from torchvision._standin import module_getattr

# mmengine's collect_env() and the Runner's environment banner read the version; a PEP 440
# local version makes the stand-in obvious in every log that prints it.
__version__ = "0.0.0+standin"

__getattr__ = module_getattr(__name__)
