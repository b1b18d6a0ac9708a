"""register_all_modules, as OpenMMLab packages have it (treadle.runner.hub calls it)."""

from treadle.registry import init_default_scope as _init_default_scope

REGISTERED = []


def register_all_modules(init_default_scope: bool = True) -> None:
    import treadle_toy_zoo.inferencer
    import treadle_toy_zoo.models  # noqa: F401

    REGISTERED.append(init_default_scope)
    if init_default_scope:
        _init_default_scope("treadle_toy_zoo")
