"""Lazy imports: a registry's ``locations`` and the ``{scope}.registry`` module of a scope
named in a key, a ``_scope_`` or the default scope.

Parity with MMEngine 0.10 (see tests/support/registry_parity.py for how scenarios are
written and compared). Runs only where mmengine is installed: ``hatch run mmengine:parity``.
"""

import importlib
import importlib.util
import sys

import pytest

pytest.importorskip("mmengine.registry")


from registry_parity import (  # in tests/support, on pytest's sys.path
    MM,
    TR,
    collectors,
    isolated,  # noqa: F401 (autouse fixture)
    normalize,
    outcome,
)

SCENARIOS, DIFFERENCES, scenario, difference = collectors()


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


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_same_as_mmengine(name):
    run = SCENARIOS[name]
    assert normalize(run(TR), "tr") == normalize(run(MM), "mm")


@pytest.mark.parametrize("name", list(DIFFERENCES))
def test_deliberate_difference(name):
    run, mm_expected, tr_expected = DIFFERENCES[name]
    assert normalize(run(MM), "mm") == mm_expected
    assert normalize(run(TR), "tr") == tr_expected
