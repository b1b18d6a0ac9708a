"""register_module: as a decorator and as a call, under one name or several, and force."""

import functools

import pytest

from treadle.registry import Registry


@pytest.fixture
def models():
    return Registry("models", scope="treadle")


def test_decorator_registers_under_the_class_name(models):
    @models.register_module()
    class ResNet:
        pass

    assert models.get("ResNet") is ResNet
    assert models.module_dict == {"ResNet": ResNet}


def test_decorator_returns_the_object_unchanged(models):
    def make():
        return 1

    assert models.register_module()(make) is make
    assert models.get("make")() == 1


def test_call_with_module(models):
    class ResNet:
        pass

    assert models.register_module(module=ResNet) is ResNet
    assert models.register_module(name="resnet_alias", module=ResNet) is ResNet
    assert models.get("resnet_alias") is ResNet


def test_a_list_of_names(models):
    @models.register_module(name=["mnet", "MobileNet"])
    class MobileNet:
        pass

    assert models.get("mnet") is models.get("MobileNet") is MobileNet
    assert len(models) == 2


def test_a_tuple_of_names(models):
    models.register_module(name=("a", "b"), module=dict)
    assert sorted(models) == ["a", "b"]


def test_force_replaces(models):
    @models.register_module()
    class Head:
        pass

    @models.register_module(name="Head", force=True)
    class NewHead:
        pass

    assert models.get("Head") is NewHead


def test_registering_a_name_twice_names_the_existing_object_and_its_module(models):
    @models.register_module()
    class Head:
        pass

    class Other:
        pass

    with pytest.raises(
        KeyError,
        # "NAME is already registered in REGISTRY at MODULE": MMEngine's phrase.
        match=r"Head is already registered in models at .*test_register \(as "
        r"test_registering.*\.Head, scope 'treadle'\); pass force=True",
    ) as caught:
        models.register_module(name="Head", module=Other)
    assert "test_registering_a_name_twice" in str(caught.value)
    assert models.get("Head") is Head


def test_a_failed_list_registration_registers_none_of_the_names(models):
    models.register_module(name="b", module=dict)
    with pytest.raises(KeyError, match="b is already registered in models at builtins"):
        models.register_module(name=["a", "b"], module=list)
    assert list(models) == ["b"]


def test_a_name_repeated_in_one_list(models):
    with pytest.raises(KeyError, match=r"the names \['a', 'b', 'a'\] to register .* repeat 'a'"):
        models.register_module(name=["a", "b", "a"], module=list)
    assert list(models) == []
    models.register_module(name=["a", "a"], module=list, force=True)
    assert list(models) == ["a"]


def test_partial_needs_a_name(models):
    def parse(text, base=10):
        return int(text, base)

    part = functools.partial(parse, base=2)
    with pytest.raises(TypeError, match=r"has no __name__.*pass name="):
        models.register_module(module=part)
    models.register_module(name="binary", module=part)
    assert models.build({"type": "binary", "text": "101"}) == 5


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        # MMEngine's phrases, which its users' tests match, and the value given.
        ({"force": 1}, r"in 'models': force must be a boolean, but got <class 'int'>: 1"),
        (
            {"name": 3},
            r"name must be None, an instance of str, or a sequence of str, but got "
            r"<class 'int'>: 3",
        ),
        ({"name": ["ok", 4]}, r"a sequence of str, but got <class 'list'>: \['ok', 4\]"),
    ],
)
def test_bad_arguments(models, kwargs, message):
    with pytest.raises(TypeError, match=message):
        models.register_module(**kwargs)


def test_only_callables_can_be_registered(models):
    with pytest.raises(
        TypeError,
        match=r"only classes and functions can be registered in 'models': module must be "
        r"Callable, but got <class 'int'>: 3",
    ):
        models.register_module(name="three", module=3)
    with pytest.raises(TypeError, match="only classes and functions"):
        models.register_module()("not callable")
    assert len(models) == 0
