"""Why treadle leaves out each MMEngine 0.10.7 name it does not provide (the coverage table,
docs/compat/coverage.md, lists them with these reasons; tools/compat_coverage.py fails on a
missing name without one)."""

from __future__ import annotations

_COLOSSALAI_REGISTRIES = (
    "MMEngine's ColossalAI-only registries; treadle's ColossalAIStrategy takes the plugin and "
    "mixed precision by name or as a dict (type=...) and builds them itself"
)
_VISUALIZE = (
    "the helpers of MMEngine's scheduler-preview script (a fake run with a toy model); treadle "
    "has no such script"
)
_MULTIPROCESS = (
    "PyTorch's own torch.testing._internal.common_distributed class is given here, but it needs "
    "the test-only package expecttest, not installed"
)

#: reason by ``(module, name)``; ``(module, '*')`` for every missing name of a module.
REASONS: dict[tuple[str, str], str] = {
    ("mmengine._strategy.colossalai", "*"): _COLOSSALAI_REGISTRIES,
    ("mmengine._strategy.fsdp", "FSDP_CONFIGS"): (
        "MMEngine's registry of FSDP state-dict config classes; treadle's FSDPStrategy takes "
        "state_dict_cfg as 'local' / 'full' or the torch config objects themselves"
    ),
    ("mmengine.runner.activation_checkpointing", "wrap_forward"): (
        "an internal of MMEngine's turn_on_activation_checkpointing, which treadle provides"
    ),
    ("mmengine.runner.checkpoint", "ENV_MMENGINE_HOME"): (
        "treadle's model-zoo cache reads TREADLE_HOME (ENV_TREADLE_HOME), not MMENGINE_HOME"
    ),
    ("mmengine.testing._internal", "*"): _MULTIPROCESS,
    ("mmengine.testing._internal.distributed", "*"): _MULTIPROCESS,
    ("mmengine.utils.dl_utils.visualize", "*"): _VISUALIZE,
    ("mmengine.utils.package_utils", "package2module"): (
        "an internal of MMEngine's get_installed_path, which treadle provides"
    ),
    ("mmengine.utils.path", "find_vcs_root"): (
        "unused by MMEngine and the toolboxes; not implemented in treadle"
    ),
    ("mmengine.utils.progressbar", "init_pool"): (
        "an internal of MMEngine's track_parallel_progress, which treadle provides"
    ),
}

#: reason by name, at any path.
REASONS_BY_NAME: dict[str, str] = {}


def reason_for(module: str, name: str) -> str | None:
    """Why ``module.name`` is missing, or None when no reason is written down.

    Example:
        >>> reason_for('mmengine.utils.path', 'find_vcs_root').startswith('unused')
        True
    """
    return REASONS.get((module, name)) or REASONS.get((module, "*")) or REASONS_BY_NAME.get(name)
