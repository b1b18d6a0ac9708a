"""One process, no launcher: DeepSpeedStrategy starts its own 1-process group and trains the
toy model (run by test_strategies_deepspeed_gloo.py as a subprocess, since the group stays
for the life of the process). Prints one JSON line with what the test checks.

    python deepspeed_single_process.py WORK_DIR [bf16]
"""

import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "support"))

from runner_toy_model import toy_cfg

from treadle import dist
from treadle.runner.runner import FlexibleRunner


def main():
    work_dir = sys.argv[1]
    strategy = dict(type="DeepSpeedStrategy", zero_optimization=dict(stage=2))
    if "bf16" in sys.argv[2:]:
        strategy.update(bf16=dict(enabled=True), inputs_to_half=["inputs"])
    cfg = toy_cfg(
        work_dir,
        strategy=strategy,
        optim_wrapper=dict(type="DeepSpeedOptimWrapper", optimizer=dict(type="AdamW", lr=0.01)),
        train_cfg=dict(by_epoch=True, max_epochs=2, val_interval=1),
    )
    runner = FlexibleRunner(**cfg)
    runner.train()
    engine = runner.strategy.engine
    print(
        json.dumps(
            dict(
                world_size=dist.get_world_size(),
                distributed=dist.is_distributed(),
                iters=runner.iter,
                dtype=str(next(engine.module.parameters()).dtype),
                checkpoints=sorted(name for name in os.listdir(work_dir) if name.endswith(".pth")),
                metrics=runner.val(),
            )
        )
    )


if __name__ == "__main__":
    main()
