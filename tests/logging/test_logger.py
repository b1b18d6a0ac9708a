import io
import logging
import logging.handlers
import pickle
import re
import sys
import types

import pytest

from treadle.logging import Logger, MMLogger

LINE = re.compile(
    r"^\d{4}/\d\d/\d\d \d\d:\d\d:\d\d - (?P<logger>\S+) - (?P<level>\w+) - (?P<rest>.*)$"
)
ESCAPE = "\x1b["


class Terminal(io.StringIO):
    """A console stream that says it is a terminal."""

    def isatty(self):
        return True


def lines(text):
    return [line for line in text.splitlines() if line]


def test_logs_to_stdout_in_the_treadle_format(capsys):
    logger = Logger.get_instance("train")
    logger.info("hello %s", "world")
    [line] = lines(capsys.readouterr().out)
    match = LINE.match(line)
    assert match, line
    assert match["logger"] == "treadle"
    assert match["level"] == "INFO"
    assert match["rest"] == "hello world"


def test_logger_name_and_mmlogger_alias(capsys):
    assert MMLogger is Logger
    logger = MMLogger.get_instance("train", logger_name="detector")
    logger.info("x")
    assert " - detector - INFO - x" in capsys.readouterr().out
    assert logger.name == "detector"
    assert logger.instance_name == "train"


def test_stays_outside_the_logging_module(capsys):
    logger = Logger.get_instance("isolated", logger_name="isolated_logger")
    assert isinstance(logger, logging.Logger)
    assert logger.parent is None
    assert logger.propagate is False
    assert "isolated_logger" not in logging.root.manager.loggerDict
    assert logging.getLogger("isolated_logger") is not logger


def test_warnings_and_errors_name_their_source(capsys):
    logger = Logger.get_instance("train")
    logger.warning("careful")
    logger.error("broken")
    logger.info("fine")
    warning, error, info = lines(capsys.readouterr().out)
    assert re.search(r" - WARNING - test_logger\.py:\d+ - careful$", warning)
    assert re.search(r" - ERROR - test_logger\.py:\d+ - broken$", error)
    assert info.endswith(" - INFO - fine")


def test_exceptions_include_the_traceback(capsys):
    logger = Logger.get_instance("train")
    try:
        raise KeyError("missing")
    except KeyError:
        logger.exception("failed")
    out = capsys.readouterr().out
    assert "failed" in out
    assert "Traceback (most recent call last)" in out
    assert "KeyError: 'missing'" in out


@pytest.mark.parametrize("level", ["DEBUG", "debug", logging.DEBUG])
def test_level_names_and_numbers(capsys, level):
    logger = Logger.get_instance("train", log_level=level)
    logger.debug("details")
    assert " - DEBUG - details" in capsys.readouterr().out


def test_bad_levels_are_rejected():
    with pytest.raises(ValueError, match=r"unknown log level 'LOUD'.*CRITICAL, ERROR"):
        Logger.get_instance("train", log_level="LOUD")
    with pytest.raises(TypeError, match="must be an int or a level name"):
        Logger.get_instance("train", log_level=1.5)
    assert not Logger.check_instance_created("train")


def test_set_level_applies_to_logger_and_handlers(capsys, tmp_path):
    logger = Logger.get_instance("train", log_file=tmp_path / "run.log")
    logger.debug("hidden")
    assert not logger.isEnabledFor(logging.DEBUG)  # fills isEnabledFor's cache
    logger.setLevel("DEBUG")
    assert logger.isEnabledFor(logging.DEBUG)
    logger.debug("shown")
    logger.setLevel(logging.ERROR)
    logger.warning("hidden too")
    out = capsys.readouterr().out
    assert "shown" in out
    assert "hidden" not in out
    text = (tmp_path / "run.log").read_text()
    assert "shown" in text
    assert "hidden" not in text
    assert all(handler.level == logging.ERROR for handler in logger.handlers)


def test_handlers_are_not_duplicated(capsys, tmp_path):
    first = Logger.get_instance("train", log_file=tmp_path / "run.log")
    second = Logger.get_instance("train")
    assert first is second
    assert len(first.handlers) == 2
    second.info("once")
    assert capsys.readouterr().out.count("once") == 1
    assert (tmp_path / "run.log").read_text().count("once") == 1


def test_repeated_warnings_are_logged_once(capsys):
    logger = Logger.get_instance("train")
    for _ in range(3):
        logger.warning("deprecated option")
        logger.info("step")
    logger.warning("another warning")
    out = capsys.readouterr().out
    assert out.count("deprecated option") == 1
    assert out.count("step") == 3
    assert out.count("another warning") == 1


