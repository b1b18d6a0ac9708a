"""Config pieces shared by the best-checkpoint tests (tests/runner/test_hooks_checkpoint_best_*):
a toy metric with scripted accuracies, default hooks with a CheckpointHook, and the checkpoint
files of a folder."""

from __future__ import annotations

from typing import Any

from hooks_b_stub_runner import files


def metric(*accs: float) -> dict[str, Any]:
    """RunnerToyMetric reporting ``acc`` = each of ``accs`` in turn, one per validation.

    Example:
        >>> metric(0.5, 0.7)['values']
        [{'acc': 0.5}, {'acc': 0.7}]
    """
    return dict(type="RunnerToyMetric", values=[dict(acc=a) for a in accs])


def hooks(**checkpoint: Any) -> dict[str, Any]:
    """default_hooks with a LoggerHook and a CheckpointHook of ``checkpoint``'s arguments."""
    return dict(
        logger=dict(type="LoggerHook", interval=4),
        checkpoint=dict(type="CheckpointHook", **checkpoint),
    )


def checkpoints(directory: Any) -> list[str]:
    """The ``.pth`` files of ``directory``, sorted."""
    return [name for name in files(directory) if name.endswith(".pth")]
