"""Which initializer last changed each parameter, recorded while ``init_weights`` runs.

The top-level ``BaseModule.init_weights`` gives every submodule the same record,
``module._params_init_info``: for each parameter a dict with ``'init_info'`` (a description)
and ``'tmp_mean_value'`` (a fingerprint of its values). After each initializer runs,
``update_init_info`` compares fingerprints and credits the initializer with the parameters it
changed. MMEngine keeps the same attribute, so user code that calls ``update_init_info`` from
its own ``init_weights`` works unchanged.
"""

from __future__ import annotations

import logging
from collections import defaultdict

import torch
from torch import Tensor, nn

from treadle.dist import master_only
from treadle.logging import MMLogger

_RECORD = "_params_init_info"


def fingerprints(params: list[Tensor]) -> list[Tensor | None]:
    """A small CPU tensor per parameter that changes when its values change (None on meta).

    The mean alone misses an init that keeps the mean (zero-mean weights redrawn); the mean of
    squares catches those. All fingerprints are moved to the host in one copy, not one per
    parameter: on a GPU a model with a thousand parameters would otherwise wait a thousand
    times.
    """
    real = [i for i, p in enumerate(params) if p.device.type != "meta"]
    result: list[Tensor | None] = [None] * len(params)
    if not real:
        return result
    with torch.no_grad():
        stats = [
            torch.stack([values.mean(), values.square().mean()])
            for values in (params[i].detach().double() for i in real)
        ]
        host = torch.stack([s.to(stats[0].device) for s in stats]).cpu()
    for row, i in enumerate(real):
        result[i] = host[row]
    return result


def _same(before: Tensor | None, after: Tensor | None) -> bool:
    if before is None or after is None:
        return before is after
    # NaN == NaN here: a parameter made with torch.empty may hold NaN and is not "changed"
    # by every initializer that runs after it.
    return torch.allclose(before, after, rtol=0, atol=0, equal_nan=True)


def start_init_record(module: nn.Module) -> None:
    """Record every parameter of ``module`` as untouched and share the record with every
    submodule (called by the top-level ``init_weights``)."""
    record: defaultdict[Tensor, dict] = defaultdict(dict)
    params = list(module.parameters())
    untouched = (
        f"The value is the same before and after calling `init_weights` of {type(module).__name__}"
    )
    for param, fingerprint in zip(params, fingerprints(params), strict=True):
        record[param]["init_info"] = untouched
        record[param]["tmp_mean_value"] = fingerprint
    for submodule in module.modules():
        setattr(submodule, _RECORD, record)


def end_init_record(module: nn.Module) -> None:
    """Remove the shared record from ``module`` and its submodules."""
    for submodule in module.modules():
        if hasattr(submodule, _RECORD):
            delattr(submodule, _RECORD)


def update_init_info(module: nn.Module, init_info: str) -> None:
    """Credit ``init_info`` with every parameter of ``module`` whose values changed since the
    last update (only meaningful inside ``init_weights``, where the record exists).

    Example:
        >>> # inside a custom init_weights of a BaseModule:
        >>> nn.init.zeros_(self.head.weight)  # doctest: +SKIP
        >>> update_init_info(self, 'zeros for the head')  # doctest: +SKIP
    """
    record = getattr(module, _RECORD, None)
    if record is None:
        raise RuntimeError(
            f"update_init_info({type(module).__name__}, ...): the module has no "
            f"`{_RECORD}`; call it only while init_weights of a BaseModule runs"
        )
    named = list(module.named_parameters())
    for name, param in named:
        if param not in record:
            raise RuntimeError(
                f"Parameter {name!r} of {type(module).__name__} appeared while init_weights "
                "ran; init_weights must not add or replace parameters (initialize them in "
                "place instead)"
            )
    params = [param for _, param in named]
    for param, fingerprint in zip(params, fingerprints(params), strict=True):
        entry = record[param]
        if not _same(entry["tmp_mean_value"], fingerprint):
            entry["init_info"] = init_info
            entry["tmp_mean_value"] = fingerprint


def init_info_table(module: nn.Module) -> str:
    """One line pair per parameter: its name and shape, then how it was initialized."""
    record = getattr(module, _RECORD)
    lines = ["Name of parameter - Initialization information"]
    for name, param in module.named_parameters():
        lines.append(f"\n{name} - {param.shape}:\n{record[param]['init_info']}")
    return "\n".join(lines)


@master_only
def dump_init_info(module: nn.Module) -> None:
    """Log the table of ``init_info_table`` through the current logger, as one message.

    Where the logger writes a file, the table goes to the file only: on a large model it is
    thousands of lines that would bury the console.
    """
    logger = MMLogger.get_current_instance()
    table = init_info_table(module)
    files = [h for h in logger.handlers if isinstance(h, logging.FileHandler)]
    if not files:
        logger.info(table)
        return
    record = logger.makeRecord(logger.name, logging.INFO, __file__, 0, table, None, None)
    for handler in files:
        if record.levelno >= handler.level:
            handler.handle(record)
