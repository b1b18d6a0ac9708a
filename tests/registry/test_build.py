"""build_from_cfg: the cfg, default_args, the kinds of 'type', and ManagerMixin classes."""

import collections
import functools
import types

import pytest

from treadle.logging import ManagerMixin
from treadle.registry import Registry, build_from_cfg


@pytest.fixture
def models():
    registry = Registry("models", scope="treadle")

    @registry.register_module()
    class ResNet:
        def __init__(self, depth, stages=4):
            self.depth = depth
            self.stages = stages

    @registry.register_module()
    def resnet50(stages=4):
        return ResNet(50, stages)

    return registry


def test_builds_a_registered_class(models):
    model = build_from_cfg({"type": "ResNet", "depth": 18}, models)
    assert type(model) is models.get("ResNet")
    assert (model.depth, model.stages) == (18, 4)


def test_calls_a_registered_function(models):
    model = build_from_cfg({"type": "resnet50", "stages": 2}, models)
    assert (model.depth, model.stages) == (50, 2)


def test_type_can_be_a_class_or_any_callable(models):
    assert build_from_cfg({"type": collections.Counter, "a": 1}, models) == {"a": 1}

    def parse(text, base=10):
        return int(text, base)

    assert build_from_cfg({"type": functools.partial(parse, base=2)}, models, {"text": "11"}) == 3


def test_default_args_fill_missing_keys_only(models):
    model = build_from_cfg({"type": "ResNet", "depth": 18}, models, {"depth": 50, "stages": 1})
    assert (model.depth, model.stages) == (18, 1)
    model = build_from_cfg({"depth": 34}, models, {"type": "ResNet"})
    assert model.depth == 34


def test_any_mapping_is_a_cfg(models):
    cfg = types.MappingProxyType({"type": "ResNet", "depth": 101})
    assert build_from_cfg(cfg, models).depth == 101

    class ConfigLike(collections.UserDict):
        pass

    assert models.build(ConfigLike(type="ResNet", depth=152)).depth == 152


def test_the_cfg_is_not_changed(models):
    cfg = {"type": "ResNet", "depth": 18, "_scope_": "treadle"}
    default_args = {"stages": 2}
    models.build(cfg, default_args=default_args)
    assert cfg == {"type": "ResNet", "depth": 18, "_scope_": "treadle"}
    assert default_args == {"stages": 2}


def test_manager_mixin_classes_are_built_with_get_instance(models):
    @models.register_module()
    class Tracker(ManagerMixin):
        def __init__(self, name, size=1):
            super().__init__(name)
            self.size = size

    try:
        first = models.build({"type": "Tracker", "name": "run", "size": 3})
        again = models.build({"type": "Tracker", "name": "run"})
        assert again is first and first.size == 3
        assert Tracker.get_current_instance() is first
    finally:
        Tracker._instance_dict.clear()


def test_cfg_must_be_a_mapping(models):
    # With MMEngine's phrase, which its users' tests match.
    with pytest.raises(
        TypeError,
        match=r"cfg should be a dict, ConfigDict or Config, but got <class 'list'>: "
        r"\['ResNet'\]; a cfg is a mapping",
    ):
        build_from_cfg(["ResNet"], models)


class ConfigLike:
    """A mapping by protocol only, as treadle.config's Config is (no Mapping subclass)."""

    def __init__(self, values):
        self._values = dict(values)

    def keys(self):
        return self._values.keys()

    def items(self):
        return self._values.items()

    def __getitem__(self, key):
        return self._values[key]

    def __contains__(self, key):
        return key in self._values

    def __iter__(self):
        return iter(self._values)


def test_a_mapping_by_protocol_is_a_cfg(models):
    # MMEngine builds from a whole Config too; cfg and default_args may be one.
    model = build_from_cfg(ConfigLike({"type": "ResNet"}), models, ConfigLike({"depth": 18}))
    assert model.depth == 18
    assert models.build(ConfigLike({"type": "ResNet", "depth": 50})).depth == 50
    model = build_from_cfg(ConfigLike({"depth": 34}), models, ConfigLike({"type": "ResNet"}))
    assert model.depth == 34


def test_cfg_without_type_shows_the_cfg(models):
    with pytest.raises(
        KeyError,
        match=r"'models' registry needs the key 'type'.*cfg=\{'depth': 18\} and "
        r"default_args=None",
    ):
        build_from_cfg({"depth": 18}, models)
    with pytest.raises(KeyError, match=r"default_args=\{'stages': 2\}"):
        build_from_cfg({"depth": 18}, models, {"stages": 2})


def test_registry_must_be_a_registry():
    with pytest.raises(
        TypeError,
        match=r"registry must be a mmengine\.Registry object, but got <class 'dict'>: .*pass a "
        r"treadle\.registry\.Registry",
    ):
        build_from_cfg({"type": "ResNet"}, {"ResNet": object})


def test_a_cfg_without_type_is_reported_before_a_wrong_registry():
    # MMEngine's order of checks.
    with pytest.raises(KeyError, match=r"a cfg built by a registry needs the key 'type'"):
        build_from_cfg({}, {"ResNet": object})
    with pytest.raises(KeyError, match=r"needs the key 'type'.*default_args=\[\('type', 1\)\]"):
        build_from_cfg({}, {"ResNet": object}, [("type", 1)])


def test_default_args_must_be_a_mapping(models):
    with pytest.raises(
        TypeError,
        match=r"default_args should be a dict, ConfigDict, Config or None, but got <class 'list'>",
    ):
        build_from_cfg({"type": "ResNet"}, models, [("depth", 1)])


def test_type_must_be_a_name_or_a_callable(models):
    with pytest.raises(
        TypeError,
        match=r"'type' of a cfg must be a registered name, a class or a callable: type must be a "
        r"str or valid type, but got <class 'int'>: 3",
    ):
        build_from_cfg({"type": 3}, models)
