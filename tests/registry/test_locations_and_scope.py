"""`locations` imported on the first search, and the scope inferred from the calling module."""

import collections
import importlib
import sys
import textwrap

import pytest

from treadle.registry import Registry


@pytest.fixture
def modules(tmp_path):
    """Write modules into a folder on sys.path; forget them (and the folder) afterwards."""

    def write(path, source):
        file = tmp_path / path
        file.parent.mkdir(parents=True, exist_ok=True)
        file.write_text(textwrap.dedent(source))

    sys.path.insert(0, str(tmp_path))
    importlib.invalidate_caches()
    yield write
    sys.path.remove(str(tmp_path))
    for name, module in list(sys.modules.items()):
        if str(tmp_path) in (getattr(module, "__file__", None) or ""):
            del sys.modules[name]
    for name in [n for n in sys.modules if n.startswith("treadle.regscope_probe")]:
        del sys.modules[name]


def test_locations_are_imported_on_the_first_search(modules):
    modules("lazyplug_a/__init__.py", "")
    modules(
        "lazyplug_a/heads.py",
        """
        import lazyplug_a_root
        imported = True

        @lazyplug_a_root.HEADS.register_module()
        class LazyHead:
            pass
        """,
    )
    modules(
        "lazyplug_a_root.py",
        """
        from treadle.registry import Registry
        HEADS = Registry('heads', scope='lazyplug_a', locations=['lazyplug_a.heads'])
        """,
    )
    import lazyplug_a_root

    heads = lazyplug_a_root.HEADS
    assert "lazyplug_a.heads" not in sys.modules  # creating the registry imports nothing
    assert len(heads) == 0
    assert heads.build({"type": "LazyHead"}).__class__.__name__ == "LazyHead"
    assert "lazyplug_a.heads" in sys.modules


def test_locations_of_parents_are_imported_when_a_child_searches_them(modules):
    modules(
        "lazyplug_b_models.py",
        "import lazyplug_b_root\nlazyplug_b_root.M.register_module(module=dict, name='D')\n",
    )
    modules(
        "lazyplug_b_root.py",
        "from treadle.registry import Registry\n"
        "M = Registry('models', scope='treadle', locations=['lazyplug_b_models'])\n",
    )
    import lazyplug_b_root

    child = Registry("child", parent=lazyplug_b_root.M, scope="lazyplug_b")
    assert child.build({"type": "D", "x": 1}) == {"x": 1}


def test_a_location_that_fails_raises_import_error_naming_it_and_the_registry(modules):
    modules("brokenloc_c.py", "raise RuntimeError('needs a GPU library')\n")
    registry = Registry("heads", scope="treadle", locations=("brokenloc_c",))
    for _ in range(2):  # the next search fails the same way, it does not go on half-imported
        with pytest.raises(
            ImportError,
            match=r"the location 'brokenloc_c' of the 'heads' registry \(scope 'treadle'\) "
            r"failed to import: RuntimeError: needs a GPU library",
        ) as caught:
            registry.get("Anything")
        assert isinstance(caught.value.__cause__, RuntimeError)


def test_a_location_that_does_not_exist(modules):
    registry = Registry("heads", scope="treadle", locations="no_such_location_d")
    with pytest.raises(ImportError, match=r"'no_such_location_d' of the 'heads' registry"):
        "X" in registry  # noqa: B015


def test_scope_is_the_top_level_package_of_the_creating_module(modules):
    modules("scopeprobe_e/__init__.py", "")
    modules("scopeprobe_e/models/__init__.py", "")
    modules(
        "scopeprobe_e/models/registry.py",
        """
        from treadle.registry import Registry

        class MyRegistry(Registry):
            def __init__(self, name, **kwargs):
                super().__init__(name, **kwargs)

        MODELS = Registry('models')
        SUBCLASSED = MyRegistry('subclassed')
        INFERRED = Registry.infer_scope()
        """,
    )
    from scopeprobe_e.models import registry

    assert registry.MODELS.scope == "scopeprobe_e"
    assert registry.SUBCLASSED.scope == "scopeprobe_e"
    assert registry.INFERRED == "scopeprobe_e"


def test_treadle_namespace_packages_get_the_scope_treadle(modules):
    modules(
        "treadle/regscope_probe/models.py",
        "from treadle.registry import Registry\nMODELS = Registry('models')\n",
    )
    # treadle is a namespace package: it sees the new folder on sys.path.
    from treadle.regscope_probe import models

    assert models.MODELS.scope == "treadle"


def test_an_explicit_scope_wins():
    assert Registry("models", scope="mine").scope == "mine"


def test_a_scope_that_cannot_be_inferred_is_treadle_with_a_warning(capsys):
    namespace = {}  # code run with no module name, as exec() or some embedding hosts do
    exec("from treadle.registry import Registry\nREG = Registry('anonymous')\n", namespace)
    assert namespace["REG"].scope == "treadle"
    out = capsys.readouterr().out
    assert "the scope of a Registry could not be inferred" in out
    assert "Pass scope='...' to Registry" in out


def test_import_paths_resolve_as_python_attribute_access_does(modules):
    modules("pathpkg_a/__init__.py", "import collections as coll\nfrom .nms import nms\n")
    modules("pathpkg_a/nms.py", "def nms():\n    return 'nms'\n")
    modules("pathpkg_a/sub/__init__.py", "")
    modules("pathpkg_a/sub/things.py", "class Thing:\n    pass\n")
    registry = Registry("models", scope="pathpkg_a_tests")
    # The package's function wins over its submodule of the same name (like mmcv.ops.nms).
    assert registry.get("pathpkg_a.nms")() == "nms"
    assert registry.get("pathpkg_a.nms.nms") is None  # the function has no attribute 'nms'
    # A submodule not imported by its package, and a module the package imports under an alias.
    assert registry.get("pathpkg_a.sub.things.Thing").__name__ == "Thing"
    assert registry.get("pathpkg_a.coll.OrderedDict") is collections.OrderedDict
    # A module, as MMEngine gives it ('mmengine.utils'); a bare name is a registered one only.
    assert registry.get("pathpkg_a.sub.things").Thing.__name__ == "Thing"
    assert registry.get("pathpkg_a") is None
    assert registry.get("pathpkg_a.sub.missing.Thing") is None


def test_an_import_path_whose_module_fails_to_import_raises(modules):
    modules("pathpkg_b.py", "import missing_dependency_of_pathpkg_b\nThing = 1\n")
    registry = Registry("models", scope="pathpkg_b_tests")
    with pytest.raises(
        ImportError,
        match=r"'pathpkg_b.registry' failed to import.*No module named "
        r"'missing_dependency_of_pathpkg_b'",
    ) as caught:
        registry.get("pathpkg_b.Thing")
    assert isinstance(caught.value.__cause__, ModuleNotFoundError)
