"""Plugin discovery through the entry-point group treadle.registry, with real distributions.

A fixture writes two small wheels with the standard library, installs them with pip into a
folder, and puts that folder on sys.path:

- tplugdist declares two scopes: ``tplugdet = tplugdist.det_plugins`` creates the child
  registry of scope tplugdet under the host's root and registers Thing in it;
  ``tplugself = tplugdist.self_plugins`` registers SelfThing into the host's registry of scope
  tplugself.
- tplugbroken declares ``tplugbroken = tplugbroken.plugins``, a module that fails to import.

The host module (the root registries, as treadle.runner would hold them) is written fresh for
each test, so every test sees the plugins imported for the first time.
"""

import base64
import hashlib
import importlib
import shutil
import subprocess
import sys
import textwrap
import zipfile

import pytest

from treadle.registry import DefaultScope, init_default_scope, refresh_entry_points

HOST = """
from treadle.registry import Registry

MODELS = Registry('models', scope='treadle')
SELF_MODELS = Registry('self models', parent=MODELS, scope='tplugself')
"""

DET_PLUGINS = """
from tplug_host import MODELS
from treadle.registry import Registry

DET_MODELS = Registry('det models', parent=MODELS, scope='tplugdet')


@DET_MODELS.register_module()
class Thing:
    def __init__(self, size=1):
        self.size = size
"""

SELF_PLUGINS = """
from tplug_host import SELF_MODELS


@SELF_MODELS.register_module()
class SelfThing:
    pass
"""

PREFIXES = ("tplug_host", "tplugdist", "tplugbroken", "mmstyle_g")


