"""Scenarios of tests/runner/test_elastic_resume.py: elastic runs in gloo groups of 1, 2 and 4
processes (tests/support/gloo_group.py). One scenario, ``scenario_phase``, runs the phase named
by ``ELASTIC_PHASE`` (the test starts one group per phase, in order, sharing one folder):

- ``size2`` (2 processes): the uninterrupted runs at 2 (epoch-based with accumulation,
  iteration-based with 2 DataLoader workers, FSDP2 with sharded checkpoints), and a global batch
  that 2 processes cannot share;
- ``size1``: the uninterrupted runs at 1; the 2-process checkpoints resumed at 1 (whole-file and
  FSDP2 sharded);
- ``size4``: the uninterrupted epoch run at 4; its 2-process checkpoint resumed at 4;
- ``size2b``: the checkpoints of 1 and of 4 processes resumed at 2.

``ELASTIC_LONG=1`` adds the iteration-based runs at 4 and the FSDP2 checkpoint resumed at 4.
Each run returns its recorded losses ``{iteration: loss}`` and, on rank 0, its final weights.
"""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "support"))

from elastic_toys import elastic_cfg, losses, weights

from treadle.runner.runner import FlexibleRunner, Runner

EPOCH = dict(global_batch_size=8, micro_batch_size=2)  # 1: 4 micro-steps, 2: 2, 4: 1
ITER = dict(global_batch_size=8)
LONG = os.environ.get("ELASTIC_LONG") == "1"


def _dir(context, name):
    return os.path.join(context["out_dir"], name)


def _result(context, runner):
    found = {"losses": losses(runner), "iter": runner.iter}
    all_weights = weights(runner)  # a collective under FSDP: every rank gathers
    if context["rank"] == 0:
        found["weights"] = {name: value.tolist() for name, value in all_weights.items()}
    return found


def _run(context, name, loop, elastic, resume_from=None, fsdp=False, **overrides):
    cfg = elastic_cfg(_dir(context, name), loop=loop, elastic=elastic, **overrides)
    cfg["launcher"] = "pytorch"
    if resume_from is not None:
        cfg.update(resume=True, load_from=os.path.join(context["out_dir"], resume_from))
    if fsdp:
        cfg["strategy"] = dict(type="FSDPStrategy", model_wrapper=dict(auto_wrap_policy=["Linear"]))
        runner = FlexibleRunner.from_cfg(cfg)
    else:
        runner = Runner(**cfg)
    runner.train()
    return _result(context, runner)


def _uninterrupted(context, size, results):
    results[f"epoch{size}"] = _run(context, f"epoch{size}", "epoch", EPOCH)
    if size != 4 or LONG:
        results[f"iter{size}"] = _run(context, f"iter{size}", "iter", ITER, num_workers=2)


def _phase_size2(context, results):
    _uninterrupted(context, 2, results)
    results["fsdp2"] = _run(context, "fsdp2", "epoch", ITER, fsdp=True)
    try:
        Runner(
            **elastic_cfg(
                _dir(context, "bad"), elastic=dict(global_batch_size=5), launcher="pytorch"
            )
        )
    except Exception as error:
        results["not_shared"] = f"{type(error).__name__}: {error}"


def _phase_size1(context, results):
    _uninterrupted(context, 1, results)
    results["epoch2to1"] = _run(context, "epoch2to1", "epoch", EPOCH, "epoch2/iter_6.pth")
    results["iter2to1"] = _run(context, "iter2to1", "iter", ITER, "iter2/iter_3.pth")
    results["fsdp2to1"] = _run(context, "fsdp2to1", "epoch", ITER, "fsdp2/iter_6.pth", fsdp=True)


def _phase_size4(context, results):
    _uninterrupted(context, 4, results)
    results["epoch2to4"] = _run(context, "epoch2to4", "epoch", EPOCH, "epoch2/iter_3.pth")
    if LONG:
        results["iter2to4"] = _run(context, "iter2to4", "iter", ITER, "iter2/iter_6.pth")
        results["fsdp2to4"] = _run(
            context, "fsdp2to4", "epoch", ITER, "fsdp2/iter_3.pth", fsdp=True
        )


def _phase_size2b(context, results):
    results["epoch1to2"] = _run(context, "epoch1to2", "epoch", EPOCH, "epoch1/iter_9.pth")
    results["epoch4to2"] = _run(context, "epoch4to2", "epoch", EPOCH, "epoch4/iter_6.pth")
    results["iter1to2"] = _run(context, "iter1to2", "iter", ITER, "iter1/iter_6.pth")


def _phase_size3(context, results):
    # 8 samples a step at 3 processes: shares of 3, 3 and 2 in 2 micro-batches each, weighted.
    results["epoch3"] = _run(context, "epoch3", "epoch", EPOCH)
    results["epoch2to3"] = _run(context, "epoch2to3", "epoch", EPOCH, "epoch2/iter_6.pth")


def scenario_phase(context):
    results = {}
    phase = os.environ["ELASTIC_PHASE"]
    {
        "size2": _phase_size2,
        "size1": _phase_size1,
        "size4": _phase_size4,
        "size2b": _phase_size2b,
        "size3": _phase_size3,
    }[phase](context, results)
    return results
