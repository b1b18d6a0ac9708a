"""The GPU verification pass's checks on a CUDA GPU, one test each (marked ``cuda``: skipped
without a GPU; ``pytest -m cuda`` selects them). Each runs the check exactly as
``python benchmarks/gpu_pass.py`` does, in a subprocess of its own with the check's time limit;
a check skipped for a missing optional library (deepspeed, scikit-learn) is a skip here too."""

from __future__ import annotations

import pytest
from gpu_pass_script import load_gpu_pass

gpu_pass = load_gpu_pass()

pytestmark = pytest.mark.cuda


@pytest.mark.parametrize("name", list(gpu_pass.CHECKS))
def test_check_on_cuda(name, tmp_path):
    limit = gpu_pass.CHECKS[name].cuda_limit_s
    rows = gpu_pass.run_check(name, "cuda", limit, tmp_path)
    print(gpu_pass.format_table(rows))
    failed = [row for row in rows if row.result == "fail"]
    assert not failed, gpu_pass.format_table(failed)
    skipped = [row for row in rows if row.result == "skip"]
    if skipped and len(skipped) == len(rows):
        pytest.skip("; ".join(row.reason for row in skipped))
