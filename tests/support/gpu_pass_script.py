"""The GPU verification pass (benchmarks/gpu_pass.py) loaded as a module, for its tests: the
script, its checks' names, and the command that runs it.

Example:
    >>> gpu_pass = load_gpu_pass()
    >>> 'resume' in gpu_pass.CHECKS
    True
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "gpu_pass.py"


def load_gpu_pass() -> ModuleType:
    """benchmarks/gpu_pass.py as the module ``gpu_pass`` (loaded once per process)."""
    if "gpu_pass" in sys.modules:
        return sys.modules["gpu_pass"]
    spec = importlib.util.spec_from_file_location("gpu_pass", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules["gpu_pass"] = module
    spec.loader.exec_module(module)
    return module
