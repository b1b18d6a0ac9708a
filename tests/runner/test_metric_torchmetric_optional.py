"""TorchMetric where torchmetrics, an extra, may be missing: it is imported only when a
TorchMetric is made, and its absence names the extra to install."""

from __future__ import annotations

import subprocess
import sys

import pytest

from treadle.runner.evaluator import TorchMetric


def test_missing_torchmetrics_tells_how_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "torchmetrics", None)
    with pytest.raises(
        ImportError, match=r"Install it with: pip install treadle-runner\[torchmetrics\]$"
    ):
        TorchMetric("MulticlassAccuracy", num_classes=3)


def test_importing_the_evaluator_does_not_import_torchmetrics():
    code = "import sys, treadle.runner.evaluator; print('torchmetrics' in sys.modules)"
    output = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert output.stdout.strip() == "False"
