"""Fixtures shared by the tests of treadle-visual."""

from __future__ import annotations

import pytest

from treadle.visual.strict_checks import StrictChecks


@pytest.fixture
def strict(monkeypatch: pytest.MonkeyPatch) -> None:
    """Strict checks on for one test: suspicious input is refused instead of warned about."""
    monkeypatch.setattr(StrictChecks, "enabled", True)
