"""tools/build_mmcv.py: the downstream suite's first step, which builds mmcv's full wheel once
per machine. A failed build stops the suite with the build's own last lines (the compiler's
error), not with an ImportError of mmcv.ops later; a cached wheel makes it a no-op."""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys
import textwrap

REPO_ROOT = pathlib.Path(__file__).resolve().parents[2]
SCRIPT = REPO_ROOT / "tools" / "build_mmcv.py"
COMPILER_ERROR = "mmcv/ops/csrc/pytorch/nms.cpp:3:10: fatal error: nope.h: No such file"


def build(tmp_path: pathlib.Path, **overrides: str) -> subprocess.CompletedProcess[str]:
    env = dict(
        os.environ,
        TREADLE_WHEEL_DIR=str(tmp_path / "wheels"),
        TREADLE_MMCV_BUILD_DIR=str(tmp_path / "build"),
        # This test's Python instead of a fresh venv (which would install torch: minutes).
        TREADLE_MMCV_BUILD_PYTHON=sys.executable,
        **overrides,
    )
    return subprocess.run(
        [sys.executable, str(SCRIPT)], env=env, capture_output=True, text=True, timeout=300
    )


def test_a_failed_build_exits_1_with_the_compilers_last_lines(tmp_path):
    source = tmp_path / "bogus-mmcv"
    source.mkdir()
    # A source tree whose build fails as a compiler would, after some output of its own.
    (source / "setup.py").write_text(
        textwrap.dedent(f"""\
            import sys
            print("[1/77] c++ -c mmcv/ops/csrc/pytorch/nms.cpp", flush=True)
            sys.exit({COMPILER_ERROR!r})
        """)
    )
    done = build(tmp_path, TREADLE_MMCV_SOURCE=str(source))
    assert done.returncode == 1
    assert "building mmcv 2.1.0 failed" in done.stderr
    assert COMPILER_ERROR in done.stderr
    assert done.stdout == ""
    assert not list((tmp_path / "wheels").rglob("*.whl"))


def test_a_cached_wheel_is_used_without_building(tmp_path):
    folder = tmp_path / "wheels" / "torch-2.13.0"
    folder.mkdir(parents=True)
    wheel = folder / "mmcv-2.1.0-cp311-cp311-linux_x86_64.whl"
    wheel.write_bytes(b"")
    # A source that cannot build proves that nothing was built.
    done = build(tmp_path, TREADLE_MMCV_SOURCE=str(tmp_path / "missing"))
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == str(wheel)
    assert not (tmp_path / "build").exists()


def test_a_prebuilt_wheel_folder_is_only_read(tmp_path):
    # CI machines get the wheel in a read-only shared folder: no lock file or anything else may be
    # written beside it (root ignores permission bits, so compare the folder's listing instead).
    folder = tmp_path / "wheels" / "torch-2.13.0"
    folder.mkdir(parents=True)
    (folder / "mmcv-2.1.0-cp311-cp311-linux_x86_64.whl").write_bytes(b"")
    before = sorted(p.name for p in (tmp_path / "wheels").rglob("*"))
    done = build(tmp_path, TREADLE_MMCV_SOURCE=str(tmp_path / "missing"))
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in (tmp_path / "wheels").rglob("*")) == before
