"""Processes started with ``spawn`` or ``forkserver`` while the hook is installed resolve
``import mmengine`` to treadle too (a forked child inherits the hook; a spawned one is a fresh
interpreter, so its command line installs the hook first). MMEngine's own suite switches
multiprocessing to spawn, and DataLoader workers can be spawned."""

from __future__ import annotations

import multiprocessing
import multiprocessing.spawn

import pytest
from compat_children import compat_installed, config_class_of_mmengine


@pytest.mark.parametrize("method", ["spawn", "forkserver"])
def test_a_child_resolves_mmengine_to_treadle(compat, method):
    with multiprocessing.get_context(method).Pool(1) as pool:
        assert pool.apply(config_class_of_mmengine) == "treadle.config.config"


def test_the_spawn_command_line_installs_the_hook_first_and_is_put_back(compat):
    line = multiprocessing.spawn.get_command_line(pipe_handle=7)
    program = line[line.index("-c") + 1]
    assert program.startswith("import treadle.compat; treadle.compat.install(); ")
    assert program.endswith("spawn_main(pipe_handle=7)")
    compat.uninstall()
    line = multiprocessing.spawn.get_command_line(pipe_handle=7)
    assert "treadle" not in line[line.index("-c") + 1]
    compat.install()


def test_a_forkserver_started_while_installed_is_not_used_after_uninstall(compat):
    # The forkserver preloads the hook while installed; one left running would fork hooked
    # children for the rest of the process (MMEngine's log and pointer styles included).
    context = multiprocessing.get_context("forkserver")
    with context.Pool(1) as pool:
        assert pool.apply(compat_installed)
    compat.uninstall()
    try:
        with context.Pool(1) as pool:
            assert not pool.apply(compat_installed)
    finally:
        compat.install()
    with context.Pool(1) as pool:
        assert pool.apply(compat_installed)
