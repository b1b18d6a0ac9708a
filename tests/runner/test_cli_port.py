"""``treadle port PATH``: the porting function from the command line."""

from __future__ import annotations

import shutil
from pathlib import Path

from treadle.runner.cli import main

DATA = Path(__file__).parent / "data"


def _project(tmp_path: Path) -> Path:
    copy = tmp_path / "project"
    shutil.copytree(DATA / "porting_project", copy)
    return copy


def _sources(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): p.read_text() for p in sorted(root.rglob("*.py"))}


def test_dry_run_prints_the_changes_and_writes_nothing(tmp_path, capsys):
    project = _project(tmp_path)
    before = _sources(project)
    assert main(["port", str(project), "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "->  from treadle." in out or "->  import treadle." in out
    assert "would change" in out.splitlines()[-1]
    assert _sources(project) == before


def test_port_rewrites_the_project_as_the_porting_function_does(tmp_path, capsys):
    project = _project(tmp_path)
    assert main(["port", str(project)]) == 0
    assert "changed" in capsys.readouterr().out.splitlines()[-1]
    # The expected files are stored as NAME.py.expected; unchanged files have none.
    expected = DATA / "porting_expected"
    for name, text in _sources(project).items():
        stored = expected / f"{name}.expected"
        assert text == (
            stored.read_text() if stored.exists() else (DATA / "porting_project" / name).read_text()
        ), name


def test_a_missing_path_is_one_line(tmp_path, capsys):
    missing = tmp_path / "nowhere"
    assert main(["port", str(missing)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("treadle port: error: FileNotFoundError:") and "nowhere" in err
