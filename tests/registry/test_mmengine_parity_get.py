"""``get``: names searched up the tree, ``scope.Name`` keys, import paths, packages
written on the fly.

Parity with MMEngine 0.10 (see tests/support/registry_parity.py for how scenarios are
written and compared). Runs only where mmengine is installed: ``hatch run mmengine:parity``.
"""

import collections
import os

import pytest

pytest.importorskip("mmengine.registry")


from registry_parity import (  # in tests/support, on pytest's sys.path
    MM,
    TR,
    CascadeHead,
    MobileNet,
    ResNet,
    collectors,
    isolated,  # noqa: F401 (autouse fixture)
    normalize,
    outcome,
    tree,
)

SCENARIOS, DIFFERENCES, scenario, difference = collectors()


GET_CASES = [
    ("root", "ResNet"),
    ("det", "FasterRCNN"),
    ("det", "ResNet"),  # from the parent
    ("det3d", "ResNet"),  # from the grandparent
    ("det3d", "FasterRCNN"),
    ("root", "FasterRCNN"),  # a child's name is not seen from the root
    ("det", "MobileNet"),  # nor from a sibling
    ("det", "CascadeHead"),  # nor from a parent
    ("root", "Unknown"),
    ("root", "X_root.ResNet"),
    ("root", "X_det.FasterRCNN"),
    ("root", "X_cls.MobileNet"),
    ("root", "X_det.ResNet"),  # the child's parent
    ("root", "X_det.CascadeHead"),  # not in mydet nor its parents
    ("root", "X_det.X_det3d.CascadeHead"),
    ("root", "X_nowhere.ResNet"),
    ("det", "X_det.FasterRCNN"),
    ("det", "X_det3d.CascadeHead"),
    ("det", "X_cls.MobileNet"),  # a sibling
    ("det", "X_root.ResNet"),
    ("det", "X_root.FasterRCNN"),
    ("det3d", "X_cls.MobileNet"),
    ("det3d", "X_root.ResNet"),
    ("det3d", "X_det.ResNet"),
    ("det3d", "X_det.FasterRCNN"),
    ("cls", "X_det.FasterRCNN"),
    ("cls", "X_det.Unknown"),
    ("root", "Foo."),
    ("root", "collections.OrderedDict"),
    ("root", "collections.abc.Mapping"),
    ("root", "os.path.join"),
    ("det", "functools.partial"),
    ("root", "collections.NotThere"),
    ("root", "nonexistent_pkg_xyz.Foo"),
    ("root", "a..b"),
]


def _get_case(registry, key):
    def run(api):
        t = tree(api)
        return outcome(getattr(t, registry).get, api.s(key))

    return run


for _registry, _key in GET_CASES:
    SCENARIOS[f"get[{_registry}:{_key}]"] = _get_case(_registry, _key)


@scenario
def get_not_a_str(api):
    reg = api.Registry("r", scope=api.s("X_a"))
    return outcome(reg.get, 1), outcome(reg.get, None)


@scenario
def get_name_registered_in_child_and_parent(api):
    t = tree(api)
    t.det.register_module(name="ResNet", module=MobileNet)
    return t.det.get("ResNet"), t.det3d.get("ResNet"), t.root.get("ResNet")


@scenario
def get_package_attribute_shadowing_submodule(api):
    # Like mmcv.ops.nms: the package exports a function with the name of its submodule.
    api.package(
        {
            "X_ops/__init__.py": "from .nms import nms\n",
            "X_ops/nms.py": "def nms():\n    return 'nms'\n",
        }
    )
    reg = api.Registry("r", scope=api.s("X_a"))
    found = reg.get(api.s("X_ops.nms"))
    # 'X_ops.nms.nms' is then the function's attribute 'nms', which does not exist.
    return callable(found), getattr(found, "__name__", None), reg.get(api.s("X_ops.nms.nms"))


@scenario
def get_submodule_not_imported_by_its_package(api):
    api.package(
        {
            "X_deep/__init__.py": "",
            "X_deep/sub/__init__.py": "",
            "X_deep/sub/things.py": "class Thing:\n    pass\n",
        }
    )
    reg = api.Registry("r", scope=api.s("X_a"))
    found = reg.get(api.s("X_deep.sub.things.Thing"))
    return found.__name__, reg.get(api.s("X_deep.sub.missing.Thing"))


@difference(mm=None, tr=collections.OrderedDict)
def get_through_a_module_alias(api):
    # 'pkg.coll.OrderedDict' where pkg does `import collections as coll`: MMEngine tries to
    # import a module 'pkg.coll' and gives up; treadle follows the attribute, as Python does.
    api.package({"X_alias.py": "import collections as coll\n"})
    reg = api.Registry("r", scope=api.s("X_a"))
    return reg.get(api.s("X_alias.coll.OrderedDict"))


@difference(mm=(True, True), tr=(False, True))
def get_module_name(api):
    # MMEngine's get returns any importable module ('os', 'os.path'): `'os' in REGISTRY` is
    # True. treadle returns a module for a dotted path, as MMEngine does ('mmengine.utils'), and
    # takes a bare name for a registered one only: `'os' in REGISTRY` is False.
    reg = api.Registry("r", scope=api.s("X_a"))
    return reg.get("os") is os, reg.get("os.path") is os.path


@difference(mm=("ok", None), tr=("raises", ImportError))
def get_import_path_whose_module_fails_to_import(api):
    # The module exists but imports a missing dependency: MMEngine returns None (and a build
    # then says the type is not registered); treadle raises ImportError naming the module,
    # the missing dependency chained.
    api.package({"X_broken.py": "import missing_dependency_xyz\nThing = 1\n"})
    reg = api.Registry("r", scope=api.s("X_a"))
    return outcome(reg.get, api.s("X_broken.Thing"))


@difference(mm=("raises", TypeError), tr=("ok", None))
def get_key_with_empty_scope(api):
    # '.Foo': MMEngine tries to import the relative module '.registry' and fails with
    # TypeError; treadle finds nothing.
    t = tree(api)
    return outcome(t.root.get, ".Foo")


@difference(mm=(None, None), tr=(CascadeHead, CascadeHead))
def get_scope_at_any_depth(api):
    # MMEngine looks for 'scope.Name' among the root's children only; treadle anywhere in the
    # tree (as the default scope and _scope_ already do in both).
    t = tree(api)
    return t.root.get(api.s("X_det3d.CascadeHead")), t.cls.get(api.s("X_det3d.CascadeHead"))


@difference(mm=(None, None), tr=(ResNet, ResNet))
def get_own_scope_falls_back_to_parents(api):
    # 'X_det.ResNet' asked of X_det itself: MMEngine searches X_det alone; treadle searches it
    # and its parents, as it does for 'X_det.ResNet' asked of any other registry.
    t = tree(api)
    return t.det.get(api.s("X_det.ResNet")), t.det3d.get(api.s("X_det3d.ResNet"))


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_same_as_mmengine(name):
    run = SCENARIOS[name]
    assert normalize(run(TR), "tr") == normalize(run(MM), "mm")


@pytest.mark.parametrize("name", list(DIFFERENCES))
def test_deliberate_difference(name):
    run, mm_expected, tr_expected = DIFFERENCES[name]
    assert normalize(run(MM), "mm") == mm_expected
    assert normalize(run(TR), "tr") == tr_expected
