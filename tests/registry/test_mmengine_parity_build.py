"""``build`` and ``build_from_cfg``: cfg and default_args, ``type`` given as a name, a class or a
callable, ``_scope_``, errors from constructors.

Parity with MMEngine 0.10 (see tests/support/registry_parity.py for how scenarios are
written and compared). Runs only where mmengine is installed: ``hatch run mmengine:parity``.
"""

import collections
import functools
import types

import pytest

pytest.importorskip("mmengine.registry")


from registry_parity import (  # in tests/support, on pytest's sys.path
    MM,
    TR,
    MobileNet,
    NeedsDepth,
    Raises,
    ResNet,
    TwoArgError,
    built,
    collectors,
    isolated,  # noqa: F401 (autouse fixture)
    normalize,
    outcome,
    resnet50,
    tree,
)

SCENARIOS, DIFFERENCES, scenario, difference = collectors()


def _build_case(cfg, default_args=None, registry="root"):
    def run(api):
        t = tree(api)
        t.root.register_module(module=resnet50)
        t.root.register_module(module=NeedsDepth)
        t.root.register_module(module=Raises)
        cfg_here = normalize_to(cfg, api)
        before = repr(cfg_here)
        result = outcome(getattr(t, registry).build, cfg_here, default_args=default_args)
        if result[0] == "ok":
            result = ("ok", built(result[1]))
        return result, repr(cfg_here) == before  # the cfg is never changed

    return run


def normalize_to(value, api):
    """The inverse of ``normalize``: ``X_`` in strings made this framework's."""
    if isinstance(value, str):
        return api.s(value)
    if isinstance(value, dict):
        return type(value)((normalize_to(k, api), normalize_to(v, api)) for k, v in value.items())
    return value


BUILD_CASES = {
    "plain": (dict(type="ResNet", depth=18),),
    "default_args_fill_gaps": (dict(type="ResNet", depth=18), dict(depth=1, stages=2)),
    "default_args_give_type": (dict(depth=18), dict(type="ResNet")),
    "cfg_type_wins_over_default": (dict(type="ResNet"), dict(type="NeedsDepth")),
    "function": (dict(type="resnet50", stages=2),),
    "type_class": (dict(type=MobileNet, width=2),),
    "type_function": (dict(type=resnet50),),
    "type_partial": (dict(type=functools.partial(ResNet, depth=1)),),
    "type_lambda": (dict(type=lambda x: [x], x=1),),
    "type_builtin": (dict(type=dict, a=1),),
    "ordered_dict_cfg": (collections.OrderedDict(type="ResNet", depth=3),),
    "import_path": (dict(type="collections.OrderedDict", a=1),),
    "scoped_key": (dict(type="X_det.FasterRCNN", num_classes=3),),
    "scoped_key_from_child": (dict(type="X_cls.MobileNet"), None, "det"),
    "parent_name_from_child": (dict(type="ResNet"), None, "det3d"),
    "scope_key_child": (dict(type="FasterRCNN", _scope_="X_det"),),
    "scope_key_grandchild": (dict(type="CascadeHead", _scope_="X_det3d"),),
    "scope_key_parent_name": (dict(type="ResNet", _scope_="X_det3d"),),
    "scope_key_sibling": (dict(type="MobileNet", _scope_="X_cls"), None, "det"),
    "scope_key_unknown_scope": (dict(type="ResNet", _scope_="X_nowhere"),),
    "scope_key_in_default_args": (dict(type="FasterRCNN"), dict(_scope_="X_det")),
    "scope_key_none": (dict(type="ResNet", _scope_=None),),
    "scope_key_root_from_child": (dict(type="FasterRCNN", _scope_="X_root"), None, "det"),
    # errors
    "unknown_type": (dict(type="Nope"),),
    "unknown_scoped_type": (dict(type="X_nowhere.Nope"),),
    "child_type_from_root": (dict(type="FasterRCNN"),),
    "no_type": (dict(depth=1),),
    "no_type_default_args_without": (dict(depth=1), dict(stages=1)),
    "type_none": (dict(type=None),),
    "type_int": (dict(type=3),),
    "cfg_list": ([("type", "ResNet")],),
    "cfg_none": (None,),
    "cfg_str": ("ResNet",),
    "default_args_list": (dict(type="ResNet"), [("depth", 1)]),
    "unexpected_keyword": (dict(type="ResNet", dept=1),),
    "missing_argument": (dict(type="NeedsDepth"),),
    "constructor_value_error": (dict(type="Raises", error=ValueError("bad")),),
    "constructor_key_error": (dict(type="Raises", error=KeyError("k")),),
    "constructor_runtime_error": (dict(type="Raises", error=RuntimeError("r")),),
    "constructor_os_error": (dict(type="Raises", error=FileNotFoundError(2, "gone")),),
    "constructor_import_error": (dict(type="Raises", error=ImportError("x")),),
    "constructor_assertion": (dict(type="Raises", error=AssertionError()),),
}

