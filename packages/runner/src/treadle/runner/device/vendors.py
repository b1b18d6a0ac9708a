"""Vendor adapters that add a device type to torch when imported (torch_npu adds 'npu', ...).

An adapter is looked for with ``importlib.util.find_spec`` first, so a machine without it pays
nothing and never sees an import error; one that is installed is imported once, on the first
question about its device.
"""

from __future__ import annotations

import functools
import importlib
import importlib.util
from types import ModuleType

# device type -> the module that registers it with torch.
VENDOR_MODULES = {
    "npu": "torch_npu",
    "mlu": "torch_mlu",
    "musa": "torch_musa",
    "dipu": "torch_dipu",
}


@functools.cache
def import_vendor(module_name: str) -> ModuleType | None:
    """The adapter ``module_name`` imported, or None when it is not installed or fails to import
    (an adapter built for another torch raises on import; that machine has no such device)."""
    try:
        if importlib.util.find_spec(module_name) is None:
            return None
    except (ImportError, ValueError):
        return None
    try:
        return importlib.import_module(module_name)
    except Exception:  # any failure means the adapter is unusable here
        return None
