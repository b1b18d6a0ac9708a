import importlib.metadata
import subprocess
import sys

import treadle.registry


def test_public_names():
    assert treadle.registry.__version__ == importlib.metadata.version("treadle-registry")
    assert set(treadle.registry.__all__) == {
        "ENTRY_POINT_GROUP",
        "DefaultScope",
        "Registry",
        "__version__",
        "build_from_cfg",
        "count_registered_modules",
        "init_default_scope",
        "refresh_entry_points",
        "traverse_registry_tree",
    }
    for name in treadle.registry.__all__:
        assert hasattr(treadle.registry, name)
    assert treadle.registry.ENTRY_POINT_GROUP == "treadle.registry"


def test_import_and_build_pull_in_nothing_heavy():
    # Neither torch nor numpy; nor what only failures and plugin discovery need, until used.
    # The build reads the plugins' entry points: from Python 3.12 on, importlib.metadata
    # imports inspect itself, so inspect counts only before it.
    after_build = ("torch", "numpy", "difflib")
    if sys.version_info < (3, 12):
        after_build += ("inspect",)
    code = (
        "import sys\n"
        "from treadle.registry import Registry\n"
        "MODELS = Registry('models', scope='treadle')\n"
        "MODELS.register_module(name='D', module=dict)\n"
        "loaded = sorted(m for m in ('torch', 'numpy', 'inspect', 'difflib', 'importlib.metadata')"
        " if m in sys.modules)\n"
        "assert not loaded, loaded\n"
        "assert MODELS.build({'type': 'D', 'a': 1}) == {'a': 1}\n"
        f"heavy = sorted(m for m in {after_build!r} if m in sys.modules)\n"
        "assert not heavy, heavy\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
