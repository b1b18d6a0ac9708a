"""Which curves share a panel in ``treadle plot``: a metric and its validation and test twins.

A runner's ``scalars.json`` names the training loss ``loss`` and the validation loss
``val/loss`` (``train/loss`` too, with ``log_with_hierarchy``); drawn in one panel, on the
iteration axis, the two curves show at a glance where validation parts from training.
"""

from __future__ import annotations

from collections.abc import Sequence

MODE_PREFIXES = ("train/", "val/", "test/")
"""Prefixes that name the phase of a metric, not the metric itself."""


def metric_name(key: str) -> str:
    """``key`` without its phase prefix: ``val/loss`` -> ``loss``, ``accuracy/top1`` as is.

    Example:
        >>> metric_name('val/loss'), metric_name('accuracy/top1')
        ('loss', 'accuracy/top1')
    """
    for prefix in MODE_PREFIXES:
        if key.startswith(prefix) and len(key) > len(prefix):
            return key[len(prefix) :]
    return key


def panel_groups(keys: Sequence[str]) -> list[tuple[str, list[str]]]:
    """The panels for ``keys``, in the order their first key comes: ``(title, keys)``, where
    keys naming the same metric (see :func:`metric_name`) share one panel titled by the
    metric; a key alone in its panel is its own title.

    Example:
        >>> panel_groups(['loss', 'lr', 'val/loss', 'val/acc'])
        [('loss', ['loss', 'val/loss']), ('lr', ['lr']), ('val/acc', ['val/acc'])]
    """
    groups: dict[str, list[str]] = {}
    for key in keys:
        groups.setdefault(metric_name(key), []).append(key)
    return [(name if len(members) > 1 else members[0], members) for name, members in groups.items()]
