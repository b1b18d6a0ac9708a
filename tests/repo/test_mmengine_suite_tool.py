"""tools/mmengine_suite.py, the command that runs MMEngine's own test suite through treadle.compat
(`hatch run mmsuite:run`): its share, its grouping by cause, its floor, its skip where the suite
is absent, and the documentation page written from its list of deliberate differences.

The real suite runs in CI (.ci/run); here a small stand-in suite of the same layout (tests/,
plugin/treadle_compat_plugin.py, baseline_pass.txt) keeps these tests fast."""

from __future__ import annotations

import importlib.util
import os
import pathlib
import subprocess
import sys
import textwrap

REPO_ROOT = pathlib.Path(__file__).resolve().parents[2]
SCRIPT = REPO_ROOT / "tools" / "mmengine_suite.py"


def load_tool():
    spec = importlib.util.spec_from_file_location("mmengine_suite_tool", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run(tmp_path: pathlib.Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SCRIPT), *args],
        env={**os.environ, **env},
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )


def stand_in_suite(tmp_path: pathlib.Path, floor: int) -> dict[str, str]:
    suite = tmp_path / "suite"
    (suite / "plugin").mkdir(parents=True)
    # The real plugin installs treadle.compat; the stand-in's tests need nothing from it.
    (suite / "plugin" / "treadle_compat_plugin.py").write_text("INSTALLED = True\n")
    (suite / "tests" / "test_area").mkdir(parents=True)
    (suite / "tests" / "test_area" / "test_things.py").write_text(
        textwrap.dedent("""\
            def test_passes():
                assert True

            def test_fails():
                raise ValueError("treadle refuses 42 things")

            def test_needs_a_private_service():
                raise NotImplementedError("no such client")

            def test_not_in_the_baseline():
                raise ValueError("MMEngine fails this one too")
        """)
    )
    baseline = [
        "tests.test_area.test_things::test_passes",
        "tests.test_area.test_things::test_fails",
        "tests.test_area.test_things::test_needs_a_private_service",
    ]
    (suite / "baseline_pass.txt").write_text("\n".join(baseline) + "\n")
    differences = tmp_path / "differences.toml"
    differences.write_text(
        textwrap.dedent(f"""\
            floor = {floor}
            [[difference]]
            cause = "A private service"
            reason = "Its client is not public."
            tests = ["tests.test_area.test_things::test_needs_a_private_service"]
        """)
    )
    return {"TREADLE_MMENGINE_TESTS": str(suite), "TREADLE_SUITE_DIFFERENCES": str(differences)}


def test_the_share_and_the_failures_by_cause(tmp_path):
    done = run(tmp_path, **stand_in_suite(tmp_path, floor=1))
    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout
    assert "1 of 3 baseline tests pass through treadle.compat (33.3%); floor 1" in out
    assert "tests.test_area" in out and "33.3%" in out
    # The deliberate difference is named with its reason, apart from the other failure, which is
    # grouped by its first error line (numbers folded) and names its test.
    assert "1  A private service: Its client is not public." in out
    assert "failure: ValueError: treadle refuses # things" in out
    assert "tests.test_area.test_things::test_fails" in out
    # A test outside the baseline is not counted.
    assert "test_not_in_the_baseline" not in out


def test_a_share_below_the_floor_fails_the_run(tmp_path):
    done = run(tmp_path, **stand_in_suite(tmp_path, floor=2))
    assert done.returncode == 1
    assert "FAILED: 1 is below the floor of 2 (differences.toml)" in done.stdout


def test_a_listed_difference_that_passes_fails_the_run(tmp_path):
    env = stand_in_suite(tmp_path, floor=0)
    test_file = (
        pathlib.Path(env["TREADLE_MMENGINE_TESTS"]) / "tests" / "test_area" / "test_things.py"
    )
    test_file.write_text(
        test_file.read_text().replace('raise NotImplementedError("no such client")', "pass")
    )
    done = run(tmp_path, **env)
    assert done.returncode == 1
    assert "Listed as deliberate differences, yet passing" in done.stdout
    assert "FAILED: 1 listed differences pass; update differences.toml" in done.stdout


def test_a_part_of_the_suite_has_no_floor(tmp_path):
    env = stand_in_suite(tmp_path, floor=3)
    done = run(tmp_path, "tests/test_area/test_things.py", **env)
    assert done.returncode == 0, done.stdout
    assert "tests/test_area/test_things.py: 1 of 3 baseline tests pass" in done.stdout
    assert "floor" not in done.stdout.splitlines()[-1]


def test_without_the_suite_it_says_skipped_and_succeeds(tmp_path):
    done = run(tmp_path, TREADLE_MMENGINE_TESTS=str(tmp_path / "absent"))
    assert done.returncode == 0
    assert done.stdout.startswith("MMEngine's test suite: skipped, its folder is absent")
    assert str(tmp_path / "absent") in done.stdout


def test_the_documentation_page_lists_every_deliberate_difference(tmp_path, monkeypatch):
    tool = load_tool()
    page = tmp_path / "page.md"
    page.write_text(tool.DOCS_PAGE.read_text())
    monkeypatch.setattr(tool, "DOCS_PAGE", page)
    data = tool.load_differences()
    tool.write_docs(data["difference"], data["floor"])
    assert page.read_text() == (REPO_ROOT / "docs" / "compat" / "mmengine-suite.md").read_text(), (
        "docs/compat/mmengine-suite.md is out of date: run python tools/mmengine_suite.py --docs"
    )
    for difference in data["difference"]:
        assert difference["reason"].strip(), difference["cause"]
        for test in difference["tests"]:
            assert f"- `{test}`" in page.read_text()