def test_get_current_instance_creates_a_default():
    logger = Logger.get_current_instance()
    assert logger.instance_name == "treadle"
    assert logger.name == "treadle"
    newer = Logger.get_instance("newer")
    assert Logger.get_current_instance() is newer


def test_pickles_as_the_instance_of_the_same_name():
    logger = Logger.get_instance("train")
    assert pickle.loads(pickle.dumps(logger)) is logger
    assert repr(logger) == "<Logger 'train' (treadle, INFO)>"


# Log files


def test_log_file_is_written_without_colours(monkeypatch, tmp_path):
    monkeypatch.setattr(sys, "stdout", Terminal())
    path = tmp_path / "nested" / "dir" / "run.log"
    logger = Logger.get_instance("train", log_file=path)
    logger.error("broken")
    assert logger.log_file == str(path)
    assert logger._log_file == str(path)  # MMEngine's private name, which toolbox tests read
    text = path.read_text()
    assert re.search(r" - ERROR - test_logger\.py:\d+ - broken$", text.strip())
    assert ESCAPE not in text
    assert ESCAPE in sys.stdout.getvalue()  # the terminal got colours


@pytest.mark.parametrize(("mode", "expected"), [("w", ["new"]), ("a", ["old", "new"])])
def test_file_mode(tmp_path, mode, expected):
    path = tmp_path / "run.log"
    path.write_text("2024/01/01 00:00:00 - treadle - INFO - old\n")
    Logger.get_instance("train", log_file=path, file_mode=mode).info("new")
    assert [line.rsplit(" - ", 1)[1] for line in lines(path.read_text())] == expected


def test_bad_file_mode(tmp_path):
    with pytest.raises(ValueError, match="file_mode must be 'w' or 'a', got 'x'"):
        Logger.get_instance("train", log_file=tmp_path / "run.log", file_mode="x")


@pytest.mark.parametrize(
    ("cfg", "handler_type"),
    [
        ({"type": "FileHandler"}, logging.FileHandler),
        (
            {"type": "RotatingFileHandler", "maxBytes": 1000, "backupCount": 2},
            logging.handlers.RotatingFileHandler,
        ),
        (
            {"type": "TimedRotatingFileHandler", "when": "D"},
            logging.handlers.TimedRotatingFileHandler,
        ),
        ({"type": "WatchedFileHandler"}, logging.handlers.WatchedFileHandler),
        ({"delay": False}, logging.FileHandler),
    ],
)
def test_file_handler_cfg(tmp_path, cfg, handler_type):
    path = tmp_path / "run.log"
    logger = Logger.get_instance("train", log_file=path, file_handler_cfg=cfg)
    assert type(logger.handlers[-1]) is handler_type
    logger.info("line")
    assert "line" in path.read_text()


def test_bad_file_handler_cfg(tmp_path):
    path = tmp_path / "run.log"
    with pytest.raises(
        ValueError,
        match=r"'SocketHandler' is not supported: `logging.handlers` does not contain such a "
        r"file handler; use one of BaseRotatingHandler, FileHandler, Rot",
    ):
        Logger.get_instance("a", log_file=path, file_handler_cfg={"type": "SocketHandler"})
    with pytest.raises(TypeError, match="file_handler_cfg must be a dict or None, got list"):
        Logger.get_instance("c", log_file=path, file_handler_cfg=["FileHandler"])


def test_file_handler_cfg_filename_is_the_file_written(tmp_path):
    # As in MMEngine: the handler's own filename wins over log_file.
    chosen = tmp_path / "chosen.log"
    logger = Logger.get_instance(
        "b", log_file=tmp_path / "run.log", file_handler_cfg={"filename": str(chosen)}
    )
    logger.info("here")
    assert logger.log_file == str(chosen)
    assert "here" in chosen.read_text()
    assert not (tmp_path / "run.log").exists()


def test_file_handler_cfg_may_be_any_mapping(tmp_path):
    cfg = types.MappingProxyType({"type": "RotatingFileHandler", "maxBytes": 1024})
    logger = Logger.get_instance("mapping", log_file=tmp_path / "run.log", file_handler_cfg=cfg)
    assert type(logger.handlers[-1]) is logging.handlers.RotatingFileHandler


