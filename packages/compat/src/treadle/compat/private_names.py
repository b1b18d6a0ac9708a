"""Private helpers of MMEngine that toolboxes and their tests import, where treadle has no
counterpart of its own: ``mmengine.runner.loops._InfiniteDataloaderIterator``
(treadle.runner.loops' own, under MMEngine's name), ``_parse_losses`` and ``_update_losses``
(validation losses in custom loops of mmaction2 and research code) and
``mmengine.fileio.handlers.json_handler.set_default``."""

from __future__ import annotations

from typing import Any

from treadle.fileio.handlers.json_handler import _to_json
from treadle.logging import HistoryBuffer
from treadle.runner.loops.dataloader_iterator import InfiniteDataloaderIterator

#: MMEngine's private name of the iterator its IterBasedTrainLoop keeps as ``dataloader_iterator``
#: (treadle's loop gives one that reads through the loop: ``isinstance`` holds for it too).
_InfiniteDataloaderIterator = InfiniteDataloaderIterator


def set_default(obj: Any) -> Any:
    """``json.dump(default=...)`` as MMEngine's JsonHandler uses it: sets and ranges as lists,
    numpy arrays and scalars as Python values (treadle's JsonHandler converts the same).

    Example:
        >>> set_default({1})
        [1]
    """
    try:
        return _to_json(obj)
    except TypeError as error:  # MMEngine's phrase, which downstream tests match on
        raise TypeError(f"{type(obj)} is unsupported for json dump ({error})") from error


def _update_losses(outputs: list, losses: dict) -> tuple[list, dict]:
    """Move the losses a model appended to its predictions into ``losses``.

    When the last output is a data element holding only ``loss`` (a dict of tensors or lists of
    tensors), it is removed from ``outputs`` and each value is added to the HistoryBuffer of its
    name in ``losses`` (created when missing). Returns ``(outputs, losses)``.

    Example:
        >>> _update_losses([1, 2], {})
        ([1, 2], {})
    """
    import torch

    from treadle.runner.structures import BaseDataElement

    last = outputs[-1] if outputs else None
    if isinstance(last, BaseDataElement) and list(last.keys()) == ["loss"]:
        loss = last.loss
        outputs = outputs[:-1]
    else:
        loss = {}
    for name, value in loss.items():
        buffer = losses.setdefault(name, HistoryBuffer())
        if isinstance(value, torch.Tensor):
            buffer.update(value.item())
        elif isinstance(value, list) and all(isinstance(v, torch.Tensor) for v in value):
            for item in value:
                buffer.update(item.item())
    return outputs, losses


def _parse_losses(losses: dict[str, HistoryBuffer], stage: str) -> dict[str, float]:
    """The mean of each loss buffer, plus ``{stage}_loss``: the sum of the means of the names
    that contain ``loss``.

    Example:
        >>> _parse_losses({'loss_cls': HistoryBuffer([1.0, 3.0], [1, 1])}, 'val')
        {'loss_cls': 2.0, 'val_loss': 2.0}
    """
    means = {name: buffer.mean() for name, buffer in losses.items()}
    total = sum(mean for name, mean in means.items() if "loss" in name)
    return {**means, f"{stage}_loss": total}
