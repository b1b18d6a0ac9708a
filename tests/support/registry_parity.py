"""Parity with MMEngine 0.10: the same calls on ``mmengine.registry`` and ``treadle.registry``.

Each scenario is a function of an ``Api`` (one framework's registry API) that returns what a
user observes: return values, built objects, exception types, listings. It runs once per
framework and the two results must be equal. Scope names are written ``X_name`` in keys and
made ``mm_name`` / ``tr_name`` per framework, so that the two frameworks' DefaultScope
instances and temporary packages never meet; results are normalized back to ``X_``.

Deliberate differences are scenarios too (``DIFFERENCES``), each with the result expected from
each framework and a comment saying why; the README lists them.

This module holds what the test_mmengine_parity_*.py files share; each imports it (pytest
puts tests/support on sys.path) after skipping where mmengine is missing, and keeps its own
scenario tables, made by ``collectors()``. Run them all with ``hatch run mmengine:parity``.
"""

import importlib
import sys
import textwrap
import types

import mmengine.registry as mm_registry
import mmengine.utils as mm_utils
import pytest
from registry_toys import CascadeHead, FasterRCNN, MobileNet, ResNet  # tests/support

import treadle.logging
import treadle.registry as tr_registry
from treadle.registry.errors import CfgKeyError


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


# treadle's subclasses that differ from their builtin only in how the message prints.
_PRINTING_SUBCLASSES = {CfgKeyError: KeyError}


def outcome(call, *args, **kwargs):
    """('ok', result) or ('raises', exception type): what a caller of ``call`` sees (a KeyError
    that prints its message as written counts as a KeyError)."""
    try:
        return ("ok", call(*args, **kwargs))
    except Exception as error:
        return ("raises", _PRINTING_SUBCLASSES.get(type(error), type(error)))


def built(obj):
    """A built object as something comparable: its type and attributes."""
    return (type(obj), vars(obj)) if hasattr(obj, "__dict__") else obj


# -- registered things, shared by both frameworks ------------------------------------------


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


def collectors():
    """A parity file's two tables and the decorators that fill them: ``scenario`` (the same
    result in both frameworks) and ``difference(mm=..., tr=...)`` (deliberately different)."""
    scenarios, differences = {}, {}

    def scenario(fn):
        scenarios[fn.__name__] = fn
        return fn

    def difference(mm, tr):
        """A scenario whose results differ on purpose: ``mm`` from MMEngine, ``tr`` from
        treadle."""

        def register(fn):
            differences[fn.__name__] = (fn, mm, tr)
            return fn

        return register

    return scenarios, differences, scenario, difference
