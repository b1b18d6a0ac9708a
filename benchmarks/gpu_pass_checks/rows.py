"""One line of the GPU pass's table: a check's result, its figure, and why it failed or was
skipped."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

RESULTS = ("pass", "fail", "skip")


@dataclass(frozen=True)
class Row:
    """``result`` is 'pass', 'fail' or 'skip'; ``figure`` a number with its unit; ``reason``
    says why a row failed or was skipped (or notes what the figure is measured against)."""

    check: str
    result: str
    figure: str = ""
    reason: str = ""

    def __post_init__(self) -> None:
        if self.result not in RESULTS:
            raise ValueError(f"result must be one of {RESULTS}, got {self.result!r}")

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def verdict(check: str, ok: bool, figure: str, failure: str, note: str = "") -> Row:
    """A pass row (with ``note``) when ``ok``, else a fail row saying ``failure``."""
    return Row(check, "pass" if ok else "fail", figure, note if ok else failure)


def skipped(check: str, reason: str) -> Row:
    return Row(check, "skip", "", reason)


def no_cuda_analogue(check: str, what: str) -> Row:
    """A row skipped in CPU mode because ``what`` only exists on a CUDA device."""
    return skipped(check, f"CPU mode: {what} needs a CUDA device")
