"""A toolbox importing an MMEngine name treadle does not provide: the downstream tests' failure
shows treadle.compat's error naming the module and the name, not a bare exit status.

A stand-in toolbox script (no real toolbox needed) runs the way the suite runs mmdet's and
mmseg's tools (downstream_runs.run, then Finished.check)."""

from __future__ import annotations

import pytest
from downstream_runs import engine_command, run

#: A module-level name of MMEngine 0.10.7 that treadle leaves out on purpose.
MISSING = "from mmengine.utils.path import find_vcs_root"


def test_a_missing_mmengine_name_is_named_in_the_failure(tmp_path):
    tools = tmp_path / "tinybox" / "tools"
    tools.mkdir(parents=True)
    (tools / "train.py").write_text(f"import mmengine.runner\n{MISSING}\n")
    finished = run(engine_command("treadle", tools / "train.py", "tiny.py"), tmp_path)
    with pytest.raises(AssertionError) as failure:
        finished.check()
    message = str(failure.value)
    assert "exited 1" in message
    assert (
        "MissingNameError: mmengine.utils.path.find_vcs_root is not provided by treadle" in message
    )
