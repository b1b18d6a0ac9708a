"""read_checkpoint_meta on checkpoint directories: a sharded one and a DeepSpeed one are
resumable (their meta is read by the strategy that loads them), any other directory is refused
naming the path. Found by the GPU pass's DeepSpeed check: a named DeepSpeed checkpoint was
refused as 'not a complete sharded checkpoint'."""

from __future__ import annotations

import pytest

from treadle.runner.runner.checkpoint_meta import read_checkpoint_meta


def test_a_deepspeed_directory_is_resumable(tmp_path):
    saved = tmp_path / "iter_5.pth"
    saved.mkdir()
    (saved / "mp_rank_00_model_states.pt").write_bytes(b"")
    (saved / "zero_pp_rank_0_mp_rank_00_optim_states.pt").write_bytes(b"")
    assert read_checkpoint_meta(str(saved)) is None


def test_a_sharded_directory_is_resumable(tmp_path):
    saved = tmp_path / "iter_5.pth"
    saved.mkdir()
    (saved / ".metadata").write_bytes(b"")
    assert read_checkpoint_meta(str(saved)) is None


def test_another_directory_is_refused_by_name(tmp_path):
    other = tmp_path / "epoch_1.pth"
    other.mkdir()
    (other / "notes.txt").write_text("x")
    with pytest.raises(ValueError, match=r"epoch_1\.pth: it is a directory but not a complete"):
        read_checkpoint_meta(str(other))
