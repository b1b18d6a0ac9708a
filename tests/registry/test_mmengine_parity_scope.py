"""The default scope: ``DefaultScope``, ``init_default_scope``, builds under a default scope,
``overwrite_default_scope`` and ``switch_scope_and_registry``.

Parity with MMEngine 0.10 (see tests/support/registry_parity.py for how scenarios are
written and compared). Runs only where mmengine is installed: ``hatch run mmengine:parity``.
"""

import pytest

pytest.importorskip("mmengine.registry")


from registry_parity import (  # in tests/support, on pytest's sys.path
    MM,
    TR,
    built,
    collectors,
    isolated,  # noqa: F401 (autouse fixture)
    normalize,
    outcome,
    tree,
)

from treadle.registry.errors import RegistryArgumentError

SCENARIOS, DIFFERENCES, scenario, difference = collectors()


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


@difference(mm=("raises", AssertionError), tr=("raises", RegistryArgumentError))
def default_scope_name_not_str(api):
    # A TypeError that is also MMEngine's AssertionError.
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


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_same_as_mmengine(name):
    run = SCENARIOS[name]
    assert normalize(run(TR), "tr") == normalize(run(MM), "mm")


@pytest.mark.parametrize("name", list(DIFFERENCES))
def test_deliberate_difference(name):
    run, mm_expected, tr_expected = DIFFERENCES[name]
    assert normalize(run(MM), "mm") == mm_expected
    assert normalize(run(TR), "tr") == tr_expected
