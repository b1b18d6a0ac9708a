import sys
from pathlib import Path

import pytest

DATA = Path(__file__).parent / "data"


@pytest.fixture
def data() -> Path:
    return DATA


@pytest.fixture
def demo_packages(monkeypatch):
    """Puts tests/config/data/pkgs on sys.path: lazypkg_demo (imported lazily by pure-Python
    configs) and cfgpkg_demo (ships configs; importing it raises)."""
    monkeypatch.syspath_prepend(str(DATA / "pkgs"))
    yield DATA / "pkgs"
    for name in [m for m in sys.modules if m.startswith(("lazypkg_demo", "cfgpkg_demo"))]:
        del sys.modules[name]
