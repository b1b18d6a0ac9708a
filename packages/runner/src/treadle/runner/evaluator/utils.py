"""get_metric_value: find one metric in the dict ``Evaluator.evaluate`` returns."""

from __future__ import annotations

from typing import Any


def get_metric_value(indicator: str, metrics: dict[str, Any]) -> Any:
    """Return the value of the metric ``indicator`` names in ``metrics``.

    ``indicator`` is a full key with its prefix (``'accuracy/top1'``), or the bare name
    (``'top1'``) when exactly one key ends in it.

    Example:
        >>> get_metric_value('top1', {'accuracy/top1': 0.9, 'accuracy/top5': 1.0})
        0.9
    """
    if "/" in indicator:
        if indicator in metrics:
            return metrics[indicator]
        raise ValueError(
            f"The indicator {indicator!r} can not match any metric: the metrics are "
            f"{sorted(metrics)}"
        )
    matches = [key for key in metrics if key.split("/")[-1] == indicator]
    if len(matches) == 1:
        return metrics[matches[0]]
    if not matches:
        raise ValueError(
            f"The indicator {indicator!r} can not match any metric: the metrics are "
            f"{sorted(metrics)}"
        )
    raise ValueError(
        f"The indicator {indicator!r} matches multiple metrics ({sorted(matches)}): write the "
        f"full name with its prefix"
    )
