"""``treadle checkpoint consolidate SHARDED_DIR OUT``: a sharded checkpoint directory as one
.pth (everything, or the weights with --weights-only) or .safetensors file (weights and meta),
and the errors a user can get, each on one line. A checkpoint written by 2 ranks is consolidated
in test_strategies_fsdp_distributed.py."""

from __future__ import annotations

import os

import pytest
import torch
from safetensors.torch import load_file

from treadle.runner.checkpoint import _load_checkpoint
from treadle.runner.checkpoint.sharded import save_sharded_checkpoint
from treadle.runner.cli.main import main

pytestmark = pytest.mark.filterwarnings("ignore:torch.distributed is disabled")


@pytest.fixture
def sharded(tmp_path):
    path = str(tmp_path / "epoch_2.pth")
    save_sharded_checkpoint(
        {
            "state_dict": {"layer.weight": torch.arange(6.0).view(3, 2)},
            "meta": {"epoch": 2},
            "optimizer": {"state": {}, "param_groups": [{"lr": 0.1, "params": ["layer.weight"]}]},
        },
        path,
    )
    return path


def test_consolidate_to_pth_keeps_everything(sharded, tmp_path, capsys):
    out = str(tmp_path / "whole.pth")
    assert main(["checkpoint", "consolidate", sharded, out]) == 0
    saved = _load_checkpoint(out)
    assert sorted(saved) == ["meta", "optimizer", "state_dict"]
    assert saved["state_dict"]["layer.weight"].tolist() == [[0, 1], [2, 3], [4, 5]]
    assert capsys.readouterr().out.strip() == f"wrote {out}: 1 weights and meta, optimizer"


def test_consolidate_weights_only(sharded, tmp_path):
    out = str(tmp_path / "weights.pth")
    assert main(["checkpoint", "consolidate", sharded, out, "--weights-only"]) == 0
    assert sorted(_load_checkpoint(out)) == ["meta", "state_dict"]


def test_consolidate_to_safetensors(sharded, tmp_path):
    out = str(tmp_path / "model.safetensors")
    assert main(["checkpoint", "consolidate", sharded, out]) == 0
    assert load_file(out)["layer.weight"].shape == (3, 2)
    assert _load_checkpoint(out)["meta"] == {"epoch": 2}


def test_consolidate_errors_name_the_path(sharded, tmp_path, capsys):
    missing = str(tmp_path / "nope.pth")
    assert main(["checkpoint", "consolidate", missing, str(tmp_path / "o.pth")]) == 1
    assert f"no sharded checkpoint directory at {missing}" in capsys.readouterr().err
    assert main(["checkpoint", "consolidate", sharded, str(tmp_path / "o.bin")]) == 1
    assert "OUT must end in .pth or .safetensors, got" in capsys.readouterr().err
    os.remove(os.path.join(sharded, ".metadata"))
    assert main(["checkpoint", "consolidate", sharded, str(tmp_path / "o.pth")]) == 1
    err = capsys.readouterr().err
    assert err.startswith("treadle checkpoint: error: FileNotFoundError: ")
    assert "is not a complete sharded checkpoint: it has no .metadata" in err
    with pytest.raises(SystemExit):
        main(["checkpoint", "consolidate", sharded])  # OUT is required
