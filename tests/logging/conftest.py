"""Fixtures shared by the tests of treadle-logging.

Loggers and message hubs are global, named instances: each test starts with none, and with none
of the launcher variables that change what a Logger prints.
"""

import pytest

from treadle.logging import HistoryBuffer, Logger, MessageHub

LAUNCHER_VARIABLES = (
    "RANK",
    "WORLD_SIZE",
    "SLURM_PROCID",
    "SLURM_NTASKS",
    "OMPI_COMM_WORLD_RANK",
    "OMPI_COMM_WORLD_SIZE",
    "PMI_RANK",
    "PMI_SIZE",
    "DISTRIBUTED_LOGGING",
    "NO_COLOR",
)


def _forget_instances() -> None:
    for logger in list(Logger._instance_dict.values()):
        logger.close()  # releases the log files of tmp_path
    Logger._instance_dict.clear()
    MessageHub._instance_dict.clear()


@pytest.fixture(autouse=True)
def fresh_globals(monkeypatch):
    for variable in LAUNCHER_VARIABLES:
        monkeypatch.delenv(variable, raising=False)
    statistics = dict(HistoryBuffer._statistics_methods)
    _forget_instances()
    yield
    _forget_instances()
    # Statistics registered by a test do not leak into the next one.
    HistoryBuffer._statistics_methods.clear()
    HistoryBuffer._statistics_methods.update(statistics)
