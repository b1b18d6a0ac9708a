"""The DeepSpeed config a DeepSpeedStrategy hands to ``deepspeed.initialize``.

Everything here runs without deepspeed installed: the strategy's keyword arguments are merged
into the user's config (a dict or a JSON file), the config is checked for what DeepSpeed would
only reject deep inside ``initialize`` (or not at all), and the batch sizes are reconciled with
the run's dataloader and world size.
"""

from __future__ import annotations

import copy
import json
import os
from collections.abc import Mapping
from typing import Any

DEEPSPEED_EXTRA = "pip install 'treadle-runner[deepspeed]'"

# Sections the strategy's keyword arguments set, in MMEngine 0.10's order.
SECTION_ARGUMENTS = (
    "zero_optimization",
    "gradient_clipping",
    "fp16",
    "bf16",
    "amp",
    "activation_checkpointing",
    "aio",
    "train_micro_batch_size_per_gpu",
    "gradient_accumulation_steps",
)
# DeepSpeed's own activation checkpointing section (for models that call
# deepspeed.checkpointing.checkpoint); anything else is treadle's module selection.
DEEPSPEED_CHECKPOINTING_KEYS = frozenset(
    {
        "partition_activations",
        "cpu_checkpointing",
        "contiguous_memory_optimization",
        "number_checkpoints",
        "synchronize_checkpoint_boundary",
        "profile",
    }
)
# MMEngine silences DeepSpeed's periodic log line the same way.
QUIET_STEPS_PER_PRINT = 10_000_000_000_000


def import_deepspeed() -> Any:
    """The ``deepspeed`` module, or an ImportError that names the extra to install.

    Example:
        >>> deepspeed = import_deepspeed()  # doctest: +SKIP
    """
    try:
        import deepspeed
    except ImportError as error:
        raise ImportError(
            "DeepSpeedStrategy needs the deepspeed package, which is not installed: "
            f"{DEEPSPEED_EXTRA} (or pip install deepspeed, keeping your torch build pinned)"
        ) from error
    return deepspeed


def read_config(config: str | os.PathLike | Mapping | None) -> dict[str, Any]:
    """``config`` as a new dict: None is empty, a mapping is deep-copied, a path is read as
    JSON (DeepSpeed's config file format)."""
    if config is None:
        return {}
    if isinstance(config, Mapping):
        return copy.deepcopy(dict(config))
    if isinstance(config, (str, os.PathLike)):
        path = os.fspath(config)
        if not os.path.isfile(path):
            raise FileNotFoundError(
                f"DeepSpeedStrategy(config={path!r}): no such file (a DeepSpeed JSON config, "
                "or pass the config as a dict)"
            )
        with open(path, encoding="utf-8") as file:
            try:
                loaded = json.load(file)
            except json.JSONDecodeError as error:
                raise ValueError(
                    f"DeepSpeedStrategy(config={path!r}) is not valid JSON: {error.msg} at line "
                    f"{error.lineno}, column {error.colno}"
                ) from error
        if not isinstance(loaded, dict):
            raise TypeError(
                f"DeepSpeedStrategy(config={path!r}) holds a JSON {type(loaded).__name__}, not "
                "an object of DeepSpeed settings"
            )
        return loaded
    raise TypeError(
        f"DeepSpeedStrategy's config must be a dict, a path to a DeepSpeed JSON file or None, "
        f"got {type(config).__name__}: {config!r}"
    )


def is_deepspeed_checkpointing(spec: Any) -> bool:
    """Whether an ``activation_checkpointing`` argument is DeepSpeed's config section (its
    keys) rather than treadle's selection of modules to checkpoint."""
    if not isinstance(spec, Mapping):
        return False
    keys = set(spec)
    deepspeed_keys = keys & DEEPSPEED_CHECKPOINTING_KEYS
    if deepspeed_keys and keys - DEEPSPEED_CHECKPOINTING_KEYS:
        raise ValueError(
            "activation_checkpointing mixes DeepSpeed's section keys "
            f"({', '.join(sorted(deepspeed_keys))}) with treadle's "
            f"({', '.join(sorted(keys - DEEPSPEED_CHECKPOINTING_KEYS))}): give DeepSpeed's "
            "keys in config['activation_checkpointing'] and the modules to checkpoint here"
        )
    return bool(deepspeed_keys)


