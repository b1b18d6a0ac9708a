import json
import subprocess
import sys

import pytest

from treadle.config.__main__ import main


def test_print_with_cfg_options(data, capsys):
    code = main(
        [
            "print",
            str(data / "chain" / "level2.py"),
            "--cfg-options",
            "model.backbone.depth=18",
            "data.pipeline.0.type=Big",
        ]
    )
    out = capsys.readouterr().out
    assert code == 0
    assert "depth=18" in out and "type='Big'" in out
    compile(out, "<printed>", "exec")


def test_print_as_json(data, capsys):
    assert main(["print", str(data / "simple.yaml"), "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["model"]["depth"] == 50


def test_diff(data, capsys):
    level1 = str(data / "chain" / "level1.py")
    assert main(["diff", level1, str(data / "chain" / "level2.py")]) == 1
    out = capsys.readouterr().out
    assert out.startswith(f"--- {level1}\n") and "+data = dict(" in out  # names the files
    assert main(["diff", str(data / "simple.py"), str(data / "simple.py")]) == 0


def test_bad_cfg_options_give_a_usage_error(data, capsys):
    # DictAction raises MMEngine's AssertionError; the command turns it into a usage error.
    with pytest.raises(SystemExit) as caught:
        main(["print", str(data / "simple.py"), "--cfg-options", "k=[1,2"])
    assert caught.value.code == 2
    err = capsys.readouterr().err
    assert "--cfg-options: k: Imbalanced brackets exist in [1,2" in err and "usage:" in err


def test_errors_are_one_line_without_traceback(data, capsys):
    assert main(["print", str(data / "errors" / "bad_ref.py")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "bad_ref.py:3:" in err and "Traceback" not in err


def test_module_runs(data):
    out = subprocess.run(
        [sys.executable, "-m", "treadle.config", "print", str(data / "simple.json")],
        capture_output=True,
        text=True,
        check=True,
    )
    assert "model = dict(" in out.stdout
