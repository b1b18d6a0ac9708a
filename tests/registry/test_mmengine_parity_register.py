"""``register_module``: decorator and call forms, names, force, duplicates, bad arguments.

Parity with MMEngine 0.10 (see tests/support/registry_parity.py for how scenarios are
written and compared). Runs only where mmengine is installed: ``hatch run mmengine:parity``.
"""

import functools

import pytest

pytest.importorskip("mmengine.registry")


from registry_parity import (  # in tests/support, on pytest's sys.path
    MM,
    TR,
    Adder,
    MobileNet,
    ResNet,
    built,
    collectors,
    isolated,  # noqa: F401 (autouse fixture)
    normalize,
    outcome,
    resnet50,
    tree,
)

SCENARIOS, DIFFERENCES, scenario, difference = collectors()


@scenario
def register_as_decorator(api):
    reg = api.Registry("r", scope=api.s("X_a"))
    returned = reg.register_module()(ResNet)
    return returned is ResNet, reg.module_dict


@scenario
def register_as_decorator_with_name(api):
    reg = api.Registry("r", scope=api.s("X_a"))

    @reg.register_module(name="mnet")
    class Net:
        pass

    return list(reg.module_dict), reg.get("mnet") is Net, reg.get("Net")


@scenario
def register_as_call(api):
    reg = api.Registry("r", scope=api.s("X_a"))
    returned = reg.register_module(module=ResNet)
    return returned is ResNet, reg.module_dict


@scenario
def register_list_of_names(api):
    reg = api.Registry("r", scope=api.s("X_a"))
    reg.register_module(name=["resnet50", "r50"], module=resnet50)
    return reg.module_dict, built(reg.build(dict(type="r50", stages=2)))


@scenario
def register_tuple_of_names(api):
    reg = api.Registry("r", scope=api.s("X_a"))
    reg.register_module(name=("a", "b"))(ResNet)
    return reg.module_dict


@scenario
def register_function_and_build_calls_it(api):
    reg = api.Registry("r", scope=api.s("X_a"))
    reg.register_module(module=resnet50)
    return built(reg.build(dict(type="resnet50", stages=1)))


@scenario
def register_callable_object_with_name(api):
    reg = api.Registry("r", scope=api.s("X_a"))
    adder = Adder()
    reg.register_module(name="add", module=adder)
    return reg.get("add") is adder, reg.build(dict(type="add", a=2))


@scenario
def register_force_replaces(api):
    reg = api.Registry("r", scope=api.s("X_a"))
    reg.register_module(name="Net", module=ResNet)
    reg.register_module(name="Net", module=MobileNet, force=True)
    return reg.module_dict


@scenario
def register_duplicate_raises(api):
    reg = api.Registry("r", scope=api.s("X_a"))
    reg.register_module(module=ResNet)
    first = outcome(reg.register_module, module=ResNet)
    second = outcome(reg.register_module(), ResNet)
    return first, second, reg.module_dict


@scenario
def register_duplicate_in_parent_is_fine(api):
    t = tree(api)
    t.det.register_module(module=ResNet)
    return t.det.module_dict


@scenario
def register_same_name_twice_in_one_list_raises(api):
    reg = api.Registry("r", scope=api.s("X_a"))
    return outcome(reg.register_module, name=["a", "a"], module=ResNet)


@scenario
def register_force_not_bool(api):
    reg = api.Registry("r", scope=api.s("X_a"))
    return outcome(reg.register_module, force=1, module=ResNet), reg.module_dict


@pytest.mark.parametrize("name", [1, ["a", 1], 1.5])
def test_register_bad_name_type(name):
    for api in (MM, TR):
        reg = api.Registry("r", scope=api.s("X_a"))
        assert outcome(reg.register_module, name=name, module=ResNet) == ("raises", TypeError)


@scenario
def register_not_callable(api):
    reg = api.Registry("r", scope=api.s("X_a"))
    return (
        outcome(reg.register_module, name="x", module=5),
        outcome(reg.register_module(name="x"), "text"),
        reg.module_dict,
    )


@scenario
def register_in_two_registries(api):
    a = api.Registry("a", scope=api.s("X_a"))
    b = api.Registry("b", scope=api.s("X_b"))
    a.register_module(module=ResNet)
    b.register_module(module=ResNet)
    return a.get("ResNet") is b.get("ResNet") is ResNet


@difference(mm=(("raises", KeyError), ["ResNet", "new"]), tr=(("raises", KeyError), ["ResNet"]))
def register_list_with_taken_name_is_atomic(api):
    # MMEngine registers the names before the taken one, then raises; treadle checks every name
    # first, so a failed call leaves the registry as it was.
    reg = api.Registry("r", scope=api.s("X_a"))
    reg.register_module(module=ResNet)
    result = outcome(reg.register_module, name=["new", "ResNet"], module=MobileNet)
    return result, list(reg.module_dict)


@difference(mm=("raises", TypeError), tr=("ok", ["a"]))
def register_set_of_names(api):
    # MMEngine wants a Sequence of names; treadle takes any iterable of str.
    reg = api.Registry("r", scope=api.s("X_a"))
    return outcome(lambda: (reg.register_module(name={"a"}, module=ResNet), list(reg))[1])


@difference(mm=("raises", AttributeError), tr=("raises", TypeError))
def register_object_without_name(api):
    # A callable without __name__ and no name=: MMEngine fails reading module.__name__;
    # treadle raises TypeError saying to pass name=.
    reg = api.Registry("r", scope=api.s("X_a"))
    return outcome(reg.register_module, module=functools.partial(resnet50, stages=2))


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_same_as_mmengine(name):
    run = SCENARIOS[name]
    assert normalize(run(TR), "tr") == normalize(run(MM), "mm")


@pytest.mark.parametrize("name", list(DIFFERENCES))
def test_deliberate_difference(name):
    run, mm_expected, tr_expected = DIFFERENCES[name]
    assert normalize(run(MM), "mm") == mm_expected
    assert normalize(run(TR), "tr") == tr_expected
