"""Imports inside blocks of a pure-Python config (``try``/``except ImportError``, ``if``,
functions) are lazy like its top-level ones, as MMEngine rewrites every import of the file: a
missing optional package fails only where its object is built, not the load (xtuner 0.2.0 keeps
such scripts among its configs). A plain ``import x`` inside a block runs, as in MMEngine."""

import pytest

from treadle.config import Config, LazyObject


def test_optional_imports_do_not_fail_the_load(data, demo_packages):
    cfg = Config.fromfile(data / "lazy" / "optional_imports.py")
    assert cfg.to_dict() == {
        "HAS_Y": False,  # `import surely_missing_pkg_y` ran and failed inside try
        "model": {
            "type": "surely_missing_pkg_x.models.BigNet",
            "factory": "surely_missing_pkg_x.models.make_net",
            "utils": "surely_missing_pkg_x.utils.load",
        },
        "net": {"type": "lazypkg_demo.models.TinyNet"},
        "helper": {"type": "surely_missing_pkg_z.Helper"},  # imported inside a function
    }
    lazy = cfg.to_dict(keep_imported=True)
    assert {"BigNet", "make_net", "missing_utils"} <= lazy.keys()


def test_the_missing_package_fails_where_it_is_built(data, demo_packages):
    cfg = Config.fromfile(data / "lazy" / "optional_imports.py")
    with pytest.raises(ImportError, match=r"Failed to import surely_missing_pkg_x.*line 8"):
        _ = cfg.model.type


def test_optional_imports_next_to_read_base(data, demo_packages):
    cfg = Config.fromfile(data / "lazy" / "optional_child.py")
    assert cfg.to_dict() == {
        "model": {
            "type": "lazypkg_demo.models.TinyNet",
            "depth": 18,
            "head": {"num_classes": 10, "type": "surely_missing_pkg_x.heads.BigHead"},
        },
        "extra": {"type": "surely_missing_pkg_x.Extra"},
    }
    assert isinstance(cfg._to_lazy_dict()["extra"]["type"], LazyObject)


def test_a_block_that_only_imported_base_values_still_compiles(tmp_path):
    (tmp_path / "base.py").write_text("lr = 0.1\n")
    child = tmp_path / "child.py"
    child.write_text(
        "from mmengine.config import read_base\n"
        "with read_base():\n"
        "    from .base import *\n"
        "if True:\n"
        "    from .base import lr as base_lr\n"
        "scaled = base_lr * 2\n"
    )
    assert Config.fromfile(child).scaled == 0.2


def test_import_star_from_a_package_in_a_block_is_refused(tmp_path):
    config = tmp_path / "star.py"
    config.write_text(
        "import numpy\ntry:\n    from surely_missing_pkg_x import *\n"
        "except ImportError:\n    pass\n"
    )
    with pytest.raises(RuntimeError, match=r"star\.py:3: `from surely_missing_pkg_x import \*`"):
        Config.fromfile(config)
