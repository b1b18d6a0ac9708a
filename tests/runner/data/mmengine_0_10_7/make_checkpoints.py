"""Write the MMEngine 0.10.7 checkpoints that tests/runner/test_runner_migration.py loads.

Run in the hatch env that has mmengine, from the repository root:

    python3 -m hatch run mmengine:python tests/runner/data/mmengine_0_10_7/make_checkpoints.py

It trains a one-layer model for two epochs of four iterations with MMEngine's Runner and keeps:
``full_epoch_1.pth`` (a whole resume state: message hub with HistoryBuffers and numpy values,
SGD momentum, a MultiStepLR, a ConfigDict in meta), ``weights_only.pth`` (state_dict and meta
only) and ``expected.json`` (what the tests compare against).
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile

import torch
from mmengine.config import ConfigDict
from mmengine.evaluator import BaseMetric
from mmengine.hooks import Hook
from mmengine.model import BaseModel
from mmengine.runner import Runner, save_checkpoint, weights_to_cpu

HERE = os.path.dirname(os.path.abspath(__file__))
# The model, data and settings are shared with the tests that load these files (tests/support).
sys.path.insert(0, os.path.join(HERE, os.pardir, os.pardir, os.pardir, "support"))
from mmengine_checkpoint_data import (  # noqa: E402 (needs the path above)
    TRAIN_SETTINGS,
    EightPoints,
    LinearToyParts,
    eight_points_loader,
)


class LinearToy(LinearToyParts, BaseModel):
    pass


class HalfMetric(BaseMetric):
    def process(self, data_batch, data_samples) -> None:
        self.results.append(1)

    def compute_metrics(self, results) -> dict:
        return {"acc": 0.5}


class ConfigDictInMeta(Hook):
    def before_save_checkpoint(self, runner, checkpoint) -> None:
        checkpoint["meta"]["extra"] = ConfigDict(depth=2, head=dict(num_classes=2))


def main(out_dir: str) -> None:
    work_dir = tempfile.mkdtemp()
    runner = Runner(
        model=LinearToy(),
        work_dir=work_dir,
        train_dataloader=eight_points_loader(),
        val_dataloader=eight_points_loader(),
        val_evaluator={"type": HalfMetric},
        val_cfg={},
        **TRAIN_SETTINGS,
        default_hooks={"checkpoint": {"type": "CheckpointHook", "interval": 1}},
        custom_hooks=[{"type": ConfigDictInMeta}],
    )
    runner.train()
    os.makedirs(out_dir, exist_ok=True)
    shutil.copy(os.path.join(work_dir, "epoch_1.pth"), os.path.join(out_dir, "full_epoch_1.pth"))
    full = torch.load(os.path.join(work_dir, "epoch_1.pth"), weights_only=False)
    final = weights_to_cpu(runner.model.state_dict())
    save_checkpoint(
        {"state_dict": final, "meta": {"epoch": 2, "dataset_meta": EightPoints.metainfo}},
        os.path.join(out_dir, "weights_only.pth"),
    )
    hub = full["message_hub"]
    expected = {
        "epoch_1_state_dict": {k: v.tolist() for k, v in full["state_dict"].items()},
        "final_state_dict": {k: v.tolist() for k, v in final.items()},
        "log_scalars": {
            key: [buffer.data[0].tolist(), buffer.data[1].tolist()]
            for key, buffer in hub["log_scalars"].items()
        },
        "runtime_info": {
            key: value
            for key, value in hub["runtime_info"].items()
            if isinstance(value, (int, str)) and key != "cfg"
        },
        "meta": {k: v for k, v in full["meta"].items() if isinstance(v, (int, str))},
        "param_scheduler_last_step": full["param_schedulers"][0]["last_step"],
        "all_losses": runner.message_hub.get_scalar("train/loss").data[0].tolist(),
        "lr_after_epoch_1": full["optimizer"]["param_groups"][0]["lr"],
    }
    with open(os.path.join(out_dir, "expected.json"), "w") as file:
        json.dump(expected, file, indent=1, sort_keys=True)
    shutil.rmtree(work_dir)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else HERE)
