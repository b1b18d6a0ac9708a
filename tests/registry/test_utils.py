"""traverse_registry_tree and count_registered_modules."""

import json

import pytest

from treadle.registry import Registry, count_registered_modules, traverse_registry_tree


def test_traverse_registry_tree_from_any_node(tree):
    root = tree.root
    det3d = tree.det3d
    info = traverse_registry_tree(det3d, verbose=False)
    assert [node["scope"] for node in info] == ["treadle", "mydet", "mydet3d", "mycls"]
    assert [node["num_modules"] for node in info] == [1, 1, 1, 1]
    # Names are grouped by the folder of the module that defines them (tests/registry here).
    folder = "/".join(root.get("ResNet").__module__.split(".")[:-1])
    assert info[0][folder] == ["ResNet"]
    assert traverse_registry_tree(root, verbose=False) == info


def test_traverse_registry_tree_logs_each_registry(tree, capsys):
    traverse_registry_tree(tree.root)
    out = capsys.readouterr().out
    assert "1 modules in the 'det3d models' registry of scope 'mydet3d'" in out
    assert out.count(" modules in the ") == 4


def test_traverse_registry_tree_needs_a_registry():
    with pytest.raises(TypeError, match="traverse_registry_tree needs a Registry, got str"):
        traverse_registry_tree("models")


def test_count_registered_modules_of_chosen_registries(tree, tmp_path):
    root = tree.root
    hooks = Registry("hooks", scope="treadle")
    hooks.register_module(name="CheckpointHook", module=dict)
    scan = count_registered_modules(
        save_path=str(tmp_path / "out"), verbose=False, registries={"MODELS": root, "HOOKS": hooks}
    )
    assert set(scan) == {"scan_date", "registries"}
    assert scan["registries"]["HOOKS"] == [
        # dict's module is 'builtins', which has no folder
        {"num_modules": 1, "scope": "treadle", "": ["CheckpointHook"]}
    ]
    assert len(scan["registries"]["MODELS"]) == 4
    saved = json.loads((tmp_path / "out" / "modules_statistic_results.json").read_text())
    assert saved == scan
    assert [p.name for p in (tmp_path / "out").iterdir()] == ["modules_statistic_results.json"]


def test_count_registered_modules_finds_the_live_roots_by_default(tree):
    scan = count_registered_modules(verbose=False)
    assert "models" in scan["registries"]
    by_list = count_registered_modules(verbose=False, registries=[tree.root])
    assert by_list["registries"]["models"] == traverse_registry_tree(tree.root, verbose=False)
