"""The ``Registry`` object: ``len``, ``in``, iteration, properties, ``split_scope_key``,
custom build functions, scope inference and the constructor's arguments.

Parity with MMEngine 0.10 (see tests/support/registry_parity.py for how scenarios are
written and compared). Runs only where mmengine is installed: ``hatch run mmengine:parity``.
"""

import importlib
import importlib.util

import pytest

pytest.importorskip("mmengine.registry")


from registry_parity import (  # in tests/support, on pytest's sys.path
    MM,
    TR,
    ResNet,
    collectors,
    isolated,  # noqa: F401 (autouse fixture)
    normalize,
    outcome,
    resnet50,
    tree,
)

from treadle.registry.errors import RegistryArgumentError

SCENARIOS, DIFFERENCES, scenario, difference = collectors()


@scenario
def len_and_in(api):
    t = tree(api)
    return (
        len(t.root),
        len(t.det),
        "ResNet" in t.root,
        "ResNet" in t.det,  # found in the parent
        "FasterRCNN" in t.root,
        api.s("X_det.FasterRCNN") in t.root,
        "collections.OrderedDict" in t.root,
        "Nope" in t.root,
    )


@difference(mm=("raises", TypeError), tr=("ok", ["FasterRCNN", "ResNet2"]))
def iteration(api):
    # MMEngine's Registry is not iterable; treadle iterates over its own names like a dict.
    t = tree(api)
    t.det.register_module(name="ResNet2", module=ResNet)
    return outcome(list, t.det)


@scenario
def properties(api):
    t = tree(api)
    return (
        t.det.name,
        t.det.scope,
        t.det.parent is t.root,
        t.root.parent,
        t.det3d.root is t.root,
        t.root.root is t.root,
        list(t.root.children),
        t.root.children[api.s("X_det")] is t.det,
        type(t.det.module_dict),
        t.root.build_func is api.build_from_cfg,
        t.det3d.build_func is api.build_from_cfg,
    )


@scenario
def repr_names_every_module(api):
    t = tree(api)
    t.root.register_module(name="r50", module=resnet50)
    text = repr(t.root)
    return all(name in text for name in ("ResNet", "r50")), "FasterRCNN" in text


@pytest.mark.parametrize("key", ["a.b.c", "abc", "", ".x", "x.", "mydet.ResNet"])
def test_split_scope_key(key):
    assert MM.Registry.split_scope_key(key) == TR.Registry.split_scope_key(key)


@scenario
def custom_build_func_is_inherited(api):
    calls = []

    def build(cfg, *args, registry, **kwargs):
        calls.append((dict(cfg), args, kwargs, registry.name))
        return "built"

    root = api.Registry("root", build_func=build, scope=api.s("X_root"))
    child = api.Registry("child", parent=root, scope=api.s("X_child"))
    own = api.Registry("own", parent=root, scope=api.s("X_own"), build_func=lambda cfg, registry: 1)
    results = (root.build(dict(type="A")), child.build(dict(type="B"), 1, x=2), own.build({}))
    return results, calls, child.build_func is build


# -- scope inference --------------------------------------------------------------------------


@scenario
def scope_inferred_from_creating_package(api):
    api.package(
        {
            "X_proj/__init__.py": "",
            "X_proj/models/__init__.py": "",
            "X_proj/models/registry.py": """
                from REGISTRY_MODULE import Registry
                MODELS = Registry('models')
            """,
        }
    )
    module = importlib.import_module(api.s("X_proj.models.registry"))
    return module.MODELS.scope


@scenario
def scope_inferred_in_test_module(api):
    return api.Registry("r").scope == __name__.partition(".")[0]


@scenario
def scope_inferred_in_subclass_init_called_by_creator(api):
    # A subclass whose __init__ asks infer_scope() itself: the package creating the instance.
    api.package(
        {
            "X_sub.py": """
                from REGISTRY_MODULE import Registry
                class MyRegistry(Registry):
                    def __init__(self, name):
                        super().__init__(name, scope=self.infer_scope())
            """,
            "X_user.py": """
                import X_sub
                REG = X_sub.MyRegistry('models')
            """,
        }
    )
    return importlib.import_module(api.s("X_user")).REG.scope


@difference(mm="X_base", tr="X_maker")
def scope_inferred_for_subclass_instance(api):
    # A Registry subclass defined in one package and created in another: MMEngine's frame
    # count lands in the subclass's __init__ (its package); treadle skips Registry __init__
    # frames and infers the package that creates the registry, as documented for both.
    api.package(
        {
            "X_base.py": """
                from REGISTRY_MODULE import Registry
                class MyRegistry(Registry):
                    def __init__(self, name, **kwargs):
                        super().__init__(name, **kwargs)
            """,
            "X_maker.py": """
                import X_base
                REG = X_base.MyRegistry('models')
            """,
        }
    )
    return importlib.import_module(api.s("X_maker")).REG.scope


# -- Registry() arguments ---------------------------------------------------------------------


@difference(mm=("raises", AssertionError), tr=("raises", RegistryArgumentError))
def registry_scope_not_str(api):
    # treadle raises a TypeError with a message that is also MMEngine's AssertionError.
    return outcome(api.Registry, "r", scope=1)


@difference(mm=("raises", AssertionError), tr=("raises", RegistryArgumentError))
def registry_parent_not_registry(api):
    return outcome(api.Registry, "r", scope=api.s("X_a"), parent="models")


@difference(mm=("raises", AssertionError), tr=("raises", ValueError))
def registry_scope_extends_parent_twice(api):
    root = api.Registry("r", scope=api.s("X_root"))
    api.Registry("a", parent=root, scope=api.s("X_det"))
    return outcome(api.Registry, "b", parent=root, scope=api.s("X_det"))


@difference(mm=("ok", "X_a.b"), tr=("raises", ValueError))
def registry_scope_with_dot(api):
    # 'a.b' could never be reached by a 'scope.Name' key (the key splits at the first dot).
    return outcome(lambda: api.Registry("r", scope=api.s("X_a.b")).scope)


@difference(mm=("ok", 1), tr=("raises", TypeError))
def registry_name_not_str(api):
    return outcome(lambda: api.Registry(1, scope=api.s("X_a")).name)


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_same_as_mmengine(name):
    run = SCENARIOS[name]
    assert normalize(run(TR), "tr") == normalize(run(MM), "mm")


@pytest.mark.parametrize("name", list(DIFFERENCES))
def test_deliberate_difference(name):
    run, mm_expected, tr_expected = DIFFERENCES[name]
    assert normalize(run(MM), "mm") == mm_expected
    assert normalize(run(TR), "tr") == tr_expected
