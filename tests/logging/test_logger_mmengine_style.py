"""The repeated-warning filter on each handler, and ``Logger.mmengine_style``: the lines, levels
and file names treadle.compat switches on, so that MMEngine code sees MMEngine's logger."""

import logging
import re
import sys
import unittest
from unittest import mock

import pytest

import treadle.logging.logger as logger_module
from treadle.logging import Logger, MessageHub
from treadle.logging.formatter import LogFormatter
from treadle.logging.log_files import rank_file_name


@pytest.fixture
def mmengine_style(monkeypatch):
    # What treadle.compat's install() sets.
    monkeypatch.setattr(Logger, "mmengine_style", True)
    monkeypatch.setattr(Logger, "default_logger_name", "mmengine")
    monkeypatch.setattr(Logger, "default_instance_name", "mmengine")
    monkeypatch.setattr(MessageHub, "default_instance_name", "mmengine")


def test_assert_logs_sees_a_warning_already_logged():
    logger = Logger.get_instance("train")
    logger.warning("deprecated option")
    # unittest's assertLogs swaps the handlers: the filter went with them, not on the logger.
    case = unittest.TestCase()
    with case.assertLogs(logger, level="WARNING") as captured:
        logger.warning("deprecated option")
    assert captured.records[0].getMessage() == "deprecated option"


def test_each_handler_drops_repeats_on_its_own(tmp_path, capsys):
    logger = Logger.get_instance("train", log_file=tmp_path / "run.log")
    assert logger.filters == []
    for _ in range(2):
        logger.warning("twice")
    assert capsys.readouterr().out.count("twice") == 1
    assert (tmp_path / "run.log").read_text().count("twice") == 1


def test_names_are_mmengine(mmengine_style):
    logger = Logger.get_current_instance()
    assert logger.instance_name == "mmengine" and logger.name == "mmengine"
    assert Logger.get_instance("mmdet").name == "mmengine"
    assert MessageHub.get_current_instance().instance_name == "mmengine"


def test_mmengine_lines(mmengine_style, capsys, tmp_path):
    logger = Logger.get_instance("lines", log_level="DEBUG", log_file=tmp_path / "run.log")
    logger.warning("careful")
    logger.error("broken")
    line = sys._getframe().f_lineno - 1
    logger.debug("detail")
    warning, error, debug = capsys.readouterr().out.splitlines()
    # The console shows month/day and time; warnings name no place, errors the full path.
    assert re.fullmatch(r"\d\d/\d\d \d\d:\d\d:\d\d - mmengine - WARNING - careful", warning)
    assert error.endswith(
        f" - mmengine - ERROR - {__file__} - test_mmengine_lines - {line} - broken"
    )
    assert re.fullmatch(r"\d\d/\d\d \d\d:\d\d:\d\d - mmengine - DEBUG - detail", debug)
    text = (tmp_path / "run.log").read_text().splitlines()
    assert re.fullmatch(r"\d{4}/\d\d/\d\d \d\d:\d\d:\d\d - mmengine - WARNING - careful", text[0])


def test_mmengine_levels(mmengine_style, capsys):
    logger = Logger.get_instance("levels", log_level="INFO")
    # MMEngine leaves the logger's level unset; its handlers filter.
    assert logger.level == logging.NOTSET
    assert logger.handlers[0].level == logging.INFO
    logger.debug("hidden")
    logger.info("shown")
    assert capsys.readouterr().out.count("shown") == 1
    logger.setLevel("WARNING")
    logger.info("hidden")
    assert capsys.readouterr().out == ""


def test_mmengine_rank_files(mmengine_style, tmp_path):
    with (
        mock.patch.object(logger_module, "_get_rank", return_value=1),
        mock.patch.object(logger_module, "_get_world_size", return_value=2),
        mock.patch.object(logger_module, "_get_host_info", return_value="me@box"),
        mock.patch.object(logger_module, "_get_device_id", return_value=1),
    ):
        only_rank0 = Logger.get_instance("a", log_file=str(tmp_path / "run.log"))
        named = Logger.get_instance("b", log_file=str(tmp_path / "run.log"), distributed=True)
        # MMEngine writes every rank's file at DEBUG level.
        debug = Logger.get_instance("c", log_file=str(tmp_path / "dbg.log"), log_level="DEBUG")
    assert len(only_rank0.handlers) == 1
    assert [h.level for h in named.handlers] == [logging.ERROR, logging.INFO]
    assert named.log_file == str(tmp_path / "run_me@box_device1_rank1.log")
    assert (tmp_path / "run_me@box_device1_rank1.log").exists()
    assert debug.log_file == str(tmp_path / "dbg_me@box_device1_rank1.log")


def test_rank_file_names():
    assert rank_file_name("a/run.log", 2) == "a/run_rank2.log"
    assert rank_file_name("a/run.log", 2, "u@h", 5) == "a/run_u@h_device5_rank2.log"
    assert rank_file_name("a/run.log", 2, "", 5) == "a/run_device5_rank2.log"


def test_treadle_style_is_unchanged_by_default(capsys):
    logger = Logger.get_instance("plain")
    assert logger.level == logging.INFO
    logger.warning("careful")
    assert re.search(
        r"^\d{4}/.* - treadle - WARNING - test_logger_mmengine_style\.py:\d+ - ca",
        capsys.readouterr().out,
    )


def test_formatter_layouts():
    assert LogFormatter(layout="mmengine").layout == "mmengine"
    with pytest.raises(ValueError, match="layout must be one of treadle, mmengine, got 'x'"):
        LogFormatter(layout="x")
