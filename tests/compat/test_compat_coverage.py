"""The coverage table: at least 95% of MMEngine 0.10.7's public names at the same paths, a
reason for every missing one, and the coverage table (docs/compat/coverage.md) up to date."""

import importlib.util
from pathlib import Path

import pytest

from treadle.compat.coverage import Row, coverage_markdown, coverage_rows
from treadle.compat.missing import reason_for

ROOT = Path(__file__).parents[2]
README = ROOT / "docs" / "compat" / "coverage.md"
TOOL = ROOT / "tools" / "compat_coverage.py"


@pytest.fixture(scope="module")
def rows():
    return coverage_rows()


def test_share_is_at_least_95_percent(rows):
    total = sum(len(row.names) for row in rows)
    provided = sum(row.provided for row in rows)
    assert len(rows) == 153
    assert provided / total >= 0.95


def test_every_missing_name_has_a_reason(rows):
    unexplained = [f"{r.module}.{n}" for r in rows for n, why in r.missing.items() if not why]
    assert unexplained == []


def test_readme_table_is_current(rows):
    text = README.read_text()
    table = text.split("<!-- coverage:begin -->\n", 1)[1].split("\n<!-- coverage:end -->")[0]
    assert table == coverage_markdown(rows)


def test_markdown_rows_and_reasons():
    rows = [Row("mmengine.a", ["x", "y"], {"y": "because"}), Row("mmengine.b", [], {})]
    text = coverage_markdown(rows)
    assert "1 of MMEngine 0.10.7's 2 public names (50.0%)" in text
    assert "| `mmengine.a` | 2 | 1 | 50% | `y` |" in text
    assert "| `mmengine.b` | 0 | 0 | - |  |" in text
    assert "- because: `mmengine.a.y`" in text


def test_reasons_by_module_and_by_name():
    assert reason_for("mmengine._strategy.colossalai", "anything").startswith("MMEngine")
    assert reason_for("mmengine.fileio.file_client", "FileClient") is None  # provided now
    assert reason_for("mmengine.dist", "get_rank") is None


def test_tool_fails_under_the_minimum(capsys, monkeypatch):
    spec = importlib.util.spec_from_file_location("compat_coverage", TOOL)
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    monkeypatch.setattr("sys.argv", ["compat_coverage.py", "--minimum", "99.9"])
    assert tool.main() == 1
    captured = capsys.readouterr()
    assert "of MMEngine 0.10.7's 1137 public names" in captured.out
    assert "is under 99.9%" in captured.err
    monkeypatch.setattr("sys.argv", ["compat_coverage.py"])
    assert tool.main() == 0
