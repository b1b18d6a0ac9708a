"""Under treadle.compat, ``last_checkpoint`` holds the checkpoint's full path, as MMEngine's
does (toolbox scripts open what it names from wherever they run); treadle's own runs name it
relative to the work dir."""

from __future__ import annotations

from treadle.runner.checkpoint.pointer import PointerStyle, pointer_text, write_pointer


def test_the_pointer_holds_the_full_path_while_installed(compat, tmp_path):
    checkpoint = str(tmp_path / "epoch_3.pth")
    assert PointerStyle.full_path is True
    write_pointer(str(tmp_path), checkpoint)
    assert (tmp_path / "last_checkpoint").read_text() == checkpoint
    compat.uninstall()
    assert PointerStyle.full_path is False
    assert pointer_text(str(tmp_path), checkpoint) == "epoch_3.pth"
