"""Build mmcv's full wheel (with its C++ ops) against the pinned CPU torch, once per machine.

mmdetection and mmsegmentation import `mmcv.ops` (NMS, RoIAlign, ...), which mmcv-lite lacks, and
PyPI has no mmcv 2.x wheel for torch 2.13. The source of mmcv 2.1.0 builds unpatched against it:
77 C++ files, about 51 CPU-minutes, so the wheel is cached outside the repository and this script
is a no-op once it is there. The build runs in a throwaway virtual environment of its own (torch,
numpy, setuptools<80 for mmcv's setup.py, ninja for parallel compiles), never in the caller's.

    python tools/build_mmcv.py                 # build if missing; print the wheel's path
    TREADLE_WHEEL_DIR=/somewhere python tools/build_mmcv.py

Environment overrides:
    TREADLE_WHEEL_DIR      the wheel cache (default ~/.cache/treadle/wheels); the wheel lies in a
                           subfolder named after the torch it was built against (its C++ ABI)
    TREADLE_MMCV_BUILD_DIR the build venv and log (default ~/.cache/treadle/mmcv-build)
    TREADLE_MMCV_SOURCE    what pip builds (default mmcv==2.1.0; a source folder works too)
    TREADLE_MMCV_BUILD_PYTHON  build with this Python, whose environment already holds the
                           build requirements, instead of the script's own venv
    MAX_JOBS               parallel compiles (default: every core)

On failure it exits 1 and prints the build log's last lines, so that the downstream suite fails
with the compiler's error rather than a later ImportError of mmcv.ops.
"""

from __future__ import annotations

import fcntl
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile
import venv

MMCV_VERSION = "2.1.0"
TORCH_PIN = "torch==2.13.0"
# The environment mmcv 2.1.0 was checked to build in (setuptools below 80, as with the issue's
# check); ninja lets torch's cpp_extension compile MAX_JOBS files at once.
BUILD_REQUIREMENTS = [TORCH_PIN, "numpy", "setuptools<80", "ninja", "wheel"]
TAIL_LINES = 60
ERROR_LINES = 20
# What gcc and ninja print for a failed compile.
ERROR_LINE = re.compile(r"\berror:|^FAILED: ")
CACHE = pathlib.Path.home() / ".cache" / "treadle"


def wheel_dir() -> pathlib.Path:
    """Where the wheel is kept: one subfolder per torch, since the ops link against its ABI."""
    root = pathlib.Path(os.environ.get("TREADLE_WHEEL_DIR", CACHE / "wheels"))
    return root / TORCH_PIN.replace("==", "-")


def build_dir() -> pathlib.Path:
    return pathlib.Path(os.environ.get("TREADLE_MMCV_BUILD_DIR", CACHE / "mmcv-build"))


def cached_wheel(folder: pathlib.Path) -> pathlib.Path | None:
    wheels = sorted(folder.glob(f"mmcv-{MMCV_VERSION}-*.whl"))
    return wheels[-1] if wheels else None


def log_tail(log: pathlib.Path, lines: int = TAIL_LINES) -> str:
    """The log's last lines, after its first error lines: a failed compile is followed by
    setuptools' and pip's tracebacks, which can push the compiler's message out of the tail."""
    text = log.read_text(errors="replace").splitlines() if log.exists() else []
    errors = [line for line in text if ERROR_LINE.search(line)][:ERROR_LINES]
    tail = text[-lines:]
    head = [line for line in errors if line not in tail]
    return "\n".join([*head, *(["..."] if head else []), *tail])


def run_logged(command: list[str], log: pathlib.Path, env: dict[str, str]) -> None:
    """Run one step, appending its output to the log; raise with the log's tail on failure."""
    with log.open("a") as out:
        out.write(f"\n$ {' '.join(command)}\n")
        out.flush()
        result = subprocess.run(command, stdout=out, stderr=subprocess.STDOUT, env=env)
    if result.returncode != 0:
        raise BuildFailed(f"{' '.join(command[2:4])} exited {result.returncode}", log)


class BuildFailed(RuntimeError):
    def __init__(self, what: str, log: pathlib.Path) -> None:
        super().__init__(
            f"building mmcv {MMCV_VERSION} failed ({what}); last lines of {log}:\n{log_tail(log)}"
        )


def build_venv(folder: pathlib.Path, log: pathlib.Path) -> pathlib.Path:
    """The build environment; kept between runs (its torch install is the slow part)."""
    python = folder / "venv" / "bin" / "python"
    marker = folder / "venv" / "requirements.txt"
    wanted = "\n".join(BUILD_REQUIREMENTS)
    if python.exists() and marker.exists() and marker.read_text() == wanted:
        return python
    shutil.rmtree(folder / "venv", ignore_errors=True)
    venv.EnvBuilder(with_pip=True).create(folder / "venv")
    pip = [str(python), "-m", "pip", "install", "-q", *BUILD_REQUIREMENTS]
    run_logged(pip, log, dict(os.environ))
    marker.write_text(wanted)
    return python


def build(target: pathlib.Path) -> pathlib.Path:
    folder = build_dir()
    folder.mkdir(parents=True, exist_ok=True)
    log = folder / "build.log"
    log.write_text("")
    given = os.environ.get("TREADLE_MMCV_BUILD_PYTHON")
    python = pathlib.Path(given) if given else build_venv(folder, log)
    env = dict(os.environ)
    env["MMCV_WITH_OPS"] = "1"
    env.setdefault("MAX_JOBS", str(os.cpu_count() or 1))
    # torch's cpp_extension finds ninja on PATH: the venv's bin holds it.
    env["PATH"] = f"{python.parent}{os.pathsep}{env.get('PATH', '')}"
    env.pop("PYTHONPATH", None)
    source = os.environ.get("TREADLE_MMCV_SOURCE", f"mmcv=={MMCV_VERSION}")
    with tempfile.TemporaryDirectory(dir=folder) as scratch:
        command = [str(python), "-m", "pip", "wheel", "-v", "--no-build-isolation", "--no-deps"]
        run_logged([*command, "-w", scratch, source], log, env)
        built = cached_wheel(pathlib.Path(scratch))
        if built is None:
            raise BuildFailed(f"no mmcv-{MMCV_VERSION} wheel came out of {source}", log)
        target.mkdir(parents=True, exist_ok=True)
        # Rename into place, so that a wheel in the cache is always a whole one.
        partial = target / (built.name + ".partial")
        shutil.copy2(built, partial)
        partial.rename(target / built.name)
    return target / built.name


def main() -> int:
    target = wheel_dir()
    # A prebuilt wheel (a CI machine's read-only TREADLE_WHEEL_DIR) is used as it is: nothing,
    # not even a lock file, is written where it lies.
    wheel = cached_wheel(target)
    if wheel is None:
        target.mkdir(parents=True, exist_ok=True)
        build_dir().mkdir(parents=True, exist_ok=True)
        # Two callers at once (a background build and the test suite): the second waits, then
        # finds the first one's wheel.
        with open(build_dir() / ".lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            wheel = cached_wheel(target)
            if wheel is None:
                print(
                    f"building mmcv {MMCV_VERSION} (about 28 min on 2 idle cores) ...",
                    file=sys.stderr,
                )
                try:
                    wheel = build(target)
                except BuildFailed as failure:
                    print(failure, file=sys.stderr)
                    return 1
    print(wheel)
    return 0


if __name__ == "__main__":
    sys.exit(main())
