"""treadle.compat.install(): MMEngine's module paths resolve to treadle's own objects."""

import importlib
import importlib.metadata
import subprocess
import sys
import types

import pytest

from treadle.compat.mmengine_0_10_7 import MODULES


def test_every_mmengine_module_path_imports(compat):
    for name, (is_package, _) in MODULES.items():
        module = importlib.import_module(name)
        assert module.__name__ == name
        assert hasattr(module, "__path__") == is_package, name


def test_names_from_the_issue_are_treadles_objects(compat):
    from mmengine.dist.utils import get_rank
    from mmengine.model.utils import revert_sync_batchnorm
    from mmengine.registry.root import MODELS
    from mmengine.runner.checkpoint import load_checkpoint
    from mmengine.utils.dl_utils import TORCH_VERSION
    from mmengine.utils.dl_utils.parrots_wrapper import _BatchNorm
    from mmengine.visualization.utils import img_from_canvas

    import treadle.dist
    import treadle.runner.checkpoint
    import treadle.runner.model
    import treadle.runner.registry
    import treadle.visual.utils

    assert get_rank is treadle.dist.get_rank
    assert MODELS is treadle.runner.registry.MODELS
    assert load_checkpoint is treadle.runner.checkpoint.load_checkpoint
    assert revert_sync_batchnorm is treadle.runner.model.revert_sync_batchnorm
    assert img_from_canvas is treadle.visual.utils.img_from_canvas
    assert __import__("torch").__version__ == TORCH_VERSION
    assert _BatchNorm is __import__("torch").nn.modules.batchnorm._BatchNorm


def test_registries_managers_and_message_hub_are_shared(compat):
    import mmengine
    from mmengine.logging import MessageHub
    from mmengine.registry import MODELS, Registry

    import treadle.logging
    import treadle.runner.registry

    assert MODELS is treadle.runner.registry.MODELS
    # A toolbox registers into a child of MMEngine's MODELS: treadle's builds it.
    toolbox_models = Registry("model", parent=MODELS, scope="compat_toolbox")
    assert toolbox_models.parent is treadle.runner.registry.MODELS
    hub = mmengine.MessageHub.get_instance("compat-test")
    assert treadle.logging.MessageHub.get_current_instance() is hub
    assert MessageHub is treadle.logging.MessageHub
    assert mmengine.Config is importlib.import_module("treadle.config").Config


def test_versions(compat):
    import mmengine
    import mmengine.version

    import treadle.compat

    assert mmengine.__version__ == "0.10.7"
    assert mmengine.version.__version__ == "0.10.7"
    assert mmengine.version_info == (0, 10, 7)
    assert mmengine.digit_version(mmengine.__version__) >= mmengine.digit_version("0.7.1")
    assert treadle.compat.__version__ == importlib.metadata.version("treadle-compat")
    assert mmengine.version.parse_version_info("1.0.0rc2") == (1, 0, 0, "rc2")


def test_submodules_are_attributes_and_star_import_works(compat):
    import mmengine

    assert mmengine.dist.get_world_size() == 1
    assert mmengine.dist is sys.modules["mmengine.dist"]
    namespace: dict = {}
    exec("from mmengine.registry import *", namespace)
    assert "MODELS" in namespace and "Registry" in namespace
    assert "build_from_cfg" in dir(sys.modules["mmengine.registry"])


def test_a_function_over_a_submodule_of_the_same_name_stays_the_function(compat):
    from mmengine.utils.dl_utils import collect_env

    assert callable(collect_env) and not isinstance(collect_env, types.ModuleType)
    importlib.import_module("mmengine.utils.dl_utils.collect_env")  # the submodule, after

    assert callable(sys.modules["mmengine.utils.dl_utils"].collect_env)


