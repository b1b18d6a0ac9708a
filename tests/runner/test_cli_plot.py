"""`treadle plot WORK_DIR`: treadle.visual's curves of a run, from the treadle command."""

from __future__ import annotations

import json
from pathlib import Path

from treadle.runner.cli import main


def _work_dir(tmp_path: Path) -> Path:
    # MMEngine's layout: WORK_DIR/TIMESTAMP/vis_data/scalars.json.
    vis_data = tmp_path / "20260101_000000" / "vis_data"
    vis_data.mkdir(parents=True)
    lines = [{"loss": 2.0 - i / 10, "lr": 0.01, "epoch": 1, "iter": i, "step": i} for i in range(5)]
    lines.append({"accuracy/top1": 90.0, "step": 1})
    (vis_data / "scalars.json").write_text("".join(json.dumps(line) + "\n" for line in lines))
    return vis_data


def test_plot_writes_curves_beside_the_newest_scalars(tmp_path, capsys):
    vis_data = _work_dir(tmp_path)
    assert main(["plot", str(tmp_path)]) == 0
    png = vis_data / "curves.png"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    out = capsys.readouterr().out
    assert f"wrote {png}: 3 panels (loss, lr, accuracy/top1)" in out


def test_plot_with_keys_and_out(tmp_path, capsys):
    _work_dir(tmp_path)
    out = tmp_path / "mine.png"
    assert main(["plot", str(tmp_path), "--keys", "loss,accuracy/top1", "--out", str(out)]) == 0
    assert out.exists()
    assert "2 panels (loss, accuracy/top1)" in capsys.readouterr().out


def test_plot_unknown_key_names_the_closest(tmp_path, capsys):
    _work_dir(tmp_path)
    assert main(["plot", str(tmp_path), "--keys", "los"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("treadle plot: error: ValueError: unknown key 'los'")
    assert "closest: 'loss'" in err


def test_plot_of_a_folder_without_scalars_names_it(tmp_path, capsys):
    assert main(["plot", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("treadle plot: error:") and str(tmp_path) in err
