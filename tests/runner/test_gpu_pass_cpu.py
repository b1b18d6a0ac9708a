"""The GPU verification pass in CPU mode (``python benchmarks/gpu_pass.py --device cpu``), run
as CI runs it, so that the script and its checks cannot rot while no GPU is at hand: it exits
0, prints the versions and one table, and every check with a CPU analogue passes (the others
are skipped with their reason). One to two minutes on 2 cores."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys

import pytest
from gpu_pass_script import SCRIPT, load_gpu_pass

gpu_pass = load_gpu_pass()

# The rows CPU mode skips, and why: only a CUDA device has them.
SKIPPED_ON_CPU = {
    "preprocessor: pinned, non-blocking copy": "pinned memory needs a CUDA device",
    # DeepSpeed's CPU engine is tested by test_strategies_deepspeed_gloo.py.
    "deepspeed: ZeRO-2 bf16 (CPU) resume": "JIT-builds its shm comm op",
}


#: The optional libraries a check may need, by the name its skip reason gives them.
OPTIONAL_LIBRARIES = {"scikit-learn": "sklearn"}


def _skipped_for_a_missing_library(row: dict) -> bool:
    """A skip that names an optional library which is indeed missing from this environment."""
    if row["result"] != "skip":
        return False
    for name, module in OPTIONAL_LIBRARIES.items():
        if row["reason"].startswith(f"{name} is not installed here"):
            return importlib.util.find_spec(module) is None
    return False


@pytest.fixture(scope="module")
def cpu_pass(tmp_path_factory):
    out = tmp_path_factory.mktemp("gpu_pass")
    command = [sys.executable, str(SCRIPT), "--device", "cpu", "--log-dir", str(out / "logs")]
    # A budget below the timeout: on a slow machine the table still comes, its last checks
    # skipped (and the test failing on them), rather than a kill with no table at all.
    done = subprocess.run(
        [*command, "--budget-s", "360", "--json", str(out / "rows.json")],
        capture_output=True,
        text=True,
        timeout=420,
    )
    rows = json.loads((out / "rows.json").read_text()) if (out / "rows.json").exists() else []
    return done, rows


def test_the_pass_exits_0_with_the_versions_and_one_table(cpu_pass):
    done, rows = cpu_pass
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "torch " in done.stdout and "treadle-runner " in done.stdout
    assert done.stdout.count("check ") == 1 and "| result | figure" in done.stdout
    for row in rows:
        assert row["check"] in done.stdout


@pytest.mark.parametrize("name", list(gpu_pass.CHECKS))
def test_each_check_passes_or_is_skipped_for_want_of_cuda(cpu_pass, name):
    _, rows = cpu_pass
    # A row is named after its check: 'NAME: what it shows' (a check that gave none: 'NAME').
    mine = [row for row in rows if row["check"].split(":")[0] == name]
    assert mine, f"no row of {name} in {[row['check'] for row in rows]}"
    for row in mine:
        if row["check"] in SKIPPED_ON_CPU:
            assert row["result"] == "skip"
            assert SKIPPED_ON_CPU[row["check"]] in row["reason"]
        elif _skipped_for_a_missing_library(row):
            continue  # runner alone in a fresh environment: no scikit-learn for the digits
        else:
            assert row["result"] == "pass", row
            assert row["figure"], row


def test_a_check_that_runs_past_its_limit_is_killed_and_fails(tmp_path):
    (row,) = gpu_pass.run_check("resume", "cpu", 0.5, tmp_path)
    assert (row.check, row.result) == ("resume", "fail")
    assert row.reason.startswith("timed out after 0 s")


def test_checks_the_budget_leaves_no_time_for_are_skipped(tmp_path):
    rows = gpu_pass.run_pass("cpu", ["resume", "amp"], 0, tmp_path)
    assert [(row.check, row.result) for row in rows] == [("resume", "skip"), ("amp", "skip")]
    assert "budget of 0 s is spent" in rows[0].reason


def test_the_table_has_one_line_per_row():
    Row = gpu_pass.Row
    table = gpu_pass.format_table(
        [Row("a", "pass", "1.01x"), Row("bb", "skip", "", "needs a CUDA device")]
    )
    lines = table.splitlines()
    assert len(lines) == 4
    assert lines[2] == "a     | pass   | 1.01x"
    assert lines[3].endswith("| skip   |        | needs a CUDA device")
    with pytest.raises(ValueError, match="result must be one of"):
        Row("a", "ok")