def test_base_rotating_handler_is_built_with_a_warning(tmp_path):
    # MMEngine builds any file handler of logging.handlers, this base class too.
    with pytest.warns(UserWarning, match="'BaseRotatingHandler' cannot decide when to roll"):
        logger = Logger.get_instance(
            "base",
            log_file=tmp_path / "run.log",
            file_handler_cfg={"type": "BaseRotatingHandler", "mode": "a"},
        )
    assert type(logger.handlers[-1]) is logging.handlers.BaseRotatingHandler


def test_close_releases_the_file(tmp_path):
    logger = Logger.get_instance("train", log_file=tmp_path / "run.log")
    logger.close()
    assert logger.handlers == []
    logger.info("nowhere")  # no handler left: nothing breaks


# Ranks


def test_other_ranks_print_only_errors(monkeypatch, capsys):
    monkeypatch.setenv("RANK", "1")
    monkeypatch.setenv("WORLD_SIZE", "2")
    logger = Logger.get_instance("train")
    logger.info("progress")
    logger.warning("careful")
    logger.error("broken")
    out = capsys.readouterr().out
    assert "progress" not in out
    assert "careful" not in out
    assert "broken" in out
    logger.setLevel("DEBUG")  # does not open the console of rank 1
    logger.info("still hidden")
    assert capsys.readouterr().out == ""


def test_console_all_ranks(monkeypatch, capsys):
    monkeypatch.setenv("RANK", "1")
    monkeypatch.setenv("WORLD_SIZE", "2")
    Logger.get_instance("train", console_all_ranks=True).info("progress")
    assert "progress" in capsys.readouterr().out


def test_other_ranks_write_no_file_unless_distributed(monkeypatch, tmp_path):
    monkeypatch.setenv("RANK", "1")
    monkeypatch.setenv("WORLD_SIZE", "2")
    logger = Logger.get_instance("train", log_file=tmp_path / "run.log")
    logger.error("broken")
    assert logger.log_file is None
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("how", ["argument", "environment"])
def test_distributed_ranks_write_their_own_file(monkeypatch, tmp_path, how):
    monkeypatch.setenv("RANK", "1")
    monkeypatch.setenv("WORLD_SIZE", "2")
    if how == "environment":
        monkeypatch.setenv("DISTRIBUTED_LOGGING", "1")
    logger = Logger.get_instance(
        "train", log_file=tmp_path / "run.log", distributed=how == "argument"
    )
    logger.info("rank one")
    assert logger.log_file == str(tmp_path / "run_rank1.log")
    assert [p.name for p in tmp_path.iterdir()] == ["run_rank1.log"]
    assert "rank one" in (tmp_path / "run_rank1.log").read_text()


def test_distributed_rank_zero_uses_the_rank_name(monkeypatch, tmp_path):
    monkeypatch.setenv("RANK", "0")
    monkeypatch.setenv("WORLD_SIZE", "2")
    logger = Logger.get_instance("train", log_file=tmp_path / "run.log", distributed=True)
    assert logger.log_file == str(tmp_path / "run_rank0.log")


def test_distributed_single_process_keeps_the_plain_name(tmp_path):
    logger = Logger.get_instance("train", log_file=tmp_path / "run.log", distributed=True)
    assert logger.log_file == str(tmp_path / "run.log")


# Colours


def _log_every_level(name):
    logger = Logger.get_instance(name, log_level="DEBUG")
    logger.debug("d")
    logger.info("i")
    logger.warning("w")
    logger.error("e")
    logger.critical("c")


def test_colours_on_a_terminal(monkeypatch):
    monkeypatch.setattr(sys, "stdout", Terminal())
    _log_every_level("train")
    debug, info, warning, error, critical = lines(sys.stdout.getvalue())
    assert "\x1b[32mDEBUG\x1b[0m" in debug
    assert ESCAPE not in info
    assert "\x1b[33mWARNING\x1b[0m" in warning
    assert "\x1b[31mERROR\x1b[0m" in error
    assert "\x1b[31mCRITICAL\x1b[0m" in critical


def test_no_colours_off_a_terminal(monkeypatch):
    monkeypatch.setattr(sys, "stdout", io.StringIO())  # isatty() is False
    _log_every_level("train")
    assert ESCAPE not in sys.stdout.getvalue()
    assert len(lines(sys.stdout.getvalue())) == 5


def test_no_color_variable(monkeypatch):
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.setattr(sys, "stdout", Terminal())
    _log_every_level("train")
    assert ESCAPE not in sys.stdout.getvalue()
