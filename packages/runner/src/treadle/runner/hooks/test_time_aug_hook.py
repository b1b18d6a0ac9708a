"""``PrepareTTAHook``: wraps the model in a test-time-augmentation model before testing."""

from __future__ import annotations

import copy
from typing import Any

from ..registry import HOOKS, MODELS, RUNNERS
from .hook import Hook


@HOOKS.register_module()
class PrepareTTAHook(Hook):
    """Before testing, builds ``tta_cfg`` (a ``BaseTTAModel`` config) around ``runner.model``
    and makes it the runner's model, so ``test_step`` merges the predictions of the augmented
    views. ``build_runner_with_tta`` registers it for you.

    Args:
        tta_cfg: the TTA model's config; its ``module`` is set to the runner's model.

    Example:
        >>> hook = PrepareTTAHook(tta_cfg=dict(type='MyTTAModel'))
    """

    def __init__(self, tta_cfg: dict) -> None:
        if not isinstance(tta_cfg, dict):
            raise TypeError(
                f"PrepareTTAHook: tta_cfg must be a dict (the TTA model's config), "
                f"got {type(tta_cfg).__name__}"
            )
        self.tta_cfg = tta_cfg

    def before_test(self, runner: Any) -> None:
        # A copy: the user's config keeps no reference to the model, and a second test()
        # wraps the original model again rather than the TTA model.
        cfg = copy.copy(self.tta_cfg)
        cfg["module"] = runner.model
        runner.model = MODELS.build(cfg)


def build_runner_with_tta(cfg: Any) -> Any:
    """A runner from ``cfg`` that tests with test-time augmentation: the test set's pipeline is
    replaced by ``cfg.tta_pipeline`` and the model is wrapped by ``cfg.tta_model`` before
    testing. ``cfg.runner_type`` picks the runner class as in ``Runner.from_cfg``.

    Example:
        >>> runner = build_runner_with_tta(Config.fromfile('config.py'))  # doctest: +SKIP
        >>> runner.test()  # doctest: +SKIP
    """
    missing = [key for key in ("tta_model", "tta_pipeline") if key not in cfg]
    if missing:
        raise KeyError(
            f"build_runner_with_tta: the config has no {' and no '.join(missing)}; "
            f"define tta_model (the TTA model) and tta_pipeline (the augmented test pipeline)"
        )
    cfg = copy.deepcopy(cfg)
    cfg["test_dataloader"]["dataset"]["pipeline"] = cfg["tta_pipeline"]
    # RUNNERS builds `runner_type` ('Runner' when absent) through its from_cfg: hooks never
    # import the runner module itself.
    runner = RUNNERS.build(cfg)
    runner.register_hook(PrepareTTAHook(tta_cfg=cfg["tta_model"]))
    return runner
