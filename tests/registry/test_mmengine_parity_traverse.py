"""``traverse_registry_tree`` and ``count_registered_modules``.

Parity with MMEngine 0.10 (see tests/support/registry_parity.py for how scenarios are
written and compared). Runs only where mmengine is installed: ``hatch run mmengine:parity``.
"""

import collections
import functools
import importlib
import importlib.util
import json
import re

import pytest

pytest.importorskip("mmengine.registry")


from registry_parity import (  # in tests/support, on pytest's sys.path
    MM,
    TR,
    collectors,
    isolated,  # noqa: F401 (autouse fixture)
    normalize,
    resnet50,
    tree,
)

SCENARIOS, DIFFERENCES, scenario, difference = collectors()


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


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_same_as_mmengine(name):
    run = SCENARIOS[name]
    assert normalize(run(TR), "tr") == normalize(run(MM), "mm")