for _name, _args in BUILD_CASES.items():
    SCENARIOS[f"build[{_name}]"] = _build_case(*_args)


@scenario
def build_from_cfg_function(api):
    t = tree(api)
    return (
        built(api.build_from_cfg(dict(type="ResNet", depth=2), t.root)),
        built(api.build_from_cfg(dict(type="ResNet"), t.det3d, dict(depth=3))),
        built(api.build_from_cfg(dict(type="FasterRCNN"), t.det, default_args=None)),
    )


@pytest.mark.parametrize("cfg", [dict(type="ResNet"), {}])
def test_build_from_cfg_registry_not_a_registry(cfg):
    assert outcome(TR.build_from_cfg, cfg, "models") == outcome(MM.build_from_cfg, cfg, "models")


@scenario
def build_manager_mixin_class_gives_one_instance(api):
    class Shared(api.ManagerMixin):
        def __init__(self, name="", value=0):
            super().__init__(name)
            self.value = value

    reg = api.Registry("r", scope=api.s("X_a"))
    reg.register_module(module=Shared)
    first = reg.build(dict(type="Shared", name="one", value=1))
    again = reg.build(dict(type="Shared", name="one"))
    other = reg.build(dict(type="Shared", name="two", value=2))
    return first is again, first.value, other.value, Shared.get_current_instance() is other


@scenario
def build_sees_the_scope_inside_constructors(api):
    # A nested build inside a constructor searches the _scope_ of the outer cfg; after the
    # build the default scope is what it was.
    t = tree(api)

    class Backbone:
        def __init__(self):
            self.scope = api.current_scope()

    class DetBackbone(Backbone):
        pass

    class Detector:
        def __init__(self, backbone):
            self.backbone = type(t.root.build(backbone)).__name__
            self.scope = api.current_scope()

    t.root.register_module(name="Backbone", module=Backbone)
    t.det.register_module(name="Backbone", module=DetBackbone)
    t.det.register_module(module=Detector)
    outer = t.root.build(
        dict(type="Detector", _scope_=api.s("X_det"), backbone=dict(type="Backbone"))
    )
    plain = t.root.build(dict(type="Backbone"))
    return outer.backbone, outer.scope, type(plain).__name__, plain.scope, api.current_scope()


@scenario
def build_scope_key_restores_after_error(api):
    t = tree(api)
    api.init_default_scope(api.s("X_cls"))
    result = outcome(t.root.build, dict(type="Nope", _scope_=api.s("X_det")))
    return result, api.current_scope()


@scenario
def build_config_dict(api):
    # MMEngine's own ConfigDict on its side; treadle takes any mapping (treadle.config is not
    # imported here: registry tests may not depend on it).
    from mmengine.config import ConfigDict

    t = tree(api)
    cfg = ConfigDict(type="ResNet", depth=5, _scope_=api.s("X_det"))
    return built(t.root.build(cfg)), dict(cfg)


@difference(mm=("raises", TypeError), tr=("ok", (ResNet, {"depth": 7, "stages": 4})))
def build_any_mapping(api):
    # MMEngine takes dict, ConfigDict and Config only; treadle any Mapping.
    t = tree(api)
    cfg = types.MappingProxyType({"type": "ResNet", "depth": 7})
    return outcome(lambda: built(t.root.build(cfg)))


@difference(mm=("raises", TwoArgError), tr=("raises", RuntimeError))
def build_constructor_error_that_takes_no_message(api):
    # treadle re-raises a constructor's error with the type and registry named in the message,
    # as the same type; a type that cannot be made from one message becomes RuntimeError (the
    # original is its __cause__). MMEngine lets the original through unchanged.
    t = tree(api)
    t.root.register_module(module=Raises)
    return outcome(t.root.build, dict(type="Raises", error=TwoArgError(1, "x")))


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_same_as_mmengine(name):
    run = SCENARIOS[name]
    assert normalize(run(TR), "tr") == normalize(run(MM), "mm")


@pytest.mark.parametrize("name", list(DIFFERENCES))
def test_deliberate_difference(name):
    run, mm_expected, tr_expected = DIFFERENCES[name]
    assert normalize(run(MM), "mm") == mm_expected
    assert normalize(run(TR), "tr") == tr_expected
