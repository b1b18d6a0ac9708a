"""``python -m treadle.compat SCRIPT|-m MODULE [ARGS...]``: the script runs as __main__ with its
own argv and sys.path, and ``import mmengine`` is treadle."""

import subprocess
import sys
import textwrap
from pathlib import Path

PROBE = textwrap.dedent(
    """
    import os, sys
    import mmengine
    from mmengine.registry import MODELS
    import treadle.runner.registry
    print("name", __name__)
    print("argv", sys.argv)
    print("path0", sys.path[0])
    print("version", mmengine.__version__)
    print("shared", MODELS is treadle.runner.registry.MODELS)
    print("main", sys.modules["__main__"].__dict__.get("MARK"))
    """
)


def launch(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "treadle.compat", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
    )


def lines(out: str) -> dict[str, str]:
    return dict(line.split(" ", 1) for line in out.splitlines() if " " in line)


def test_script_runs_as_main_with_its_argv_and_folder(tmp_path):
    tools = tmp_path / "tools"
    tools.mkdir()
    (tools / "train.py").write_text("MARK = 'set'\n" + PROBE)
    result = launch("tools/train.py", "cfg.py", "--work-dir", "out", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    seen = lines(result.stdout)
    assert seen["name"] == "__main__"
    assert seen["argv"] == "['tools/train.py', 'cfg.py', '--work-dir', 'out']"
    assert seen["path0"] == str(tools)  # as `python tools/train.py` has it
    assert seen["version"] == "0.10.7"
    assert seen["shared"] == "True"
    assert seen["main"] == "set"


def test_module_runs_as_main(tmp_path):
    package = tmp_path / "toolbox"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "train.py").write_text(PROBE)
    result = launch("-m", "toolbox.train", "a", "--b", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    seen = lines(result.stdout)
    assert seen["name"] == "__main__"
    assert seen["argv"] == f"[{str(package / 'train.py')!r}, 'a', '--b']"
    assert seen["shared"] == "True"
    # -mMODULE in one word, as python accepts it.
    result = launch("-mtoolbox.train", "c", cwd=tmp_path)
    assert lines(result.stdout)["argv"] == f"[{str(package / 'train.py')!r}, 'c']"


def test_exit_status_and_errors_of_the_script_come_through(tmp_path):
    (tmp_path / "exits.py").write_text("import sys\nsys.exit(3)\n")
    assert launch("exits.py", cwd=tmp_path).returncode == 3
    (tmp_path / "fails.py").write_text("import mmengine\nraise ValueError('from the script')\n")
    result = launch("fails.py", cwd=tmp_path)
    assert result.returncode == 1
    assert "ValueError: from the script" in result.stderr
    assert 'fails.py", line 2' in result.stderr


def test_a_script_that_does_not_exist(tmp_path):
    result = launch("tools/nope.py", "cfg.py", cwd=tmp_path)
    assert result.returncode == 2
    assert "treadle.compat: cannot run 'tools/nope.py': no such file" in result.stderr
    assert str(tmp_path / "tools" / "nope.py") in result.stderr
    assert "Traceback" not in result.stderr


def test_a_module_that_does_not_exist(tmp_path):
    result = launch("-m", "toolbox_nope.train", cwd=tmp_path)
    assert result.returncode == 2
    assert "cannot run module 'toolbox_nope.train': No module named 'toolbox_nope'" in (
        result.stderr
    )
    assert "Traceback" not in result.stderr
    (tmp_path / "toolbox").mkdir()
    result = launch("-m", "toolbox.nope", cwd=tmp_path)
    assert "cannot run module 'toolbox.nope': No module named 'toolbox.nope'" in result.stderr


def test_usage(tmp_path):
    result = launch(cwd=tmp_path)
    assert result.returncode == 2
    assert "usage: python -m treadle.compat SCRIPT [ARGS...]" in result.stderr
    result = launch("--bogus", cwd=tmp_path)
    assert result.returncode == 2
    assert "unknown option '--bogus'" in result.stderr
    assert launch("-m", cwd=tmp_path).returncode == 2
    assert "usage:" in launch("--help", cwd=tmp_path).stdout


def test_missing_name_in_a_script_names_module_name_and_table(tmp_path):
    (tmp_path / "old.py").write_text("from mmengine.utils.path import find_vcs_root\n")
    result = launch("old.py", cwd=tmp_path)
    assert result.returncode == 1
    assert "MissingNameError: mmengine.utils.path.find_vcs_root is not provided" in result.stderr
    assert "coverage table" in result.stderr
