"""Visualizer.flush: what the backends buffer is written now and they stay open; a backend
without ``flush`` is left alone."""

from __future__ import annotations

import json
import uuid

from treadle.visual import Visualizer
from treadle.visual.backends import BaseVisBackend


class _Recording(BaseVisBackend):
    def __init__(self, save_dir=None):
        super().__init__(save_dir)
        self.steps = []

    def _init_env(self):
        pass

    @property
    def experiment(self):
        return self

    def add_scalars(self, scalar_dict, step=0, file_path=None, **kwargs):
        self.steps.append(step)


def test_flush_writes_the_buffered_scalars_and_keeps_the_backends_open(tmp_path):
    visualizer = Visualizer(
        name=f"flush_{uuid.uuid4().hex[:8]}",
        vis_backends=[dict(type="LocalVisBackend", flush_interval=3600)],
        save_dir=str(tmp_path),
    )
    visualizer._vis_backends["recording"] = _Recording()
    visualizer.add_scalars({"loss": 0.5}, step=10)
    (path,) = tmp_path.rglob("scalars.json")
    assert path.read_text() == ""  # an hour's interval: still in memory
    visualizer.flush()
    assert [json.loads(line)["step"] for line in path.read_text().splitlines()] == [10]
    visualizer.add_scalars({"loss": 0.25}, step=11)  # still open
    visualizer.close()
    assert [json.loads(line)["step"] for line in path.read_text().splitlines()] == [10, 11]
    assert visualizer._vis_backends["recording"].steps == [10, 11]
