"""The logger reads the rank through its module's ``_get_rank`` / ``_get_world_size`` when it is
built, so patching them (as treadle.compat does for ``mmengine.logging.logger._get_rank``) makes
it act as another rank."""

import logging
from unittest import mock

import treadle.logging.logger as logger_module
from treadle.logging import Logger


def test_helpers_answer_this_process():
    assert logger_module._get_rank() == 0
    assert logger_module._get_world_size() == 1


def test_patched_helpers_decide_console_and_files(tmp_path):
    with (
        mock.patch.object(logger_module, "_get_rank", return_value=1),
        mock.patch.object(logger_module, "_get_world_size", return_value=2),
    ):
        quiet = Logger("seam.quiet", log_file=tmp_path / "run.log")
        per_rank = Logger("seam.per_rank", log_file=tmp_path / "run.log", distributed=True)
    try:
        assert quiet.rank == 1 and quiet.log_file is None
        assert quiet.handlers[0].level == logging.ERROR
        assert per_rank.log_file == str(tmp_path / "run_rank1.log")
    finally:
        quiet.close()
        per_rank.close()
