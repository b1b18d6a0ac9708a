"""The ``treadle`` command starts with the garbage collector paused (issue 31, launch to first
step): torch, treadle, the config's modules, the Runner and ``torch._dynamo`` (which torch's
optimizer imports anyway) are imported with no collection, then frozen; the training and the
test loop run with the collector on. Checked in fresh ``python -m treadle.runner`` processes,
each ended by a probe module (the config's custom import) at its first optimizer step or first
forward pass.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import torch
from runner_toy_model import ToyModel, toy_cfg

from treadle.config import Config

SUPPORT = str(Path(__file__).resolve().parents[1] / "support")

# Imported by the config (custom_imports): reports the collector's state, as JSON on the last
# line of stdout, at the first optimizer step (train) or the first forward pass (test), and ends
# the process there.
PROBE = """
import gc, json, os, sys

import torch
from torch.optim.optimizer import register_optimizer_step_post_hook


def report(*args, **kwargs):
    state = dict(
        enabled=gc.isenabled(),
        full_collections=gc.get_stats()[2]["collections"],
        dynamo_imported="torch._dynamo" in sys.modules,
    )
    sys.stdout.write("\\n" + json.dumps(state) + "\\n")
    sys.stdout.flush()
    os._exit(0)


if os.environ.get("PROBE_AT") == "forward":
    torch.nn.modules.module.register_module_forward_hook(report)
else:
    register_optimizer_step_post_hook(report)
"""


def _config(tmp_path: Path) -> str:
    (tmp_path / "gc_probe.py").write_text(PROBE)
    cfg = toy_cfg(tmp_path / "work", default_hooks=dict(checkpoint=dict(type="CheckpointHook")))
    cfg["custom_imports"] = dict(imports=["runner_toy_model", "gc_probe"])
    path = tmp_path / "config.py"
    Config(cfg).dump(str(path))
    return str(path)


def _run(args: list[str], probe_at: str) -> dict:
    env = {**os.environ, "PROBE_AT": probe_at}
    env["PYTHONPATH"] = os.pathsep.join([SUPPORT, env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    done = subprocess.run(
        [sys.executable, "-m", "treadle.runner", *args, "--no-progress"],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_the_command_imports_no_torch_before_it_pauses_the_collector():
    # The `treadle` script imports treadle.runner.cli.main, then calls main(), which pauses the
    # collector: torch must not come in with that first import (a subcommand's engine did).
    code = "import sys, treadle.runner.cli.main; print('torch' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["False"]


def test_train_starts_without_a_full_collection_and_trains_with_the_collector_on(tmp_path):
    found = _run(["train", _config(tmp_path)], probe_at="step")
    # torch, treadle, the runner and torch._dynamo were imported with the collector paused:
    # before, five full collections over them (two inside torch._dynamo) on the way here.
    assert found["dynamo_imported"]
    assert found["full_collections"] == 0
    assert found["enabled"]


def test_test_runs_its_loop_with_the_collector_on(tmp_path):
    checkpoint = tmp_path / "model.pth"
    torch.save(dict(state_dict=ToyModel().state_dict()), checkpoint)
    found = _run(["test", _config(tmp_path), str(checkpoint)], probe_at="forward")
    assert found["enabled"]
    # Testing builds no optimizer: torch._dynamo is left out.
    assert not found["dynamo_imported"]
