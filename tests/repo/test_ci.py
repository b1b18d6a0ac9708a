"""CI runs the README's test command, so a newcomer's first command is the one CI proves."""

import re


def test_ci_runs_the_readme_test_command(repo_root):
    readme = (repo_root / "README.md").read_text()
    # The workspace's tests, the light packages' on every supported Python (the light matrix),
    # then the downstream toolbox's (tests/downstream, its own env).
    pattern = (
        r"^python3 -m pip install \"hatch==[^\n]*python3 -m hatch run test"
        r" && python3 -m hatch run light:test"
        r" && python3 -m hatch run downstream:test$"
    )
    commands = re.findall(pattern, readme, re.M)
    assert len(commands) == 1, "the README names one test command"
    ci = (repo_root / ".ci" / "run").read_text().splitlines()
    assert commands[0] in ci


def test_hatch_pin_of_readme_is_the_one_of_ci(repo_root):
    pins = set(re.findall(r"hatch==[0-9.]+", (repo_root / "README.md").read_text()))
    assert pins == set(re.findall(r"hatch==[0-9.]+", (repo_root / ".ci" / "run").read_text()))


def test_ci_runs_mmengines_suite_where_the_shared_folder_holds_it(repo_root):
    ci = (repo_root / ".ci" / "run").read_text()
    assert "if [ -d ../shared/mmengine-tests ]; then" in ci
    assert "python3 -m hatch run mmsuite:run" in ci
    # The prebuilt mmcv wheel of the shared folder, where it is there.
    assert "TREADLE_WHEEL_DIR" in ci and "../shared/wheels" in ci
