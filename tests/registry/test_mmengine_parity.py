"""Parity with MMEngine 0.10: the same calls on ``mmengine.registry`` and ``treadle.registry``.

Each scenario is a function of an ``Api`` (one framework's registry API) that returns what a
user observes: return values, built objects, exception types, listings. It runs once per
framework and the two results must be equal. Scope names are written ``X_name`` in keys and
made ``mm_name`` / ``tr_name`` per framework, so that the two frameworks' DefaultScope
instances and temporary packages never meet; results are normalized back to ``X_``.

Deliberate differences are scenarios too (``DIFFERENCES``), each with the result expected from
each framework and a comment saying why; the README lists them.

Runs only where mmengine is installed: ``hatch run mmengine:pytest
tests/registry/test_mmengine_parity.py``.
"""

import collections
import collections.abc
import functools
import importlib
import json
import os
import re
import sys
import textwrap
import types

import pytest

mm_registry = pytest.importorskip("mmengine.registry")
mm_utils = pytest.importorskip("mmengine.utils")

import treadle.logging  # noqa: E402
import treadle.registry as tr_registry  # noqa: E402


class Api:
    """One framework's registry API, plus helpers to name scopes and write packages."""

    def __init__(self, tag, module, manager_mixin):
        self.tag = tag
        self.module_name = module.__name__
        self.Registry = module.Registry
        self.build_from_cfg = module.build_from_cfg
        self.DefaultScope = module.DefaultScope
        self.init_default_scope = module.init_default_scope
        self.traverse_registry_tree = module.traverse_registry_tree
        self.count_registered_modules = module.count_registered_modules
        self.ManagerMixin = manager_mixin
        self.tmp = None

    def s(self, text):
        """``X_name`` made this framework's: ``mm_name`` or ``tr_name``."""
        return text.replace("X_", f"{self.tag}_")

    def package(self, files):
        """Write ``{relative path: source}`` (``X_`` and ``REGISTRY_MODULE`` filled in) into
        the test's folder on sys.path."""
        for path, source in files.items():
            file = self.tmp / self.s(path)
            file.parent.mkdir(parents=True, exist_ok=True)
            source = textwrap.dedent(source).replace("REGISTRY_MODULE", self.module_name)
            file.write_text(self.s(source))
        importlib.invalidate_caches()

    def current_scope(self):
        current = self.DefaultScope.get_current_instance()
        return None if current is None else current.scope_name


MM = Api("mm", mm_registry, mm_utils.ManagerMixin)
TR = Api("tr", tr_registry, treadle.logging.ManagerMixin)


@pytest.fixture(autouse=True)
def isolated(tmp_path):
    """A folder on sys.path for the scenario's packages; afterwards no DefaultScope of either
    framework and none of the scenario's modules are left."""
    for api in (MM, TR):
        api.tmp = tmp_path / api.tag
        api.tmp.mkdir()
        sys.path.insert(0, str(api.tmp))
    yield
    for api in (MM, TR):
        sys.path.remove(str(api.tmp))
    mm_registry.DefaultScope._instance_dict.clear()
    tr_registry.DefaultScope._instance_dict.clear()
    for name in [n for n in sys.modules if n.startswith(("mm_", "tr_"))]:
        del sys.modules[name]


