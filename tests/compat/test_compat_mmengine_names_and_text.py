"""Under treadle.compat, MMEngine code sees MMEngine's names and text: the default logger and
message hub are named 'mmengine', log lines and levels are MMEngine's, progress bars write its
text, a missing prerequisite is printed, collect_env has its keys. uninstall() puts treadle's
back. Patching MMEngine's private helpers of its logger module reaches treadle's logger."""

import io
import logging
import unittest
from unittest import mock

import pytest

from treadle.logging import Logger, MessageHub
from treadle.runner.utils import ProgressBar, mmengine_env, prerequisites


@pytest.fixture
def no_instances():
    saved = dict(Logger._instance_dict), dict(MessageHub._instance_dict)
    Logger._instance_dict.clear()
    MessageHub._instance_dict.clear()
    yield
    for logger in Logger._instance_dict.values():
        logger.close()
    Logger._instance_dict.clear()
    MessageHub._instance_dict.clear()
    Logger._instance_dict.update(saved[0])
    MessageHub._instance_dict.update(saved[1])


def test_install_switches_on_and_uninstall_off(compat):
    assert Logger.default_instance_name == Logger.default_logger_name == "mmengine"
    assert MessageHub.default_instance_name == "mmengine"
    assert Logger.mmengine_style and ProgressBar.mmengine_format and prerequisites.PRINT_MISSING
    assert mmengine_env.MMENGINE_VERSION == "0.10.7"
    compat.uninstall()
    assert Logger.default_instance_name == Logger.default_logger_name == "treadle"
    assert MessageHub.default_instance_name == "treadle"
    assert not (Logger.mmengine_style or ProgressBar.mmengine_format)
    assert not prerequisites.PRINT_MISSING and mmengine_env.MMENGINE_VERSION is None
    compat.install()  # the fixture uninstalls once more


def test_the_default_logger_is_mmengine(compat, no_instances, capsys):
    from mmengine.logging import MessageHub as MMMessageHub
    from mmengine.logging import MMLogger, print_log

    logger = MMLogger.get_current_instance()
    assert logger.instance_name == logger.name == "mmengine"
    assert MMMessageHub.get_current_instance().instance_name == "mmengine"
    print_log("hello", logger="current")
    assert " - mmengine - INFO - hello" in capsys.readouterr().out
    # What a toolbox test's assertLogs sees, a warning logged before included.
    logger.warning("old option")
    with unittest.TestCase().assertLogs(logger) as captured:
        logger.warning("old option")
    assert captured.output == ["WARNING:mmengine:old option"]


def test_patching_mmengine_logger_helpers_names_the_rank_files(compat, no_instances, tmp_path):
    from mmengine.logging import MMLogger

    with (
        mock.patch("mmengine.logging.logger._get_rank", lambda: 1),
        mock.patch("mmengine.logging.logger._get_device_id", lambda: 1),
        mock.patch("mmengine.logging.logger._get_world_size", lambda: 2),
        mock.patch("mmengine.logging.logger._get_host_info", lambda: "test"),
    ):
        logger = MMLogger.get_instance(
            "rank1", log_level="INFO", log_file=str(tmp_path / "tmp_file.log"), distributed=True
        )
    assert [handler.level for handler in logger.handlers] == [logging.ERROR, logging.INFO]
    assert (tmp_path / "tmp_file_test_device1_rank1.log").exists()


def test_mmengine_progress_text(compat):
    import mmengine

    out = io.StringIO()
    mmengine.ProgressBar(10, bar_width=4, file=out)
    assert out.getvalue() == "[    ] 0/10, elapsed: 0s, ETA:"


def test_mmengine_collect_env(compat):
    import mmengine
    from mmengine.utils.dl_utils import collect_env

    info = collect_env()
    assert info["MMEngine"] == mmengine.__version__
    assert "PyTorch compiling details" in info and "GCC" in info
