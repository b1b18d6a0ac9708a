"""``mmengine.config.utils`` under compat: MMEngine's lookups of a package's configs through
MIM's files, and its AST rewriting of pure-Python configs (treadle.config.import_transformer)."""

import ast

import pytest


def _package(tmp_path):
    """A package folder as MIM installs one: configs under .mim/configs, a model index and a
    metafile listing one model config."""
    mim = tmp_path / ".mim"
    (mim / "configs" / "retinanet").mkdir(parents=True)
    (mim / "configs" / "retinanet" / "retinanet_r50.py").write_text("a = 1\n")
    (mim / "configs" / "_base_").mkdir()
    (mim / "configs" / "_base_" / "runtime.py").write_text("b = 2\n")
    (mim / "model-index.yml").write_text("Import:\n  - configs/retinanet/metafile.yml\n")
    (mim / "configs" / "retinanet" / "metafile.yml").write_text(
        "Models:\n"
        "  - Name: no_config\n"
        "  - Name: retinanet_r50\n"
        "    Config: configs/retinanet/retinanet_r50.py\n"
        "  - Name: retinanet_r50_second_checkpoint\n"
        "    Config: configs/retinanet/retinanet_r50.py\n"
    )
    # MIM links the package's configs folder; the metafile names configs/... inside it.
    (tmp_path / "configs").symlink_to(mim / "configs")
    return tmp_path


def test_get_external_cfg_base_path(compat, tmp_path):
    from mmengine.config.utils import _get_external_cfg_base_path

    package = _package(tmp_path)
    path = _get_external_cfg_base_path(str(package), "_base_/runtime.py")
    assert path == str(package / ".mim" / "configs" / "_base_" / "runtime.py")
    with pytest.raises(FileNotFoundError, match=r'file ".*missing\.py" does not exist'):
        _get_external_cfg_base_path(str(package), "_base_/missing.py")


def test_get_cfg_metainfo_reads_the_metafiles(compat, tmp_path):
    from mmengine.config.utils import _get_cfg_metainfo

    package = _package(tmp_path)
    with pytest.warns(UserWarning, match="a model entry has no `Config` and is skipped"):
        info = _get_cfg_metainfo(str(package), "retinanet/retinanet_r50.py")
    assert info["Name"] == "retinanet_r50"  # the first entry of a config wins
    with pytest.warns(UserWarning), pytest.raises(ValueError, match="Expected configs: "):
        _get_cfg_metainfo(str(package), "_base_/runtime.py")  # a base config: not listed


def test_get_external_cfg_path_looks_up_the_name_without_extension(compat, tmp_path):
    from mmengine.config.utils import _get_external_cfg_path

    package = _package(tmp_path)
    # As in MMEngine: the name is cut at its first '.', the metafiles list names with '.py', so
    # a config is not found this way (Config._get_cfg_path then takes .mim/configs/NAME).
    with pytest.warns(UserWarning), pytest.raises(ValueError, match="but got retinanet/"):
        _get_external_cfg_path(str(package), "retinanet/retinanet_r50.py")
    metafile = package / ".mim" / "configs" / "retinanet" / "metafile.yml"
    metafile.write_text("Models:\n  - Name: a\n    Config: configs/retinanet/retinanet_r50\n")
    (package / ".mim" / "configs" / "retinanet" / "retinanet_r50").write_text("a = 1\n")
    path = _get_external_cfg_path(str(package), "retinanet/retinanet_r50.py")
    assert path == str(package / "configs" / "retinanet" / "retinanet_r50")


def test_import_transformer_at_mmengine_path(compat):
    from mmengine.config.lazy import LazyObject
    from mmengine.config.utils import (
        ImportTransformer,
        RemoveAssignFromAST,
        _gather_abs_import_lazyobj,
        _is_builtin_module,
    )

    namespace = {"LazyObject": LazyObject}
    tree = ImportTransformer(namespace, {".base": {"lr": 0.1}}, "cfg.py").visit(
        ast.parse("from .base import lr\nfrom mmengine.fileio import LocalBackend\nimport numpy\n")
    )
    tree, packages = _gather_abs_import_lazyobj(tree, "cfg.py")
    exec(compile(ast.fix_missing_locations(tree), "cfg.py", "exec"), namespace)
    assert namespace["lr"] == 0.1 and packages == {"numpy"}
    assert isinstance(namespace["LocalBackend"], LazyObject)
    assert namespace["LocalBackend"].build().__name__ == "LocalBackend"
    assert _is_builtin_module("mmengine.config") and not _is_builtin_module("numpy")
    assert RemoveAssignFromAST("_base_").__class__.__module__ == "treadle.config.import_transformer"