def _record_line(path, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{path},sha256={digest},{len(data)}"


def write_wheel(folder, dist, files, entry_points):
    """A minimal pure-Python wheel of ``dist`` 0.1.0 with ``files`` and ``entry_points``."""
    dist_info = f"{dist}-0.1.0.dist-info"
    contents = {path: textwrap.dedent(text) for path, text in files.items()}
    contents[f"{dist_info}/METADATA"] = f"Metadata-Version: 2.1\nName: {dist}\nVersion: 0.1.0\n"
    contents[f"{dist_info}/WHEEL"] = (
        "Wheel-Version: 1.0\nGenerator: treadle-tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    )
    contents[f"{dist_info}/entry_points.txt"] = entry_points
    encoded = {path: text.encode() for path, text in contents.items()}
    record = [_record_line(path, data) for path, data in encoded.items()]
    encoded[f"{dist_info}/RECORD"] = ("\n".join([*record, f"{dist_info}/RECORD,,"]) + "\n").encode()
    wheel = folder / f"{dist}-0.1.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        for path, data in encoded.items():
            archive.writestr(path, data)
    return wheel


@pytest.fixture(scope="module")
def plugin_site(tmp_path_factory):
    """A folder where pip installed the two test distributions (not yet on sys.path)."""
    wheels = tmp_path_factory.mktemp("wheels")
    site = tmp_path_factory.mktemp("site")
    built = [
        write_wheel(
            wheels,
            "tplugdist",
            {
                "tplugdist/__init__.py": "",
                "tplugdist/det_plugins.py": DET_PLUGINS,
                "tplugdist/self_plugins.py": SELF_PLUGINS,
            },
            "[treadle.registry]\n"
            "tplugdet = tplugdist.det_plugins\n"
            "tplugself = tplugdist.self_plugins\n",
        ),
        write_wheel(
            wheels,
            "tplugbroken",
            {
                "tplugbroken/__init__.py": "",
                "tplugbroken/plugins.py": "raise ImportError('libfoo is missing')\n",
            },
            "[treadle.registry]\ntplugbroken = tplugbroken.plugins\n",
        ),
    ]
    pip = [sys.executable, "-m", "pip"]
    if subprocess.run([*pip, "--version"], capture_output=True).returncode != 0:
        pytest.skip("pip is not installed in this environment")
    install = [*pip, "install", "--no-deps", "--no-index", "--disable-pip-version-check"]
    result = subprocess.run(
        [*install, "--quiet", "--target", str(site), *map(str, built)],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr
    yield site
    shutil.rmtree(site, ignore_errors=True)


def _forget_test_modules():
    for name in list(sys.modules):
        if name.split(".")[0] in PREFIXES:
            del sys.modules[name]


@pytest.fixture
def host(plugin_site, tmp_path):
    """The freshly imported host module, with the installed plugins visible."""
    (tmp_path / "tplug_host.py").write_text(HOST)
    sys.path[:0] = [str(tmp_path), str(plugin_site)]
    importlib.invalidate_caches()
    refresh_entry_points()
    _forget_test_modules()
    import tplug_host

    yield tplug_host
    _forget_test_modules()
    sys.path.remove(str(tmp_path))
    sys.path.remove(str(plugin_site))
    refresh_entry_points()


def test_the_distribution_is_installed_with_its_entry_points(host):
    metadata = importlib.import_module("importlib.metadata")
    declared = {(ep.name, ep.value) for ep in metadata.entry_points(group="treadle.registry")}
    assert ("tplugdet", "tplugdist.det_plugins") in declared
    assert metadata.version("tplugdist") == "0.1.0"


def test_a_scoped_key_imports_the_plugins_of_its_scope_on_first_use(host):
    assert "tplugdist.det_plugins" not in sys.modules
    assert "tplugdet" not in host.MODELS.children
    thing = host.MODELS.build({"type": "tplugdet.Thing", "size": 3})
    assert thing.size == 3
    assert "tplugdist.det_plugins" in sys.modules
    det_models = host.MODELS.children["tplugdet"]
    assert det_models.name == "det models" and det_models.get("Thing") is type(thing)
    assert "tplugdist.self_plugins" not in sys.modules  # only the scope asked for


def test_a_default_scope_imports_the_plugins_of_its_scope(host):
    init_default_scope("tplugdet")
    assert host.MODELS.build({"type": "Thing"}).size == 1
    assert "tplugdist.det_plugins" in sys.modules


def test_a_cfg_scope_imports_the_plugins_of_its_scope(host):
    assert host.MODELS.build({"type": "Thing", "_scope_": "tplugdet", "size": 2}).size == 2
    assert DefaultScope.get_current_instance() is None


def test_switch_scope_and_registry_imports_the_plugins_of_its_scope(host):
    with host.MODELS.switch_scope_and_registry("tplugdet") as registry:
        assert registry.scope == "tplugdet"
        assert registry is host.MODELS.children["tplugdet"]


def test_the_first_search_of_a_registry_imports_the_plugins_of_its_scope(host):
    assert "tplugdist.self_plugins" not in sys.modules
    assert len(host.SELF_MODELS) == 0
    assert "SelfThing" in host.SELF_MODELS
    assert "tplugdist.self_plugins" in sys.modules


def test_a_plugin_that_fails_raises_import_error_naming_module_distribution_registry(host):
    for _ in range(2):  # not marked as loaded: the next use fails the same way
        with pytest.raises(
            ImportError,
            match=r"the plugin module 'tplugbroken.plugins' \(entry point 'tplugbroken' of "
            r"distribution 'tplugbroken', group 'treadle.registry'\) failed to import while "
            r"the 'models' registry \(scope 'treadle'\) looked for scope 'tplugbroken': "
            r"ImportError: libfoo is missing",
        ) as caught:
            host.MODELS.build({"type": "tplugbroken.Anything"})
        assert str(caught.value.__cause__) == "libfoo is missing"


def test_entry_points_are_read_once_until_refreshed(plugin_site, tmp_path):
    (tmp_path / "tplug_host.py").write_text(HOST)
    sys.path.insert(0, str(tmp_path))
    _forget_test_modules()
    try:
        import tplug_host

        with pytest.raises(KeyError, match="No registry of scope 'tplugdet'"):
            tplug_host.MODELS.build({"type": "tplugdet.Thing"})
        # Installed now (put on sys.path), but the entry points were read already.
        sys.path.insert(0, str(plugin_site))
        importlib.invalidate_caches()
        with pytest.raises(KeyError, match="No registry of scope 'tplugdet'"):
            tplug_host.MODELS.build({"type": "tplugdet.Thing"})
        refresh_entry_points()
        assert tplug_host.MODELS.build({"type": "tplugdet.Thing"}).size == 1
    finally:
        _forget_test_modules()
        for path in (str(tmp_path), str(plugin_site)):
            if path in sys.path:
                sys.path.remove(path)
        refresh_entry_points()


def test_an_mmengine_style_registry_module_is_imported_for_its_scope(host, tmp_path):
    package = tmp_path / "mmstyle_g"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "registry.py").write_text(
        "from tplug_host import MODELS\n"
        "from treadle.registry import Registry\n"
        "G_MODELS = Registry('g models', parent=MODELS, scope='mmstyle_g')\n"
        "G_MODELS.register_module(name='GThing', module=dict)\n"
    )
    importlib.invalidate_caches()
    assert host.MODELS.build({"type": "mmstyle_g.GThing", "a": 1}) == {"a": 1}


def test_a_registry_module_that_fails_raises_import_error(host, tmp_path):
    package = tmp_path / "mmstyle_g"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "registry.py").write_text("import mmstyle_g_dependency_that_is_missing\n")
    importlib.invalidate_caches()
    with pytest.raises(
        ImportError,
        match=r"the module 'mmstyle_g.registry' failed to import while the 'models' registry "
        r"\(scope 'treadle'\) looked for the registries of scope 'mmstyle_g': ModuleNotFoundError",
    ):
        host.MODELS.get("mmstyle_g.GThing")