def normalize(value, tag):
    """``value`` with this framework's scope prefix written ``X_``, containers walked."""
    if isinstance(value, str):
        return value.replace(f"{tag}_", "X_")
    if isinstance(value, dict):
        return {normalize(k, tag): normalize(v, tag) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(normalize(item, tag) for item in value)
    return value


def outcome(call, *args, **kwargs):
    """('ok', result) or ('raises', exception type): what a caller of ``call`` sees."""
    try:
        return ("ok", call(*args, **kwargs))
    except Exception as error:
        return ("raises", type(error))


def built(obj):
    """A built object as something comparable: its type and attributes."""
    return (type(obj), vars(obj)) if hasattr(obj, "__dict__") else obj


# -- registered things, shared by both frameworks ------------------------------------------


class ResNet:
    def __init__(self, depth=50, stages=4):
        self.depth = depth
        self.stages = stages


class FasterRCNN:
    def __init__(self, backbone=None, num_classes=80):
        self.backbone = backbone
        self.num_classes = num_classes


class MobileNet:
    def __init__(self, width=1.0):
        self.width = width


class CascadeHead:
    def __init__(self, stages=3):
        self.stages = stages


def resnet50(stages=4):
    return ResNet(50, stages)


class NeedsDepth:
    def __init__(self, depth):
        self.depth = depth


class Raises:
    def __init__(self, error):
        raise error


class TwoArgError(Exception):
    def __init__(self, code, detail):
        super().__init__(code, detail)


class Adder:
    """A callable object: registrable only under a given name (it has no __name__)."""

    def __call__(self, a, b=1):
        return a + b


def tree(api):
    """root (X_root) -> X_det, X_cls; X_det -> X_det3d, each with one class of its own."""
    root = api.Registry("models", scope=api.s("X_root"))
    det = api.Registry("det models", parent=root, scope=api.s("X_det"))
    cls = api.Registry("cls models", parent=root, scope=api.s("X_cls"))
    det3d = api.Registry("det3d models", parent=det, scope=api.s("X_det3d"))
    root.register_module(module=ResNet)
    det.register_module(module=FasterRCNN)
    cls.register_module(module=MobileNet)
    det3d.register_module(module=CascadeHead)
    return types.SimpleNamespace(root=root, det=det, cls=cls, det3d=det3d)


SCENARIOS = {}
DIFFERENCES = {}


def scenario(fn):
    SCENARIOS[fn.__name__] = fn
    return fn


def difference(mm, tr):
    """A scenario whose results differ on purpose: ``mm`` from MMEngine, ``tr`` from treadle."""

    def register(fn):
        DIFFERENCES[fn.__name__] = (fn, mm, tr)
        return fn

    return register


# -- register_module -------------------------------------------------------------------------


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


# -- get --------------------------------------------------------------------------------------

# (registry of the tree, key): the same result in both.
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


@difference(mm=(True, True), tr=(False, False))
def get_module_name(api):
    # MMEngine's get returns any importable module ('os', 'os.path'): `'os' in REGISTRY` is
    # True. A module is not something to build; treadle returns None.
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


# -- len, in, iteration, properties -----------------------------------------------------------


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


@difference(mm=("raises", AssertionError), tr=("raises", TypeError))
def registry_scope_not_str(api):
    # treadle raises TypeError with a message where MMEngine asserts.
    return outcome(api.Registry, "r", scope=1)


@difference(mm=("raises", AssertionError), tr=("raises", TypeError))
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


# -- build ------------------------------------------------------------------------------------


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


# -- the default scope ------------------------------------------------------------------------

# default scope, registry of the tree that builds, cfg type
DEFAULT_SCOPE_CASES = [
    ("X_det", "root", "FasterRCNN"),
    ("X_det", "root", "ResNet"),  # the default scope's registry, then its parents
    ("X_det", "root", "MobileNet"),  # a sibling of the default scope: not found
    ("X_det", "cls", "FasterRCNN"),
    ("X_det3d", "root", "CascadeHead"),  # a grandchild
    ("X_det3d", "cls", "FasterRCNN"),
    ("X_root", "det", "FasterRCNN"),  # the root's scope from a child: the root searched
    ("X_root", "det", "ResNet"),
    ("X_nowhere", "det", "FasterRCNN"),  # no registry of that scope: the registry itself
    ("X_cls", "det", "X_det.FasterRCNN"),
    ("X_cls", "root", "MobileNet"),
]


def _default_scope_case(scope, registry, type_):
    def run(api):
        t = tree(api)
        api.init_default_scope(api.s(scope))
        result = outcome(getattr(t, registry).build, dict(type=api.s(type_)))
        return (result[0], built(result[1])) if result[0] == "ok" else result

    return run


for _scope, _registry, _type in DEFAULT_SCOPE_CASES:
    SCENARIOS[f"default_scope_build[{_scope}:{_registry}:{_type}]"] = _default_scope_case(
        _scope, _registry, _type
    )


@scenario
def default_scope_none_at_first(api):
    return api.DefaultScope.get_current_instance()


@scenario
def default_scope_get_instance(api):
    scope = api.DefaultScope.get_instance("task", scope_name=api.s("X_det"))
    return (
        scope.scope_name,
        scope.instance_name,
        api.DefaultScope.get_current_instance() is scope,
        api.DefaultScope.get_instance("task") is scope,
        api.DefaultScope.check_instance_created("task"),
        api.DefaultScope.check_instance_created("other"),
    )


@scenario
def default_scope_newest_is_current(api):
    api.DefaultScope.get_instance("a", scope_name=api.s("X_a"))
    api.DefaultScope.get_instance("b", scope_name=api.s("X_b"))
    api.DefaultScope.get_instance("a")  # getting an old one does not make it current
    return api.current_scope()


@scenario
def overwrite_default_scope(api):
    seen = [api.current_scope()]
    with api.DefaultScope.overwrite_default_scope(api.s("X_a")):
        seen.append(api.current_scope())
        with api.DefaultScope.overwrite_default_scope(None):
            seen.append(api.current_scope())
        with api.DefaultScope.overwrite_default_scope(api.s("X_b")):
            seen.append(api.current_scope())
            api.DefaultScope.get_instance("inner", scope_name=api.s("X_c"))
            seen.append(api.current_scope())
        seen.append(api.current_scope())
        seen.append(api.DefaultScope.check_instance_created("inner"))
    seen.append(api.current_scope())
    return seen


@scenario
def overwrite_default_scope_restores_after_error(api):
    api.init_default_scope(api.s("X_a"))
    with pytest.raises(ZeroDivisionError), api.DefaultScope.overwrite_default_scope(api.s("X_b")):
        raise ZeroDivisionError
    names = list(api.DefaultScope._instance_dict)
    return api.current_scope(), names


@difference(mm=False, tr=True)
def overwrite_default_scope_keeps_instances(api):
    # MMEngine restores deep copies of the instances (and the dict's identity changes);
    # treadle puts back the very objects, so references held elsewhere stay current.
    scope = api.DefaultScope.get_instance("task", scope_name=api.s("X_a"))
    with api.DefaultScope.overwrite_default_scope(api.s("X_b")):
        pass
    return api.DefaultScope.get_current_instance() is scope


@difference(mm=("raises", AssertionError), tr=("raises", TypeError))
def default_scope_name_not_str(api):
    return outcome(api.DefaultScope.get_instance, "task", scope_name=1)


@scenario
def init_default_scope_sequence(api):
    seen = []
    for scope in ("X_a", "X_a", "X_b", "X_a", "X_a"):
        api.init_default_scope(api.s(scope))
        names = list(api.DefaultScope._instance_dict)
        # The names of re-created instances carry a suffix of each framework's choosing.
        seen.append((api.current_scope(), [n.split("-")[0] for n in names]))
    return seen


# -- switch_scope_and_registry ----------------------------------------------------------------

# registry of the tree, scope to switch to, default scope set before (or None)
SWITCH_CASES = [
    ("root", "X_det", None),
    ("root", "X_det3d", None),
    ("det", "X_cls", None),
    ("det3d", "X_root", None),
    ("root", "X_root", None),
    ("root", "X_nowhere", None),
    ("det", None, None),
    ("root", None, "X_det"),
    ("root", None, "X_nowhere"),
    ("cls", "X_det", "X_det3d"),
]


def _switch_case(registry, scope, default):
    def run(api):
        t = tree(api)
        if default is not None:
            api.init_default_scope(api.s(default))
        start = getattr(t, registry)
        with start.switch_scope_and_registry(scope and api.s(scope)) as found:
            inside = (found.scope, api.current_scope())
        return inside, api.current_scope()

    return run


for _registry, _scope, _default in SWITCH_CASES:
    SCENARIOS[f"switch_scope_and_registry[{_registry}:{_scope}:{_default}]"] = _switch_case(
        _registry, _scope, _default
    )


@scenario
def switch_scope_and_registry_nested(api):
    t = tree(api)
    seen = []
    with t.root.switch_scope_and_registry(api.s("X_det")) as det:
        seen.append(det is t.det)
        with t.root.switch_scope_and_registry(api.s("X_cls")) as cls:
            seen.append((cls is t.cls, api.current_scope()))
        seen.append(api.current_scope())
    seen.append(api.current_scope())
    return seen


# -- locations and {scope}.registry -----------------------------------------------------------


def _location_packages(api, location_source=""):
    api.package(
        {
            "X_loc/__init__.py": "",
            "X_loc/registry.py": """
                from REGISTRY_MODULE import Registry
                ROOT = Registry('models', scope='X_locroot')
                MODELS = Registry('models', parent=ROOT, scope='X_loc',
                                  locations=['X_loc.models'])
            """,
            "X_loc/models.py": location_source
            or """
                from X_loc.registry import MODELS

                @MODELS.register_module()
                class LazyNet:
                    pass
            """,
        }
    )
    return importlib.import_module(api.s("X_loc.registry"))


@scenario
def locations_imported_on_first_get(api):
    registry_module = _location_packages(api)
    models = registry_module.MODELS
    before = (api.s("X_loc.models") in sys.modules, len(models))
    found = models.get("LazyNet")
    return before, found.__name__, api.s("X_loc.models") in sys.modules, len(models)


@scenario
def locations_imported_on_first_build(api):
    models = _location_packages(api).MODELS
    return type(models.build(dict(type="LazyNet"))).__name__


@scenario
def locations_imported_by_in(api):
    models = _location_packages(api).MODELS
    return "LazyNet" in models


@scenario
def locations_of_child_imported_through_scoped_key(api):
    registry_module = _location_packages(api)
    return registry_module.ROOT.get(api.s("X_loc.LazyNet")).__name__


@scenario
def locations_not_imported_by_len_or_module_dict(api):
    models = _location_packages(api).MODELS
    return len(models), dict(models.module_dict), api.s("X_loc.models") in sys.modules


@scenario
def location_that_fails_raises_import_error_each_time(api):
    models = _location_packages(api, location_source="import missing_dependency_xyz\n").MODELS
    first = outcome(models.get, "LazyNet")
    second = outcome(models.get, "LazyNet")
    return issubclass(first[1], ImportError), issubclass(second[1], ImportError)


@difference(mm=("raises", ValueError), tr=("raises", ImportError))
def location_that_raises_while_imported(api):
    # treadle wraps any failure of a location in ImportError naming the registry and the
    # location (original chained); MMEngine lets the error through.
    models = _location_packages(api, location_source="raise ValueError('boom')\n").MODELS
    return outcome(models.get, "LazyNet")


@difference(mm=None, tr="ParentNet")
def parent_locations_imported_when_child_searches(api):
    # MMEngine imports only the searched registry's locations, so a name that the parent's
    # location registers is not found from the child until the parent is searched itself.
    api.package(
        {
            "X_pl/__init__.py": "",
            "X_pl/registry.py": """
                from REGISTRY_MODULE import Registry
                ROOT = Registry('models', scope='X_plroot', locations=['X_pl.parent_models'])
                CHILD = Registry('models', parent=ROOT, scope='X_pl')
            """,
            "X_pl/parent_models.py": """
                from X_pl.registry import ROOT

                @ROOT.register_module()
                class ParentNet:
                    pass
            """,
        }
    )
    found = importlib.import_module(api.s("X_pl.registry")).CHILD.get("ParentNet")
    return getattr(found, "__name__", None)


def _plugin_package(api):
    """A project X_plug whose X_plug.registry creates a child of a root made by the test."""
    api.package(
        {
            "X_host.py": "ROOT = None\n",
            "X_plug/__init__.py": "",
            "X_plug/registry.py": """
                from REGISTRY_MODULE import Registry
                import X_host

                MODELS = Registry('plug models', parent=X_host.ROOT, scope='X_plug')

                @MODELS.register_module()
                class PlugNet:
                    pass
            """,
        }
    )
    root = api.Registry("models", scope=api.s("X_plugroot"))
    importlib.import_module(api.s("X_host")).ROOT = root
    return root


@scenario
def scope_registry_module_imported_by_scoped_key(api):
    root = _plugin_package(api)
    before = api.s("X_plug.registry") in sys.modules
    return before, root.get(api.s("X_plug.PlugNet")).__name__, list(root.children)


@scenario
def scope_registry_module_imported_by_scope_key(api):
    root = _plugin_package(api)
    return type(root.build(dict(type="PlugNet", _scope_=api.s("X_plug")))).__name__


@scenario
def scope_registry_module_imported_by_default_scope(api):
    root = _plugin_package(api)
    api.init_default_scope(api.s("X_plug"))
    return type(root.build(dict(type="PlugNet"))).__name__


@scenario
def scope_registry_module_imported_by_switch(api):
    root = _plugin_package(api)
    with root.switch_scope_and_registry(api.s("X_plug")) as registry:
        return registry.scope, registry.get("PlugNet").__name__


@scenario
def scope_registry_module_not_imported_by_plain_name(api):
    root = _plugin_package(api)
    return root.get("PlugNet"), api.s("X_plug.registry") in sys.modules


# -- traverse_registry_tree and count_registered_modules --------------------------------------


def _tree_with_package_classes(api):
    api.package(
        {
            "X_tv/__init__.py": "",
            "X_tv/models/__init__.py": "",
            "X_tv/models/heads.py": "class Head:\n    pass\n\ndef head_fn():\n    pass\n",
        }
    )
    heads = importlib.import_module(api.s("X_tv.models.heads"))
    t = tree(api)
    t.det.register_module(module=heads.Head)
    t.det.register_module(module=heads.head_fn)
    t.det3d.register_module(name="partial", module=functools.partial(resnet50, stages=1))
    t.cls.register_module(name="od", module=collections.OrderedDict)
    return t


@scenario
def traverse_registry_tree_from_root(api):
    t = _tree_with_package_classes(api)
    return api.traverse_registry_tree(t.root, verbose=False)


@scenario
def traverse_registry_tree_from_any_node(api):
    t = _tree_with_package_classes(api)
    results = [api.traverse_registry_tree(r, verbose=False) for r in (t.det3d, t.cls, t.det)]
    return all(r == results[0] for r in results), results[0] == api.traverse_registry_tree(t.root)


@scenario
def traverse_registry_tree_single_empty(api):
    return api.traverse_registry_tree(api.Registry("r", scope=api.s("X_a")), verbose=False)


def _shape(entries):
    """The structure of traverse_registry_tree's result: the types found under num_modules,
    scope and the other (folder) keys, and of the names listed under those."""
    shape = collections.defaultdict(set)
    for entry in entries:
        for key, value in entry.items():
            field = key if key in ("num_modules", "scope") else "folder"
            shape[field].add(type(value).__name__)
            if field == "folder":
                shape["name"].update(type(name).__name__ for name in value)
    return dict(shape)


@pytest.fixture(scope="module")
def mmengine_count(tmp_path_factory):
    """MMEngine's count over its own root registries (it imports all of mmengine, once)."""
    folder = tmp_path_factory.mktemp("mm_count")
    result = MM.count_registered_modules(save_path=str(folder), verbose=False)
    return result, json.loads((folder / "modules_statistic_results.json").read_text())


def test_count_registered_modules_same_structure(mmengine_count, tmp_path):
    # The registries scanned differ on purpose (MMEngine: its own root registries; treadle:
    # the roots alive in the process or those passed), the structure does not.
    mm_result, mm_saved = mmengine_count
    t = tree(TR)
    tr_result = TR.count_registered_modules(
        save_path=str(tmp_path), verbose=False, registries={"MODELS": t.root}
    )
    tr_saved = json.loads((tmp_path / "modules_statistic_results.json").read_text())
    assert list(tr_result) == list(mm_result) == ["scan_date", "registries"]
    date = r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d"
    assert re.fullmatch(date, tr_result["scan_date"])
    assert re.fullmatch(date, mm_result["scan_date"])
    assert _shape(tr_result["registries"]["MODELS"]) == _shape(mm_result["registries"]["MODELS"])
    assert tr_result["registries"]["MODELS"] == TR.traverse_registry_tree(t.root, verbose=False)
    assert mm_saved == mm_result
    assert tr_saved == tr_result


def test_count_registered_modules_scans_live_roots_by_default(mmengine_count):
    mm_result, _ = mmengine_count
    assert "MODELS" in mm_result["registries"]  # MMEngine's own root registries
    t = tree(TR)
    scanned = TR.count_registered_modules(verbose=False)["registries"]
    assert any(
        entries == TR.traverse_registry_tree(t.root, verbose=False) for entries in scanned.values()
    )


# -- the tests --------------------------------------------------------------------------------


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_same_as_mmengine(name):
    run = SCENARIOS[name]
    assert normalize(run(TR), "tr") == normalize(run(MM), "mm")


@pytest.mark.parametrize("name", list(DIFFERENCES))
def test_deliberate_difference(name):
    run, mm_expected, tr_expected = DIFFERENCES[name]
    assert normalize(run(MM), "mm") == mm_expected
    assert normalize(run(TR), "tr") == tr_expected
