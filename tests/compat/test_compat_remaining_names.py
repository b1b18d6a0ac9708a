"""The last MMEngine names of the coverage table, at MMEngine's paths: add_args,
MetaTensorContext, the logger's rank helpers (patchable) and config.utils' data."""

import logging
import logging.handlers
from argparse import ArgumentParser
from unittest import mock

import pytest
import torch


def test_add_args_at_mmengine_path(compat):
    from mmengine.config.config import add_args

    parser = add_args(ArgumentParser(), {"model": {"depth": 50}, "amp": False})
    assert vars(parser.parse_args(["--model.depth", "18", "--amp"])) == {
        "model.depth": 18,
        "amp": True,
    }


def test_meta_tensor_context_at_mmengine_path(compat):
    from mmengine._strategy.utils import MetaTensorContext

    with MetaTensorContext():
        layer = torch.nn.Linear(2, 2)
    assert layer.weight.is_meta


@mock.patch("mmengine.logging.logger._get_rank", lambda: 1)
def test_patched_rank_reaches_the_logger(compat, tmp_path, capsys):
    from mmengine.logging import MMLogger

    logger = MMLogger.get_instance("compat.rank1", log_file=str(tmp_path / "run.log"))
    try:
        # Rank 1 of a non-distributed run: console for errors only, and no log file.
        assert len(logger.handlers) == 1 and logger.handlers[0].level == logging.ERROR
        logger.info("hidden")
        assert capsys.readouterr().out == ""
        assert not (tmp_path / "run.log").exists()
    finally:
        logger.close()
        MMLogger._instance_dict.pop("compat.rank1", None)


def test_patched_rank_and_world_size_name_the_rank_file(compat, tmp_path):
    from mmengine.logging import MMLogger

    with (
        mock.patch("mmengine.logging.logger._get_rank", return_value=1),
        mock.patch("mmengine.logging.logger._get_world_size", return_value=2),
    ):
        logger = MMLogger.get_instance(
            "compat.rank1.dist", log_file=str(tmp_path / "run.log"), distributed=True
        )
    try:
        # MMEngine's per-rank name: user@host, device and rank.
        from mmengine.logging.logger import _get_device_id, _get_host_info

        name = f"run_{_get_host_info()}_device{_get_device_id()}_rank1.log"
        assert logger.log_file == str(tmp_path / name)
    finally:
        logger.close()
        MMLogger._instance_dict.pop("compat.rank1.dist", None)
    # The patch is gone: treadle's own helper reads this process's rank again.
    import treadle.logging.logger

    assert treadle.logging.logger._get_rank() == 0


def test_logger_private_helpers(compat):
    from mmengine.logging.logger import _get_host_info, _get_logging_file_handlers

    assert isinstance(_get_host_info(), str)
    handlers = _get_logging_file_handlers()
    assert handlers["RotatingFileHandler"] is logging.handlers.RotatingFileHandler
    assert all(issubclass(cls, logging.FileHandler) for cls in handlers.values())


def test_config_utils_tables_and_package_path(compat):
    from mmengine.config.utils import (
        MODULE2PACKAGE,
        PKG2PROJECT,
        SYSTEM_PYTHON_PREFIX,
        _get_package_and_cfg_path,
    )
    from mmengine.infer.infer import MODULE2PACKAGE as infer_table
    from mmengine.registry.registry import MODULE2PACKAGE as registry_table

    assert MODULE2PACKAGE["mmseg"] == "mmsegmentation" and PKG2PROJECT is MODULE2PACKAGE
    assert infer_table is registry_table is MODULE2PACKAGE
    assert SYSTEM_PYTHON_PREFIX == "/usr/lib/python"
    assert _get_package_and_cfg_path("mmdet::a/b.py") == ("mmdet", "a/b.py")
    with pytest.raises(ValueError, match="package and config name"):
        _get_package_and_cfg_path("mmdet::a/b::c.py")
    with pytest.raises(ValueError, match="mmdet::faster_rcnn"):
        _get_package_and_cfg_path("a/b.py")
    with pytest.raises(AssertionError, match="does not support to load mmfoo config"):
        _get_package_and_cfg_path("mmfoo::a/b.py")


def test_multi_process_test_case_leaves_torch_backends_flags_settable(compat):
    # PyTorch's test utilities freeze torch.backends flags when imported; MMEngine's copy of the
    # test case does not, so a later `cudnn.benchmark = True` (a Runner's env_cfg) still works.
    pytest.importorskip("expecttest")
    assert not torch.backends.flags_frozen()
    from mmengine.testing._internal import MultiProcessTestCase

    assert MultiProcessTestCase.__name__ == "MultiProcessTestCase"
    assert not torch.backends.flags_frozen()
    benchmark = torch.backends.cudnn.benchmark
    torch.backends.cudnn.benchmark = not benchmark
    torch.backends.cudnn.benchmark = benchmark
