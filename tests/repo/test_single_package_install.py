"""Each package installs and works alone, from its wheel, in a fresh virtual environment.

Projects with nothing to do with training depend on treadle-config or treadle-fileio only;
treadle-logging sits under everything and treadle-registry only needs it; treadle-dist,
treadle-visual and treadle-runner bring torch and numpy and nothing else heavy. For each of
them, and for treadle-fileio with its ``s3`` extra (plus the moto server its S3 tests start):
build every wheel, create a new virtual environment, install only that distribution (pip
resolves its declared dependencies, and finds sibling treadle wheels through --find-links),
then run its tests/NAME there. The environment has no torch and no numpy unless the package
itself asked for them; tests needing a tracker library (or torchmetrics, or MMEngine) skip
there. A few process-heavy runner tests are left to the main environment's run unless
TREADLE_LONG_TESTS=1 (see LEFT_TO_THE_MAIN_RUN).
"""

from __future__ import annotations

import importlib.metadata
import os
import pathlib
import subprocess
import sys
import venv
import zipfile

import pytest

# (distribution, extra): what gets installed alone, and what else its tests need there.
ALONE = [
    ("logging", ""),
    ("config", ""),
    ("registry", ""),
    ("fileio", ""),
    ("fileio", "s3"),
    ("dist", ""),
    ("visual", ""),
    ("runner", ""),
    ("compat", ""),
]
# What else a test run needs there, pinned to the workspace's versions: the S3 server, and the
# local CPU torch (pinned, or pip would resolve treadle-dist's range to the newest CUDA build).
TEST_REQUIREMENTS = {
    "s3": ["moto[server]"],
    "dist": ["torch"],
    "visual": ["torch"],
    "runner": ["torch"],
    # PyTorch's multi-process test case (mmengine.testing._internal) needs expecttest; the
    # coverage table of docs/compat/coverage.md counts it as provided.
    "compat": ["torch", "expecttest"],
}
# Left out of the fresh environment's run by default (about 2 of its 5 minutes): each starts
# several processes to train and kill (or compiles), which the main environment's run does as
# well; nothing they import is specific to them, and the CLI and launchers they use are covered
# in the fresh environment by tests/runner/test_runner_launch.py. TREADLE_LONG_TESTS=1 runs all.
LEFT_TO_THE_MAIN_RUN = {
    "runner": [
        "--ignore=tests/runner/test_resume_named.py",
        "--ignore=tests/runner/test_gpu_pass_cpu.py",
        "--ignore=tests/runner/test_fault_ranks_health.py",
        "--ignore=tests/runner/test_elastic_resume.py",
        "--ignore=tests/runner/test_fault_elastic_nodes.py",
        "--deselect=tests/runner/test_runner_compile.py::test_compile_target_names_a_method",
        "--deselect=tests/runner/test_fault_nonfinite.py::test_rollback_in_an_epoch_based_run",
        "--deselect=tests/runner/test_fault_ranks_agree.py"
        "::test_sigterm_to_one_rank_preempts_both_at_the_same_iteration",
    ],
}
LONG = os.environ.get("TREADLE_LONG_TESTS") == "1"
# The heavy packages a distribution may bring; the others must stay out.
HEAVY = ("torch", "numpy")
EXPECTED_HEAVY = {
    "dist": {"torch", "numpy"},
    "visual": {"torch", "numpy"},
    "runner": {"torch", "numpy"},
    "compat": {"torch", "numpy"},
}


def run(command: list[str], cwd: pathlib.Path, **kwargs) -> subprocess.CompletedProcess:
    result = subprocess.run(command, cwd=cwd, capture_output=True, text=True, **kwargs)
    assert result.returncode == 0, (
        f"{' '.join(command)} failed with {result.returncode}:\n{result.stdout}\n{result.stderr}"
    )
    return result


@pytest.fixture(scope="module")
def wheelhouse(tmp_path_factory, repo_root, package_names) -> pathlib.Path:
    out = tmp_path_factory.mktemp("wheels")
    hatchling = pathlib.Path(sys.executable).with_name("hatchling")
    for name in package_names:
        build = [str(hatchling), "build", "-t", "wheel", "-d", str(out)]
        run(build, cwd=repo_root / "packages" / name)
    return out


def test_every_package_builds_a_wheel(wheelhouse, package_names):
    built = sorted(p.name.split("-")[0] for p in wheelhouse.glob("*.whl"))
    assert built == sorted(f"treadle_{name}" for name in package_names)


def test_no_wheel_ships_a_treadle_init(wheelhouse):
    for wheel in wheelhouse.glob("*.whl"):
        names = zipfile.ZipFile(wheel).namelist()
        assert "treadle/__init__.py" not in names, wheel.name


def test_every_wheel_ships_its_py_typed_marker(wheelhouse):
    # PEP 561: without it, type checkers treat every name of the installed package as Any.
    for wheel in wheelhouse.glob("*.whl"):
        name = wheel.name.split("-")[0].removeprefix("treadle_")
        assert f"treadle/{name}/py.typed" in zipfile.ZipFile(wheel).namelist(), wheel.name


def pinned(requirement: str) -> str:
    """The requirement at the version the workspace has, so both environments test the same."""
    name = requirement.split("[")[0]
    return f"{requirement}=={importlib.metadata.version(name)}"


@pytest.mark.parametrize(("name", "extra"), ALONE, ids=[f"{n}[{e}]" if e else n for n, e in ALONE])
def test_package_alone_in_a_fresh_environment(name, extra, wheelhouse, tmp_path, repo_root):
    env_dir = tmp_path / f"venv-{name}"
    venv.create(env_dir, with_pip=True, clear=True)
    python = str(env_dir / "bin" / "python")
    distribution = f"treadle-{name}[{extra}]" if extra else f"treadle-{name}"
    extras = TEST_REQUIREMENTS.get(extra or name, [])
    test_requirements = [pinned(r) for r in ["pytest", *extras]]
    run(
        [
            python,
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
            "--find-links",
            str(wheelhouse),
            distribution,
            *test_requirements,
        ],
        cwd=tmp_path,
    )
    # The package comes from the wheel inside the new environment, not from the source tree,
    # and nothing heavy came along with it that it does not need.
    probe = (
        f"import importlib.util as u, treadle.{name} as m; print(m.__file__); "
        f"print(*[h for h in {HEAVY!r} if u.find_spec(h) is not None])"
    )
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    lines = run([python, "-c", probe], cwd=tmp_path, env=env).stdout.splitlines()
    assert lines[0].startswith(str(env_dir)), lines[0]
    installed = set(lines[1].split()) if len(lines) > 1 else set()
    expected = EXPECTED_HEAVY.get(name, set())
    assert installed == expected, f"treadle-{name} installed {installed or 'none'} of {HEAVY}"
    left_out = [] if LONG else LEFT_TO_THE_MAIN_RUN.get(name, [])
    tests = run(
        [python, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider", *left_out, f"tests/{name}"],
        cwd=repo_root,
        env=env,
    )
    assert " passed" in tests.stdout
    if extra == "s3":
        # With the extra and the server installed, no S3 test may skip for want of either.
        skipped = [line for line in tests.stdout.splitlines() if line.startswith("SKIPPED")]
        assert not [line for line in skipped if "boto3" in line or "moto" in line], skipped
