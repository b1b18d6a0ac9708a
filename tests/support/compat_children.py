"""A function a spawned child runs (it must be importable there by module and name)."""


def config_class_of_mmengine() -> str:
    from mmengine.config import Config

    return Config.__module__