def build_config(
    config: str | os.PathLike | Mapping | None = None,
    *,
    steps_per_print: int = QUIET_STEPS_PER_PRINT,
    **sections: Any,
) -> dict[str, Any]:
    """The DeepSpeed config: ``config`` with every section given as a keyword argument (not
    None) set over it, ``gradient_accumulation_steps`` defaulting to 1,
    ``gradient_clipping`` to 0 (off) and ``steps_per_print`` always set; checked with
    :func:`check_config`.

    Example:
        >>> build_config(dict(gradient_clipping=1.0), zero_optimization=dict(stage=2))
        ... # doctest: +NORMALIZE_WHITESPACE
        {'gradient_clipping': 1.0, 'zero_optimization': {'stage': 2},
         'gradient_accumulation_steps': 1, 'steps_per_print': 10000000000000}
    """
    unknown = [name for name in sections if name not in SECTION_ARGUMENTS]
    if unknown:
        raise TypeError(
            f"build_config got unknown sections {unknown}; it takes {SECTION_ARGUMENTS}"
        )
    result = read_config(config)
    for name in SECTION_ARGUMENTS:
        value = sections.get(name)
        if value is not None:
            result[name] = copy.deepcopy(dict(value) if isinstance(value, Mapping) else value)
    result.setdefault("gradient_accumulation_steps", 1)
    # Recent DeepSpeed clips at norm 1.0 unless told otherwise; unclipped unless asked, as an
    # OptimWrapper without clip_grad.
    result.setdefault("gradient_clipping", 0.0)
    result["steps_per_print"] = steps_per_print
    check_config(result)
    return result


def _positive_int(config: Mapping[str, Any], key: str) -> None:
    value = config.get(key)
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"DeepSpeed config {key} must be an int >= 1, got {value!r}")


def _enabled(section: Any) -> bool:
    return isinstance(section, Mapping) and bool(section.get("enabled", False))


def check_config(config: Mapping[str, Any]) -> None:
    """Refuse what DeepSpeed would fail on late or obscurely: a ZeRO stage outside 0-3, fp16
    and bf16 both enabled, batch sizes that are not positive ints."""
    zero = config.get("zero_optimization")
    if zero is not None:
        if not isinstance(zero, Mapping):
            raise TypeError(
                "DeepSpeed config zero_optimization must be a dict (e.g. dict(stage=2)), got "
                f"{type(zero).__name__}: {zero!r}"
            )
        stage = zero.get("stage", 0)
        if stage not in (0, 1, 2, 3):
            raise ValueError(
                f"DeepSpeed config zero_optimization.stage must be 0, 1, 2 or 3, got {stage!r}"
            )
    if _enabled(config.get("fp16")) and _enabled(config.get("bf16")):
        raise ValueError(
            "DeepSpeed config enables both fp16 and bf16: choose one (fp16=dict(enabled=True) "
            "or bf16=dict(enabled=True))"
        )
    for key in (
        "train_batch_size",
        "train_micro_batch_size_per_gpu",
        "gradient_accumulation_steps",
    ):
        _positive_int(config, key)


def zero_stage(config: Mapping[str, Any]) -> int:
    """The ZeRO stage of a DeepSpeed config (0 when ZeRO is off)."""
    zero = config.get("zero_optimization") or {}
    return int(zero.get("stage", 0))


def reconcile_batch_size(
    config: dict[str, Any], loader_batch_size: int | None, world_size: int
) -> None:
    """Make the three batch sizes of ``config`` agree with the run, in place.

    DeepSpeed needs ``train_batch_size == train_micro_batch_size_per_gpu *
    gradient_accumulation_steps * world_size``; the micro batch is what the train dataloader
    gives each process. Missing sizes are filled in from the dataloader; a size the user wrote
    that contradicts the dataloader is an error naming both.

    Example:
        >>> config = dict(gradient_accumulation_steps=2)
        >>> reconcile_batch_size(config, loader_batch_size=4, world_size=2)
        >>> config['train_micro_batch_size_per_gpu'], config['train_batch_size']
        (4, 16)
    """
    accumulation = config.get("gradient_accumulation_steps", 1)
    micro = config.get("train_micro_batch_size_per_gpu")
    if loader_batch_size is not None:
        if micro is not None and micro != loader_batch_size:
            raise ValueError(
                f"DeepSpeed train_micro_batch_size_per_gpu is {micro} but train_dataloader's "
                f"batch_size is {loader_batch_size}: each process trains on one dataloader "
                "batch per step, so remove train_micro_batch_size_per_gpu (it is taken from "
                "the dataloader) or make them equal"
            )
        micro = loader_batch_size
    total = config.get("train_batch_size")
    if micro is None:
        if total is None:
            raise ValueError(
                "DeepSpeed needs a batch size: give the run a train_dataloader with batch_size, "
                "or DeepSpeedStrategy(train_micro_batch_size_per_gpu=N) or "
                "config['train_batch_size']"
            )
        if total % (accumulation * world_size):
            raise ValueError(
                f"DeepSpeed train_batch_size {total} is not divisible by "
                f"gradient_accumulation_steps ({accumulation}) x world size ({world_size})"
            )
        micro = total // (accumulation * world_size)
    expected = micro * accumulation * world_size
    if total is not None and total != expected:
        source = (
            "train_dataloader.batch_size"
            if loader_batch_size is not None
            else ("train_micro_batch_size_per_gpu")
        )
        raise ValueError(
            f"DeepSpeed train_batch_size is {total}, but this run trains on {expected} samples "
            f"per optimizer step: {source} ({micro}) x world size ({world_size}) x "
            f"gradient_accumulation_steps ({accumulation}); remove train_batch_size from the "
            "DeepSpeed config (it is computed) or change the dataloader's batch_size"
        )
    config["train_micro_batch_size_per_gpu"] = micro
    config["train_batch_size"] = expected
