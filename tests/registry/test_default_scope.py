"""DefaultScope, init_default_scope, `_scope_` and switch_scope_and_registry."""

import logging

import pytest

from treadle.logging import Logger
from treadle.registry import DefaultScope, Registry, init_default_scope


def test_no_default_scope_gives_none():
    assert DefaultScope.get_current_instance() is None


def test_the_newest_instance_is_current():
    DefaultScope.get_instance("a", scope_name="mydet")
    DefaultScope.get_instance("b", scope_name="mycls")
    assert DefaultScope.get_current_instance().scope_name == "mycls"
    assert DefaultScope.get_instance("a").scope_name == "mydet"


def test_scope_name_must_be_a_str():
    with pytest.raises(TypeError, match="scope_name must be a str, got int: 3"):
        DefaultScope.get_instance("bad", scope_name=3)


def test_overwrite_default_scope_restores_the_instances():
    DefaultScope.get_instance("task", scope_name="mydet")
    with DefaultScope.overwrite_default_scope("mycls"):
        assert DefaultScope.get_current_instance().scope_name == "mycls"
        with DefaultScope.overwrite_default_scope("mydet3d"):
            assert DefaultScope.get_current_instance().scope_name == "mydet3d"
        assert DefaultScope.get_current_instance().scope_name == "mycls"
        DefaultScope.get_instance("inner", scope_name="other")
    assert DefaultScope.get_current_instance().scope_name == "mydet"
    assert list(DefaultScope._instance_dict) == ["task"]
    with DefaultScope.overwrite_default_scope(None):
        assert DefaultScope.get_current_instance().scope_name == "mydet"


def test_overwrite_default_scope_restores_after_an_error():
    with pytest.raises(RuntimeError, match="boom"), DefaultScope.overwrite_default_scope("mycls"):
        raise RuntimeError("boom")
    assert DefaultScope.get_current_instance() is None


def test_init_default_scope():
    init_default_scope("mydet")
    assert DefaultScope.get_current_instance().scope_name == "mydet"
    init_default_scope("mydet")  # already current: nothing changes
    assert list(DefaultScope._instance_dict) == ["mydet"]
    init_default_scope("mycls")
    assert DefaultScope.get_current_instance().scope_name == "mycls"


def test_init_default_scope_warns_when_it_takes_the_default_back(capsys):
    init_default_scope("mydet")
    init_default_scope("mycls")
    init_default_scope("mydet")
    assert DefaultScope.get_current_instance().scope_name == "mydet"
    assert "the current default scope is 'mycls', not 'mydet'" in capsys.readouterr().out


def test_build_searches_the_registry_of_the_default_scope(tree):
    root = tree.root
    cls = tree.cls
    assert root.get("FasterRCNN") is None
    init_default_scope("mydet")
    assert type(root.build({"type": "FasterRCNN"})).__name__ == "FasterRCNN"
    assert root.build({"type": "ResNet", "depth": 18}).depth == 18  # through the parents
    init_default_scope("mydet3d")
    assert cls.build({"type": "CascadeHead"}).stages == 3
    assert cls.build({"type": "FasterRCNN"}).num_classes == 80


def test_scope_key_switches_the_default_scope_while_building(tree):
    root = tree.root
    det = tree.det
    cls = tree.cls
    seen = []

    @det.register_module()
    def probe():
        seen.append(DefaultScope.get_current_instance().scope_name)
        return root.build({"type": "FasterRCNN"})  # a nested build sees the switched scope

    init_default_scope("mycls")
    model = cls.build({"type": "probe", "_scope_": "mydet"})
    assert type(model).__name__ == "FasterRCNN"
    assert seen == ["mydet"]
    assert DefaultScope.get_current_instance().scope_name == "mycls"
    model = root.build({"type": "MobileNet", "width": 0.5, "_scope_": "mycls"})
    assert model.width == 0.5


def test_switch_scope_and_registry(tree):
    root = tree.root
    cls = tree.cls
    det3d = tree.det3d
    init_default_scope("mycls")
    with root.switch_scope_and_registry("mydet3d") as registry:
        assert registry is det3d
        assert DefaultScope.get_current_instance().scope_name == "mydet3d"
        with det3d.switch_scope_and_registry("mycls") as inner:
            assert inner is cls
        with det3d.switch_scope_and_registry(None) as same:
            assert same is det3d
    assert DefaultScope.get_current_instance().scope_name == "mycls"
    with cls.switch_scope_and_registry(None) as registry:
        assert registry is cls


def test_switch_without_any_default_scope_gives_the_registry_itself(tree):
    with tree.det.switch_scope_and_registry(None) as registry:
        assert registry is tree.det


def test_a_default_scope_missing_from_the_tree_warns_once_and_uses_the_registry(tree):
    root = tree.root
    Logger.get_instance("test", log_level="WARNING")
    init_default_scope("absent_scope_xyz")
    records = []

    class Collect(logging.Handler):
        def emit(self, record):
            records.append(record.getMessage())

    Logger.get_current_instance().addHandler(Collect())
    assert root.build({"type": "ResNet"}).depth == 50
    assert root.build({"type": "ResNet"}).depth == 50
    with root.switch_scope_and_registry("absent_scope_xyz") as registry:
        assert registry is root
    assert len(records) == 1
    assert (
        "the default scope is 'absent_scope_xyz', but the tree of the 'models' registry has no "
        "registry of that scope; the 'models' registry (scope 'treadle') is used instead"
    ) in records[0]


def test_a_registry_found_later_is_used(tree):
    root = tree.root
    init_default_scope("late")
    with pytest.raises(KeyError, match="Late is not in the treadle::models registry"):
        root.build({"type": "Late"})  # remembered: the scope 'late' is nowhere
    late = Registry("late models", parent=root, scope="late")
    late.register_module(name="Late", module=dict)
    assert root.build({"type": "Late", "a": 1}) == {"a": 1}
