"""SCOPE_ALIASES: a scope no registry has can stand for another (treadle.compat maps MMEngine's
root scope 'mmengine' to treadle's while it is installed)."""

import pytest

from treadle.registry import DefaultScope, Registry
from treadle.registry.registry import SCOPE_ALIASES


@pytest.fixture
def alias_other_engine(monkeypatch):
    monkeypatch.setitem(SCOPE_ALIASES, "otherengine", "aliasroot")


def make_tree():
    root = Registry("model", scope="aliasroot")
    root.register_module(module=dict, name="Dict")
    child = Registry("model", parent=root, scope="aliaschild")
    return root, child


def test_scoped_key_and_default_scope_follow_the_alias(alias_other_engine):
    root, child = make_tree()
    assert child.get("otherengine.Dict") is dict
    assert child.build(dict(type="otherengine.Dict", a=1)) == {"a": 1}
    DefaultScope.get_instance("alias-test", scope_name="otherengine")
    with child.switch_scope_and_registry("otherengine") as registry:
        assert registry is root


def test_a_registry_of_the_aliased_scope_wins(alias_other_engine):
    root, child = make_tree()
    own = Registry("model", parent=root, scope="otherengine")
    own.register_module(module=list, name="Dict")
    assert child.get("otherengine.Dict") is list


def test_without_the_alias_the_scope_is_unknown():
    _, child = make_tree()
    assert child.get("otherengine.Dict") is None
    with pytest.raises(KeyError, match="No registry of scope 'otherengine'"):
        child.build(dict(type="otherengine.Dict"))
