"""The registry tree: root -> mydet, mycls; mydet -> mydet3d (see conftest.tree)."""

import collections
import collections.abc

import pytest

from treadle.registry import Registry


def test_parent_children_root(tree):
    root = tree.root
    det = tree.det
    cls = tree.cls
    det3d = tree.det3d
    assert root.parent is None
    assert det.parent is root and cls.parent is root and det3d.parent is det
    assert root.children == {"mydet": det, "mycls": cls}
    assert det.children == {"mydet3d": det3d}
    assert det3d.root is root and root.root is root
    assert (root.scope, det.scope, cls.scope, det3d.scope) == (
        "treadle",
        "mydet",
        "mycls",
        "mydet3d",
    )


def test_plain_name_searches_the_registry_then_its_parents(tree):
    root = tree.root
    det = tree.det
    cls = tree.cls
    det3d = tree.det3d
    resnet = root.get("ResNet")
    assert det3d.get("ResNet") is resnet
    assert det3d.get("FasterRCNN") is det.get("FasterRCNN")
    assert det3d.get("CascadeHead").__name__ == "CascadeHead"
    # Parents do not see their children's names without a scope, nor siblings each other's.
    assert root.get("FasterRCNN") is None
    assert cls.get("FasterRCNN") is None
    assert det.get("CascadeHead") is None


@pytest.mark.parametrize(
    ("start", "key", "expected"),
    [
        ("root", "mydet.FasterRCNN", "FasterRCNN"),  # root -> child
        ("root", "mydet3d.CascadeHead", "CascadeHead"),  # root -> grandchild
        ("cls", "mydet.FasterRCNN", "FasterRCNN"),  # sibling
        ("cls", "mydet3d.CascadeHead", "CascadeHead"),  # a cousin's child
        ("det3d", "mycls.MobileNet", "MobileNet"),  # grandchild -> uncle
        ("det3d", "treadle.ResNet", "ResNet"),  # the root by its scope
        ("det", "mydet.FasterRCNN", "FasterRCNN"),  # its own scope
        ("root", "mydet3d.FasterRCNN", "FasterRCNN"),  # the named scope, then its parents
        ("cls", "mydet.ResNet", "ResNet"),
        ("det", "mydet.ResNet", "ResNet"),
    ],
)
def test_scoped_keys_search_the_scope_anywhere_in_the_tree(tree, start, key, expected):
    found = getattr(tree, start).get(key)
    assert found is not None and found.__name__ == expected


def test_scoped_names_that_do_not_exist(tree):
    root = tree.root
    det3d = tree.det3d
    assert root.get("mycls.FasterRCNN") is None
    assert det3d.get("nowhere.ResNet") is None
    assert root.get(".ResNet") is None  # an empty scope: no registry, no module to import
    with pytest.raises(KeyError, match=r"No registry of scope '' exists"):
        root.build({"type": ".ResNet"})


def test_cross_scope_builds(tree):
    root = tree.root
    cls = tree.cls
    det3d = tree.det3d
    model = root.build(
        {"type": "mydet.FasterRCNN", "num_classes": 3, "backbone": {"type": "mycls.MobileNet"}}
    )
    assert type(model).__name__ == "FasterRCNN" and model.num_classes == 3
    head = cls.build({"type": "mydet3d.CascadeHead", "stages": 2})
    assert head.stages == 2
    assert det3d.build({"type": "ResNet", "depth": 18}).depth == 18


def test_a_full_import_path_works_when_no_name_matches(tree):
    root = tree.root
    assert root.get("collections.OrderedDict") is collections.OrderedDict
    assert root.build({"type": "collections.Counter", "a": 2}) == collections.Counter(a=2)
    assert root.get("collections.NoSuchThing") is None
    assert root.get("collections") is None  # a bare name is a registered name only
    assert root.get("collections.abc") is collections.abc  # a module path, as in MMEngine


def test_build_func_is_inherited():
    def build_twice(cfg, registry, default_args=None):
        return ("built", cfg["type"], registry.name)

    root = Registry("things", build_func=build_twice, scope="treadle")
    child = Registry("child things", parent=root, scope="mydet")
    other = Registry("other", parent=root, scope="mycls", build_func=lambda cfg, registry: 1)
    assert child.build({"type": "X"}) == ("built", "X", "child things")
    assert other.build({"type": "X"}) == 1


def test_build_passes_extra_arguments_to_build_func(tree):
    root = tree.root
    resnet = root.build({"type": "ResNet"}, default_args={"depth": 101})
    assert resnet.depth == 101


def test_a_scope_extends_a_registry_once(tree):
    root = tree.root
    with pytest.raises(ValueError, match=r"'models' registry already has a child of scope 'mydet'"):
        Registry("again", parent=root, scope="mydet")


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"name": 1}, TypeError, "a registry's name must be a str, got int"),
        # TypeErrors that are also the AssertionError MMEngine raises.
        ({"name": "m", "scope": 3}, AssertionError, "the scope of registry 'm' must be a str"),
        ({"name": "m", "scope": 3}, TypeError, "the scope of registry 'm' must be a str"),
        ({"name": "m", "scope": "a.b"}, ValueError, "without dots.*got 'a.b'"),
        ({"name": "m", "scope": ""}, ValueError, "non-empty"),
        ({"name": "m", "parent": "models"}, TypeError, "parent of registry 'm' must be a Registry"),
        (
            {"name": "m", "parent": "models"},
            AssertionError,
            "parent of registry 'm' must be a Registry, got str",
        ),
    ],
)
def test_bad_constructor_arguments(kwargs, error, message):
    with pytest.raises(error, match=message):
        Registry(**kwargs)


def test_get_needs_a_str_key(tree):
    with pytest.raises(TypeError, match=r"a key of the 'models' registry must be a str, got int"):
        tree.root.get(3)


def test_split_scope_key():
    assert Registry.split_scope_key("mydet.ResNet") == ("mydet", "ResNet")
    assert Registry.split_scope_key("a.b.C") == ("a", "b.C")
    assert Registry.split_scope_key("ResNet") == (None, "ResNet")


def test_len_contains_iter(tree):
    root = tree.root
    det3d = tree.det3d
    root.register_module(name="resnet", module=root.get("ResNet"))
    assert len(root) == 2
    assert sorted(root) == ["ResNet", "resnet"]
    assert "ResNet" in det3d  # found through the parents
    assert "mydet.FasterRCNN" in root
    assert "Missing" not in root
    assert len(det3d) == 1  # its own names only


def test_repr_is_a_readable_table(tree):
    root = tree.root
    root.register_module(name="make_resnet", module=lambda: None)
    text = repr(root)
    lines = text.splitlines()
    assert lines[0] == "Registry of models (scope 'treadle'): 2 modules"  # MMEngine's title
    assert lines[1].split() == ["Name", "Object", "Module"]
    assert set(lines[2]) == {"-", " "}
    assert lines[3].split()[:3] == ["ResNet", "class", "ResNet"]
    assert lines[3].split()[3] == "registry_toys"
    assert lines[4].split()[:2] == ["make_resnet", "function"]
    # Columns line up: every row's module starts where the header's does.
    column = lines[1].index("Module")
    assert all(line[column - 2 : column] == "  " for line in lines[3:])
    assert (
        repr(Registry("empty", scope="treadle")) == "Registry of empty (scope 'treadle'): 0 modules"
    )
