"""Fixtures of treadle-dist's tests: real process groups of a few local processes (gloo on
127.0.0.1), started once per session because each process spends a second or two importing
torch, then asked many questions (scenarios) at once. The group machinery is shared with other
packages' tests: tests/support/gloo_group.py.

Tests run in a process with no initialized group and none of the launchers' variables.
"""

import os
from pathlib import Path

import gloo_group
import pytest
from gloo_group import (
    LAUNCHER_PREFIXES,
    LAUNCHER_VARIABLES,
    RANK_RUNNER,
    clean_environment,
    free_port,
    read_results,
    scenario_value,
    wait_all,
)

WORKERS = Path(__file__).parent / "workers"


def run_group(scenarios: str, world_size: int, out_dir: Path, **kwargs) -> dict:
    """``gloo_group.run_group`` for the scenario file ``workers/<scenarios>``."""
    return gloo_group.run_group(WORKERS / scenarios, world_size, out_dir, **kwargs)


@pytest.fixture(scope="session")
def group_results(tmp_path_factory):
    """Results of ``workers/group_scenarios.py`` in a 2-process and a 3-process gloo group."""
    cache = {}

    def results(world_size: int) -> dict:
        if world_size not in cache:
            out_dir = tmp_path_factory.mktemp(f"group{world_size}")
            cache[world_size] = run_group("group_scenarios.py", world_size, out_dir)
        return cache[world_size]

    return results


@pytest.fixture(autouse=True)
def no_launcher_variables(monkeypatch):
    for name in list(os.environ):
        if name.startswith(LAUNCHER_PREFIXES) or name in LAUNCHER_VARIABLES:
            monkeypatch.delenv(name)


@pytest.fixture(scope="session")
def helpers():
    """The helpers above, for test modules (which cannot import conftest by name)."""
    import types

    return types.SimpleNamespace(
        workers=WORKERS,
        rank_runner=RANK_RUNNER,
        free_port=free_port,
        clean_environment=clean_environment,
        wait_all=wait_all,
        read_results=read_results,
        run_group=run_group,
        scenario_value=scenario_value,
    )
