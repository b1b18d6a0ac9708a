"""A Runner that trains a small model on CPU without FSDP, compile or activation checkpointing
imports neither matplotlib nor, of its own accord, torch._dynamo or FSDP: those cost a second
or more of the way to the first step (issue 31). Checked in a fresh interpreter, since this
process has imported everything already.

torch itself imports torch._dynamo the first time an optimizer is built (``Optimizer.
add_param_group`` is wrapped by ``torch._disable_dynamo``), and torch._dynamo imports FSDP: any
PyTorch training pays that. So the Runner's construction must import neither, and during
training they may only be imported by torch's own code.
"""

from __future__ import annotations

import json
import subprocess
import sys

# Records, for each watched module, the file of the code that first imported it.
PROBE = r"""
import json, os, sys, tempfile, traceback

WATCHED = ("torch._dynamo", "torch.distributed.fsdp", "torch._inductor", "matplotlib")
importers = {}

class RecordImporter:
    def find_spec(self, name, path=None, target=None):
        if name in WATCHED and name not in importers:
            frames = [f for f in traceback.extract_stack()[:-1] if "importlib" not in f.filename]
            importers[name] = frames[-1].filename
        return None

sys.meta_path.insert(0, RecordImporter())

import torch
from treadle.runner import Runner
from treadle.runner.registry import METRICS
from treadle.runner.testing.toys import ToyDataset, ToyMetric, ToyModel

METRICS.register_module(module=ToyMetric, force=True)
loader = lambda: dict(dataset=ToyDataset(), sampler=dict(type="DefaultSampler", shuffle=False),
                      batch_size=4, num_workers=0)
runner = Runner(
    model=ToyModel(), work_dir=tempfile.mkdtemp(), train_dataloader=loader(),
    val_dataloader=loader(), val_evaluator=[dict(type="ToyMetric")],
    train_cfg=dict(by_epoch=True, max_epochs=1, val_interval=1), val_cfg=dict(),
    optim_wrapper=dict(optimizer=dict(type="SGD", lr=0.01)),
    default_hooks=dict(checkpoint=dict(type="CheckpointHook", interval=1)),
)
built = [name for name in WATCHED if name in sys.modules]
runner.train()
print(json.dumps(dict(
    built=built,
    trained=[name for name in WATCHED if name in sys.modules],
    importers=importers,
    torch_dir=os.path.dirname(torch.__file__),
)))
"""


def run_probe() -> dict:
    done = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_small_cpu_training_leaves_dynamo_fsdp_and_matplotlib_to_torch():
    found = run_probe()
    # Building the Runner (visualizer, hooks, loops, strategy, data loaders) imports none.
    assert found["built"] == []
    # Training never draws: matplotlib stays out, and so does the compiler.
    assert "matplotlib" not in found["trained"]
    assert "torch._inductor" not in found["importers"] or _in_torch(found, "torch._inductor")
    # torch._dynamo and FSDP come in, if at all, through torch's own code (its optimizer).
    for name in ("torch._dynamo", "torch.distributed.fsdp"):
        if name in found["importers"]:
            assert _in_torch(found, name), f"{name} imported by {found['importers'][name]}"


def _in_torch(found: dict, name: str) -> bool:
    return found["importers"][name].startswith(found["torch_dir"])


def test_start_up_gc_pauses_and_freezes_only_when_asked():
    code = (
        "import gc, sys; from treadle.runner.cli import startup_gc; "
        "startup_gc.resume(); print(gc.isenabled(), gc.get_freeze_count() == 0); "
        "startup_gc.pause(); print(gc.isenabled()); "
        "startup_gc.resume(); print(gc.isenabled(), gc.get_freeze_count() > 0)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    # resume() without pause() changes nothing; pause() stops collections; resume() freezes.
    assert done.stdout.split() == ["True", "True", "False", "True", "True"]
