"""Building wheels and sdists, and proving each installs alone in a fresh environment.

`build_distributions` is the one place the repository builds its packages (the release build,
the full check and the minimum-versions test all use it): hatchling, run from the Python that
runs the tools, straight from packages/NAME, no build isolation, so nothing is downloaded.
"""

from __future__ import annotations

import email.parser
import os
import pathlib
import subprocess
import sys
import tarfile
import venv
import zipfile

import tomllib
from release_workspace import Package, ReleaseError

HATCHLING = pathlib.Path(sys.executable).with_name("hatchling")


def run(command: list[str], cwd: pathlib.Path, **kwargs) -> subprocess.CompletedProcess:
    result = subprocess.run(command, cwd=cwd, capture_output=True, text=True, **kwargs)
    if result.returncode != 0:
        raise ReleaseError(
            f"`{' '.join(command)}` failed with {result.returncode} in {cwd}:\n"
            f"{result.stdout[-4000:]}\n{result.stderr[-4000:]}"
        )
    return result


def artifact_stem(package: Package) -> str:
    return f"{package.distribution.replace('-', '_')}-{package.version}"


def build_distributions(
    package_dir: pathlib.Path, out: pathlib.Path, targets: tuple[str, ...] = ("wheel", "sdist")
) -> list[pathlib.Path]:
    """Build the `targets` of the package in `package_dir` into `out`; return the new files."""
    out.mkdir(parents=True, exist_ok=True)
    before = set(out.iterdir())
    command = [str(HATCHLING), "build", "-d", str(out)]
    for target in targets:
        command += ["-t", target]
    run(command, cwd=package_dir)
    return sorted(set(out.iterdir()) - before)


def wheel_of(out: pathlib.Path, package: Package) -> pathlib.Path:
    return out / f"{artifact_stem(package)}-py3-none-any.whl"


def sdist_of(out: pathlib.Path, package: Package) -> pathlib.Path:
    return out / f"{artifact_stem(package)}.tar.gz"


def wheel_metadata(wheel: pathlib.Path):
    with zipfile.ZipFile(wheel) as archive:
        name = next(n for n in archive.namelist() if n.endswith(".dist-info/METADATA"))
        return email.parser.Parser().parsestr(archive.read(name).decode())


def _wheel_files(wheel: pathlib.Path) -> set[str]:
    with zipfile.ZipFile(wheel) as archive:
        # RECORD lists hashes that differ by build time stamps; the names are what matter.
        return {n for n in archive.namelist() if not n.endswith(".dist-info/RECORD")}


def check_sdist_rebuilds(package: Package, out: pathlib.Path, scratch: pathlib.Path) -> list[str]:
    """The sdist unpacks and builds a wheel holding the same files as the direct wheel.

    This is what pip does when it installs from the sdist; a file missing from the sdist's
    include list shows up here as a file missing from the rebuilt wheel.
    """
    sdist, wheel = sdist_of(out, package), wheel_of(out, package)
    for built in (sdist, wheel):
        if not built.is_file():
            return [f"{package.distribution}: {built.name} was not built"]
    unpacked = scratch / f"sdist-{package.folder}"
    with tarfile.open(sdist) as tar:
        tar.extractall(unpacked, filter="data")
    (root,) = unpacked.iterdir()
    rebuilt_dir = scratch / f"rebuilt-{package.folder}"
    (rebuilt,) = build_distributions(root, rebuilt_dir, targets=("wheel",))
    missing = _wheel_files(wheel) - _wheel_files(rebuilt)
    extra = _wheel_files(rebuilt) - _wheel_files(wheel)
    if missing or extra:
        return [
            f"{package.distribution}: the wheel built from {sdist.name} differs from the one built "
            f"from the tree (missing {sorted(missing)[:5]}, extra {sorted(extra)[:5]}): fix "
            f"[tool.hatch.build.targets.sdist] include in "
            f"packages/{package.folder}/pyproject.toml"
        ]
    return []


def workspace_pins(repo_root: pathlib.Path, names: tuple[str, ...] = ("torch",)) -> list[str]:
    """The default environment's pins of `names` (hatch.toml): what a fresh venv should get.

    Without the torch pin pip resolves treadle-dist's `torch>=2.1` to the newest build, which
    may be a CUDA one with gigabytes of nvidia-* wheels.
    """
    hatch = tomllib.loads((repo_root / "hatch.toml").read_text())
    dependencies = hatch.get("envs", {}).get("default", {}).get("dependencies", [])
    return [d for d in dependencies if d.split("==")[0].split("[")[0].strip() in names]


def fresh_venv(where: pathlib.Path) -> pathlib.Path:
    """A new virtual environment with pip; returns its python."""
    venv.create(where, with_pip=True, clear=True)
    return where / "bin" / "python"


def pip_install(
    python: pathlib.Path,
    wheelhouse: pathlib.Path | list[pathlib.Path],
    *requirements: str,
    pins: list[str] = (),
) -> None:
    """Install `requirements` from the index and `wheelhouse`, held to `pins` where they
    come up (a constraint installs nothing by itself)."""
    houses = wheelhouse if isinstance(wheelhouse, list) else [wheelhouse]
    constraints = python.parents[1] / "pins.txt"  # beside the venv it is for
    constraints.write_text("".join(f"{pin}\n" for pin in pins))
    run(
        [
            str(python),
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
            *[f"--find-links={house}" for house in houses],
            "--constraint",
            str(constraints),
            *requirements,
        ],
        cwd=python.parents[1],
    )


def clean_env() -> dict[str, str]:
    """The environment for a child python: no PYTHONPATH that could reach the source tree."""
    return {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}


def check_installs_alone(
    package: Package, wheelhouse: pathlib.Path, scratch: pathlib.Path, pins: list[str]
) -> list[str]:
    """A fresh venv with only this distribution (and its declared dependencies) imports it."""
    env_dir = scratch / f"venv-{package.folder}"
    python = fresh_venv(env_dir)
    try:
        pip_install(python, wheelhouse, f"{package.distribution}=={package.version}", pins=pins)
    except ReleaseError as error:
        return [f"{package.distribution}: does not install alone from its wheel: {error}"]
    probe = (
        f"import treadle.{package.folder} as m, importlib.metadata as md; "
        f"print(m.__file__); print(m.__version__); print(md.version({package.distribution!r}))"
    )
    result = subprocess.run(
        [str(python), "-c", probe], cwd=scratch, capture_output=True, text=True, env=clean_env()
    )
    if result.returncode != 0:
        return [
            f"{package.distribution}: installed alone, `import treadle.{package.folder}` "
            f"fails:\n{result.stderr[-2000:]}"
        ]
    module_file, version, metadata_version = result.stdout.split()
    problems = []
    if not module_file.startswith(str(env_dir)):
        problems.append(f"{package.distribution}: imported from {module_file}, not the venv")
    if not version == metadata_version == str(package.version):
        problems.append(
            f"{package.distribution}: __version__ {version} and metadata {metadata_version} "
            f"disagree with {package.version}"
        )
    return problems
