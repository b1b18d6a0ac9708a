"""treadle.runner.porting: rewriting a project's mmengine imports to treadle's.

The sample project tests/runner/data/porting_project is an MMEngine project; after porting it
must equal tests/runner/data/porting_expected and run on treadle alone.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from treadle.runner.porting import (
    MODULE_MAP,
    PortReport,
    port_project,
    port_source,
    treadle_module,
)

DATA = Path(__file__).parent / "data"
PROJECT = DATA / "porting_project"
EXPECTED = DATA / "porting_expected"


@pytest.fixture
def project(tmp_path):
    copy = tmp_path / "project"
    shutil.copytree(PROJECT, copy, ignore=shutil.ignore_patterns("__pycache__"))
    return copy


def ported(source: str) -> str:
    return port_source(source)[0]


def test_sample_project_is_ported_as_expected(project):
    report = port_project(project)
    changed = sorted(change.path.relative_to(project).as_posix() for change in report.changed)
    assert changed == [
        "toy_proj/__init__.py",
        "toy_proj/configs/base.py",
        "toy_proj/configs/toy.py",
        "toy_proj/models.py",
    ]
    for name in changed:
        expected = (EXPECTED / f"{name}.expected").read_text()
        assert (project / name).read_text() == expected, name
    # No mmengine import: byte for byte the same file.
    assert (project / "toy_proj/plain.py").read_bytes() == (
        PROJECT / "toy_proj/plain.py"
    ).read_bytes()
    assert report.scanned == 5 and report.skipped == [] and not report.dry_run
    assert report.summary() == (
        "4 of 5 Python files changed (13 rewritten statements); 0 files could not be parsed"
    )


def test_ported_project_runs_on_treadle(project, monkeypatch):
    port_project(project)
    monkeypatch.syspath_prepend(str(project))
    for name in [m for m in sys.modules if m == "toy_proj" or m.startswith("toy_proj.")]:
        monkeypatch.delitem(sys.modules, name)
    import toy_proj.models as models  # the ported project's modules, from tmp_path

    from treadle.config import Config
    from treadle.runner.registry import MODELS

    try:
        cfg = Config.fromfile(project / "toy_proj/configs/toy.py")
        assert cfg.default_scope == "treadle"
        model = models.build(dict(model=cfg.model))
        assert type(model).__name__ == "ToyModel" and model.linear.in_features == 3
        assert models.unwrap(model) is model
        assert models.runner_config()["default_scope"] == "treadle"
    finally:
        MODELS._module_dict.pop("ToyModel", None)
        for name in [m for m in sys.modules if m == "toy_proj" or m.startswith("toy_proj.")]:
            del sys.modules[name]


def test_dry_run_reports_without_writing(project):
    before = {p: p.read_bytes() for p in project.rglob("*.py")}
    report = port_project(project, dry_run=True)
    assert isinstance(report, PortReport) and report.dry_run
    assert report.summary().startswith("4 of 5 Python files would change (13 rewritten statements)")
    assert {p: p.read_bytes() for p in project.rglob("*.py")} == before
    lines = {change.path.name: change.statements for change in report.changed}
    assert lines["toy.py"] == [
        (1, "from mmengine.config import read_base", "from treadle.config import read_base")
    ]


def test_a_single_file_can_be_ported(project):
    report = port_project(project / "toy_proj/configs/toy.py")
    assert report.scanned == 1 and len(report.changed) == 1


def test_files_that_are_not_python_are_skipped_and_listed(project):
    broken = project / "toy_proj/broken.py"
    broken.write_text("from mmengine import Config\ndef (:\n")
    latin = project / "toy_proj/latin.py"
    latin.write_bytes(b"# \xe9\nfrom mmengine import Config\n")
    report = port_project(project)
    skipped = {path.name: reason for path, reason in report.skipped}
    assert set(skipped) == {"broken.py", "latin.py"}
    assert skipped["broken.py"].startswith("SyntaxError: ")
    assert skipped["latin.py"].startswith("UnicodeDecodeError: ")
    assert broken.read_text() == "from mmengine import Config\ndef (:\n"
    assert report.summary().endswith("; 2 files could not be parsed")
    # With the right encoding the Latin-1 file is ported.
    report = port_project(latin, encoding="latin-1")
    assert latin.read_bytes() == b"# \xe9\nfrom treadle.runner.mmengine_names import Config\n"


def test_hidden_and_cache_directories_are_not_visited(project):
    for folder in (".venv", "__pycache__"):
        (project / folder).mkdir()
        (project / folder / "m.py").write_text("import mmengine\n")
    port_project(project)
    assert (project / ".venv/m.py").read_text() == "import mmengine\n"
    assert (project / "__pycache__/m.py").read_text() == "import mmengine\n"


def test_missing_path_and_non_python_file_are_errors(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"port_project: '.*nowhere' does not exist"):
        port_project(tmp_path / "nowhere")
    text = tmp_path / "notes.txt"
    text.write_text("import mmengine")
    with pytest.raises(ValueError, match=r"port_project rewrites Python files, and '.*notes.txt'"):
        port_project(text)


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("import mmengine\n", "import treadle.runner.mmengine_names as mmengine\n"),
        ("import mmengine as mme\n", "import treadle.runner.mmengine_names as mme\n"),
        ("import mmengine.dist\n", "import treadle.runner.mmengine_names as mmengine\n"),
        ("import mmengine.fileio as fio\n", "import treadle.fileio as fio\n"),
        ("import os, mmengine.dist as d\n", "import os\nimport treadle.dist as d\n"),
        (
            "import mmengine.dist, mmengine.fileio\n",
            "import treadle.runner.mmengine_names as mmengine\n",
        ),
        (
            "from mmengine.visualization import Visualizer\n",
            "from treadle.visual import Visualizer\n",
        ),
        ("from mmengine.utils.misc import is_str\n", "from treadle.runner.utils import is_str\n"),
        (
            "from mmengine.utils.dl_utils import collect_env, TimeCounter\n",
            "from treadle.runner.runner.env import collect_env\n"
            "from treadle.runner.utils.dl_utils import TimeCounter\n",
        ),
        ("from mmengine import fileio\n", "from treadle.runner.mmengine_names import fileio\n"),
        (
            "def f():\n    from mmengine.utils import ManagerMixin, is_str\n",
            "def f():\n    from treadle.logging import ManagerMixin\n"
            "    from treadle.runner.utils import is_str\n",
        ),
        (
            "x = 1; from mmengine.utils import ManagerMixin as M, is_str\n",
            "x = 1; from treadle.logging import ManagerMixin as M; "
            "from treadle.runner.utils import is_str\n",
        ),
        (
            "from mmengine.model import (  # models\n    BaseModel,\n)\n",
            "from treadle.runner.model import (  # models\n    BaseModel,\n)\n",
        ),
        (
            "s = 'é'; from mmengine.dist import get_rank\n",
            "s = 'é'; from treadle.dist import get_rank\n",
        ),
        ("init_default_scope('mmengine')\n", "init_default_scope('treadle')\n"),
        ("cfg = {'default_scope': 'mmengine'}\n", "cfg = {'default_scope': 'treadle'}\n"),
    ],
)
def test_statements(source, expected):
    assert ported(source) == expected


@pytest.mark.parametrize(
    "source",
    [
        "from . import mmengine\n",
        "from .mmengine import x\n",
        "import mmengine_extra\n",
        "from mmenginex import y\n",
        "text = 'import mmengine'  # import mmengine\n",
        "name = 'mmengine'\n",
        "mmengine.dist.get_rank()\n",
    ],
)
def test_what_is_left_alone(source):
    assert port_source(source) == (source, [])


def test_syntax_error_names_the_file():
    with pytest.raises(SyntaxError) as info:
        port_source("def (:\n", filename="proj/a.py")
    assert info.value.filename == "proj/a.py"


def test_module_map():
    assert treadle_module("mmengine") == "treadle.runner.mmengine_names"
    assert treadle_module("mmengine.runner.checkpoint") == "treadle.runner.checkpoint"
    assert treadle_module("mmengine.hooks.logger_hook") == "treadle.runner.hooks"
    assert treadle_module("mmenginex") is None
    assert treadle_module("torch.nn") is None
    assert all(key == "mmengine" or key.startswith("mmengine.") for key in MODULE_MAP)
    assert all(value.startswith("treadle.") for value in MODULE_MAP.values())
