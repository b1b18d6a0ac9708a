import logging
import re

import pytest

from treadle.logging import Logger, print_log


def test_none_prints(capsys):
    print_log("plain")
    assert capsys.readouterr().out == "plain\n"


def test_silent_drops_the_message(capsys):
    print_log("quiet", logger="silent")
    assert capsys.readouterr().out == ""
    assert not Logger._instance_dict  # nothing was created for it


def test_current_creates_the_default_logger(capsys):
    print_log("via current", logger="current")
    assert re.search(r" - treadle - INFO - via current$", capsys.readouterr().out.strip())
    assert Logger.check_instance_created("treadle")


def test_name_of_a_created_instance(capsys):
    Logger.get_instance("train", logger_name="trainer")
    print_log("by name", logger="train", level=logging.ERROR)
    assert re.search(
        r" - trainer - ERROR - test_print_log\.py:\d+ - by name$", capsys.readouterr().out.strip()
    )


def test_level_is_respected(capsys):
    logger = Logger.get_instance("train")
    print_log("too detailed", logger=logger, level=logging.DEBUG)
    assert capsys.readouterr().out == ""


def test_a_logging_logger(caplog):
    logger = logging.getLogger("some.library")
    with caplog.at_level(logging.INFO, logger="some.library"):
        print_log("to stdlib", logger=logger, level=logging.WARNING)
    [record] = caplog.records
    assert record.getMessage() == "to stdlib"
    assert record.levelno == logging.WARNING
    # The location is the caller of print_log, not print_log itself.
    assert record.filename == "test_print_log.py"


def test_unknown_name_lists_what_is_accepted():
    Logger.get_instance("train")
    Logger.get_instance("eval")
    with pytest.raises(
        ValueError, match=r"logger='nope'.*'silent', 'current'.*\('train', 'eval'\)"
    ):
        print_log("x", logger="nope")


def test_unknown_name_without_instances():
    with pytest.raises(ValueError, match=r"none created yet"):
        print_log("x", logger="nope")


def test_other_types_are_rejected():
    with pytest.raises(TypeError, match=r"must be None, 'silent', 'current'.*got int: 3"):
        print_log("x", logger=3)
