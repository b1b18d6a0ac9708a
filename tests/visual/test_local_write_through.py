"""Issue 41: ``LocalVisBackend.write_through`` (on under treadle.compat) puts each call's line in
scalars.json before the call returns, as MMEngine does; treadle alone buffers them."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from treadle.visual import LocalVisBackend
from treadle.visual.backends.scalar_writer import BufferedLineWriter


@pytest.fixture
def write_through(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(LocalVisBackend, "write_through", True)


def test_buffered_line_writer_write_through(tmp_path) -> None:
    path = tmp_path / "lines.json"
    writer = BufferedLineWriter(path, flush_interval=60, write_through=True)
    writer.write("a\n")
    assert path.read_text() == "a\n"
    writer.close()


def test_each_line_is_in_the_file_when_the_call_returns(tmp_path, write_through) -> None:
    backend = LocalVisBackend(str(tmp_path))
    backend.add_scalar("map", 1, step=0)
    backend.add_scalar("map", 0.95, step=1)
    backend.add_scalar("map", np.array(0.9), step=2)
    assert (tmp_path / "scalars.json").read_text() == (
        '{"map": 1, "step": 0}\n{"map": 0.95, "step": 1}\n{"map": 0.9, "step": 2}\n'
    )
    backend.add_scalars({"map": 0.7, "acc": torch.tensor(0.5)}, step=3, file_path="temp.json")
    line = {"map": 0.7, "acc": 0.5, "step": 3}
    assert json.loads((tmp_path / "temp.json").read_text()) == line
    assert json.loads((tmp_path / "scalars.json").read_text().splitlines()[-1]) == line
    backend.close()


def test_alone_the_lines_wait_for_the_flush(tmp_path) -> None:
    assert LocalVisBackend.write_through is False
    backend = LocalVisBackend(str(tmp_path), flush_interval=60)
    backend.add_scalar("map", 1)
    assert (tmp_path / "scalars.json").read_text() == ""
    backend.close()
    assert (tmp_path / "scalars.json").read_text() == '{"map": 1, "step": 0}\n'
