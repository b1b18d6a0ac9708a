"""Every checkpoint has the scalars of the iterations up to it on disk: the runner flushes its
visualizer (``Visualizer.flush``) before each save, so a run SIGKILLed after a checkpoint and
resumed from it has no gap in its history (the local backend otherwise keeps the last seconds
of scalars in memory)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "support"))

from elastic_toys import elastic_cfg

from treadle.runner.hooks import Hook
from treadle.runner.runner import Runner


class ScalarsOnDisk(Hook):
    """After each checkpoint (CheckpointHook runs before it), the steps in scalars.json."""

    priority = "LOWEST"

    def __init__(self) -> None:
        self.seen: dict[int, list[int]] = {}

    def after_train_iter(self, runner, batch_idx, data_batch=None, outputs=None) -> None:
        if (runner.iter + 1) % 3:
            return
        path = Path(runner.log_dir) / "vis_data" / "scalars.json"
        text = path.read_text() if path.exists() else ""
        self.seen[runner.iter + 1] = [json.loads(line)["step"] for line in text.splitlines()]


def test_the_scalars_up_to_a_checkpoint_are_written_before_it(tmp_path):
    # A backend that would keep an hour of scalars in memory: only the flush writes them.
    visualizer = dict(
        type="Visualizer", vis_backends=[dict(type="LocalVisBackend", flush_interval=3600)]
    )
    cfg = elastic_cfg(tmp_path, loop="iter", checkpoint_interval=3, visualizer=visualizer)
    runner = Runner(**cfg)
    recorder = ScalarsOnDisk()
    runner.register_hook(recorder)
    runner.train()
    assert sorted(recorder.seen) == [3, 6, 9]
    for iteration, steps in recorder.seen.items():
        assert steps == list(range(1, iteration + 1)), (iteration, steps)