def test_a_missing_mmengine_name_is_an_import_error_naming_it(compat):
    import treadle.compat

    with pytest.raises(ImportError) as caught:
        from mmengine.fileio.backends.petrel_backend import PetrelBackend  # noqa: F401
        from mmengine.utils.path import find_vcs_root  # noqa: F401
    message = str(caught.value)
    assert isinstance(caught.value, treadle.compat.MissingNameError)
    assert "mmengine.utils.path.find_vcs_root is not provided by treadle" in message
    assert "unused by MMEngine and the toolboxes" in message  # the reason
    assert "coverage table" in message
    # The same through attribute access, not a bare AttributeError deep inside.
    import mmengine.utils.path

    with pytest.raises(ImportError, match=r"mmengine\.utils\.path\.find_vcs_root"):
        mmengine.utils.path.find_vcs_root  # noqa: B018


def test_a_name_mmengine_never_had_is_an_attribute_error(compat):
    import mmengine.dist

    assert not hasattr(mmengine.dist, "no_such_function")
    with pytest.raises(ImportError, match="cannot import name 'no_such_function'"):
        from mmengine.dist import no_such_function  # noqa: F401


def test_a_module_mmengine_never_had_is_module_not_found(compat):
    with pytest.raises(ModuleNotFoundError, match=r"'mmengine\.dist\.nope'.*MMEngine 0\.10\.7 has"):
        import mmengine.dist.nope  # noqa: F401


def test_install_after_real_mmengine_modules_names_them(monkeypatch, no_mmengine_modules):
    import treadle.compat

    monkeypatch.setitem(sys.modules, "mmengine", types.ModuleType("mmengine"))
    monkeypatch.setitem(sys.modules, "mmengine.registry", types.ModuleType("mmengine.registry"))
    with pytest.raises(treadle.compat.CompatInstallError) as caught:
        treadle.compat.install()
    message = str(caught.value)
    assert "(mmengine, mmengine.registry)" in message
    assert "split the registries" in message
    assert not treadle.compat.installed()


def test_install_twice_and_uninstall(compat):
    import treadle.compat

    treadle.compat.install()
    assert sum(isinstance(f, type(sys.meta_path[0])) for f in sys.meta_path) == 1
    import mmengine  # noqa: F401

    treadle.compat.uninstall()
    assert not treadle.compat.installed()
    assert "mmengine" not in sys.modules


def test_importing_treadle_compat_changes_nothing():
    code = (
        "import sys, treadle.compat\n"
        "assert not treadle.compat.installed()\n"
        "assert not any('treadle.compat' in repr(f) for f in sys.meta_path)\n"
        "try:\n    import mmengine\nexcept ImportError:\n    print('no mmengine')\n"
        "else:\n    print(type(mmengine).__name__)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    # Without the launcher, mmengine is the real one (if installed) or absent, never treadle.
    assert out.stdout.strip() in ("no mmengine", "module")


def test_mmengine_scope_is_treadles_root_scope_while_installed(compat):
    from mmengine.registry import MODELS, DefaultScope, Registry

    from treadle.registry.registry import SCOPE_ALIASES

    toolbox = Registry("model", parent=MODELS, scope="compat_scope_toolbox")
    built = toolbox.build(dict(type="mmengine.BaseDataPreprocessor"))
    assert type(built).__name__ == "BaseDataPreprocessor"
    DefaultScope.get_instance("compat-scope-test", scope_name="mmengine")
    try:
        with toolbox.switch_scope_and_registry("mmengine") as registry:
            assert registry is MODELS
    finally:
        DefaultScope._instance_dict.pop("compat-scope-test", None)
    compat.uninstall()
    assert "mmengine" not in SCOPE_ALIASES


def test_scalars_json_holds_mmengines_keys_while_installed(compat, tmp_path):
    """Toolbox scripts read scalars.json: under the launcher a validation line holds no
    training iteration ("iter"), exactly MMEngine's keys; without it treadle adds one."""
    import json

    from mmengine.visualization import LocalVisBackend

    def validation_line(folder):
        backend = LocalVisBackend(save_dir=str(folder))
        backend.add_scalars({"accuracy": 0.5}, step=1, global_step=40)
        backend.close()
        return json.loads((folder / "scalars.json").read_text())

    assert validation_line(tmp_path / "installed") == {"accuracy": 0.5, "step": 1}
    compat.uninstall()
    assert validation_line(tmp_path / "native") == {"accuracy": 0.5, "step": 1, "iter": 40}
