"""is_method_overridden, has_method, apply_to, get_object_from_string and the re-exported
import_modules_from_strings."""

from __future__ import annotations

import json
import os.path
from collections import OrderedDict, namedtuple

import pytest

from treadle.runner.utils import (
    apply_to,
    get_object_from_string,
    has_method,
    import_modules_from_strings,
    is_method_overridden,
)

Pair = namedtuple("Pair", ["left", "right"])


class Base:
    def run(self):
        return "base"


class Overrides(Base):
    def run(self):
        return "mine"


class Inherits(Base):
    pass


def test_is_method_overridden_with_classes_and_instances():
    assert is_method_overridden("run", Base, Overrides)
    assert is_method_overridden("run", Base, Overrides())
    assert not is_method_overridden("run", Base, Inherits)
    assert not is_method_overridden("run", Base, Base())


def test_is_method_overridden_errors():
    with pytest.raises(TypeError, match="base_class must be a class, got an instance of Base"):
        is_method_overridden("run", Base(), Overrides)
    # Also the AssertionError MMEngine raises there, the derived class an instance or not.
    with pytest.raises(AssertionError, match="got an instance of Base"):
        is_method_overridden("run", Base(), Overrides())
    with pytest.raises(AttributeError, match="Base has no method 'walk'"):
        is_method_overridden("walk", Base, Overrides)


def test_has_method():
    assert has_method(Base(), "run")
    assert not has_method(Base(), "walk")

    class WithData:
        value = 3

    assert not has_method(WithData(), "value")  # an attribute that is not callable


def test_apply_to_rebuilds_containers_with_their_types():
    data = OrderedDict(a=[1, "x", (2, 3)], b={"c": 4.0}, d=Pair(5, [6]))
    result = apply_to(data, lambda x: isinstance(x, int), lambda x: x * 10)
    assert result == OrderedDict(a=[10, "x", (20, 30)], b={"c": 4.0}, d=Pair(50, [60]))
    assert type(result) is OrderedDict and type(result["d"]) is Pair
    assert data["a"] == [1, "x", (2, 3)]  # the input is left as it was


def test_apply_to_leaves_and_unmatched_values():
    assert apply_to(3, lambda x: isinstance(x, int), lambda x: x + 1) == 4
    assert apply_to("ab", lambda x: isinstance(x, str), lambda x: x + "!") == "ab!"
    assert apply_to({1, 2}, lambda x: isinstance(x, int), lambda x: x + 1) == {1, 2}
    # containers are walked into, never given to apply_func themselves
    assert apply_to([1, [2]], lambda x: isinstance(x, list), len) == [1, [2]]


def test_get_object_from_string():
    assert get_object_from_string("os.path.join") is os.path.join
    assert get_object_from_string("os.path") is os.path
    assert get_object_from_string("collections.OrderedDict.fromkeys") == OrderedDict.fromkeys
    assert get_object_from_string("no_such_module_xyz.thing") is None
    assert get_object_from_string("os.no_such_attribute") is None


def test_get_object_from_string_refuses_an_empty_name():
    with pytest.raises(ValueError, match="get_object_from_string needs a dotted name, got ''"):
        get_object_from_string("")


def test_import_modules_from_strings():
    assert import_modules_from_strings(["os.path", "json"]) == [os.path, json]
    assert import_modules_from_strings("json") is json
    assert import_modules_from_strings(None) is None


def test_import_modules_from_strings_errors():
    with pytest.raises(ImportError, match="cannot import 'no_such_module_xyz'"):
        import_modules_from_strings("no_such_module_xyz")
    with pytest.raises(TypeError, match="must be a str or a list of str, got 3"):
        import_modules_from_strings(3)
    with pytest.warns(UserWarning, match="no_such_module_xyz failed to import and is ignored"):
        assert import_modules_from_strings(
            ["no_such_module_xyz", "json"], allow_failed_imports=True
        ) == [None, json]
