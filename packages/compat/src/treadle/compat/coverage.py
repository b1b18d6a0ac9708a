"""The coverage table: for each MMEngine 0.10.7 module, the share of its public names that
``mmengine.X.name`` provides under treadle.compat, and each missing name with its reason.

Needs no MMEngine: the names come from :mod:`treadle.compat.mmengine_0_10_7`.

Example:
    >>> from treadle.compat.coverage import coverage_rows
    >>> row = next(r for r in coverage_rows() if r.module == 'mmengine.dist.utils')
    >>> 'get_rank' in row.names and 'get_rank' not in row.missing
    True
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .missing import reason_for
from .mmengine_0_10_7 import MODULES
from .resolve import public_names


@dataclass
class Row:
    """One MMEngine module: its public names and the missing ones with their reasons."""

    module: str
    names: list[str]
    missing: dict[str, str | None] = field(default_factory=dict)

    @property
    def provided(self) -> int:
        return len(self.names) - len(self.missing)


def coverage_rows() -> list[Row]:
    """One :class:`Row` per MMEngine 0.10.7 module, in name order."""
    rows = []
    for module in sorted(MODULES):
        names = public_names(module)
        have = set(public_names(module, provided_only=True))
        missing = {name: reason_for(module, name) for name in names if name not in have}
        rows.append(Row(module, names, missing))
    return rows


def coverage_markdown(rows: list[Row]) -> str:
    """The coverage table (docs/compat/coverage.md), then the missing names grouped by reason."""
    total = sum(len(row.names) for row in rows)
    have = sum(row.provided for row in rows)
    lines = [
        f"{have} of MMEngine 0.10.7's {total} public names ({100 * have / total:.1f}%) are "
        f"available at the same paths, in all {len(rows)} of its modules.",
        "",
        "| MMEngine module | names | provided | share | missing |",
        "|---|---:|---:|---:|---|",
    ]
    for row in rows:
        share = f"{100 * row.provided / len(row.names):.0f}%" if row.names else "-"
        missing = ", ".join(f"`{name}`" for name in row.missing)
        lines.append(
            f"| `{row.module}` | {len(row.names)} | {row.provided} | {share} | {missing} |"
        )
    lines.append(f"| **all** | {total} | {have} | {100 * have / total:.1f}% | |")
    reasons: dict[str, list[str]] = {}
    for row in rows:
        for name, why in row.missing.items():
            reasons.setdefault(why or "no reason written down", []).append(f"{row.module}.{name}")
    if reasons:
        lines += ["", "Missing names, by reason:", ""]
        for why, names in sorted(reasons.items()):
            lines.append(f"- {why}: " + ", ".join(f"`{name}`" for name in names))
    return "\n".join(lines)
