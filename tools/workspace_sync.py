"""Reinstall the workspace packages whose installed metadata no longer matches their files.

Hatch installs the members of `workspace.members` editable when it creates an environment, and
afterwards checks only third-party dependencies: after a version bump, `treadle.x.__version__`
says 0.1.1 while `importlib.metadata.version("treadle-x")` still says 0.1.0, and the new lower
bounds between siblings are not what pip recorded. An environment kept between runs (a
developer's, or a CI machine's hatch data directory) then fails the version tests for a reason
that is not in the code. The test scripts of hatch.toml call this first; it costs one metadata
read per package when nothing changed.

    python tools/workspace_sync.py          # reinstall what is stale, say what and why
    python tools/workspace_sync.py --check  # only say it; exit 1 if something is stale
"""

from __future__ import annotations

import argparse
import importlib.metadata
import pathlib
import subprocess
import sys
from collections.abc import Callable, Iterable, Iterator

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = pathlib.Path(__file__).resolve().parent.parent
# What the workspace's files say (names, versions, requirements) is read as the release tools
# read it.
sys.path.insert(0, str(ROOT / "tools" / "release"))
from release_workspace import read_packages  # noqa: E402


def spelled(requirements: Iterable[Requirement]) -> set[str]:
    """One spelling per requirement: builds write names canonical ("Sophia-Optimizer" is
    recorded as "sophia-optimizer") and `packaging` orders specifiers. Markers (the extra a
    requirement belongs to) are left out."""
    lines = set()
    for requirement in requirements:
        extras = f"[{','.join(sorted(requirement.extras))}]" if requirement.extras else ""
        lines.add(f"{canonicalize_name(requirement.name)}{extras}{requirement.specifier}")
    return lines


def stale_members(
    root: pathlib.Path,
    installed: Callable[[str], importlib.metadata.PackageMetadata | None],
) -> Iterator[tuple[pathlib.Path, str]]:
    """(package folder, why) for each package of root/packages whose installed metadata is stale.

    `installed(name)` returns the installed distribution's metadata, or None where the
    package is not installed (an environment without it is not this tool's business).
    """
    for package in read_packages(root).values():
        metadata = installed(package.distribution)
        if metadata is None:
            continue
        if metadata["Version"] != str(package.version):
            yield package.path, f"installed {metadata['Version']}, files say {package.version}"
            continue
        recorded = spelled(Requirement(text) for text in metadata.get_all("Requires-Dist") or [])
        declared = spelled(package.requirements)
        if recorded != declared:
            yield package.path, f"requirements changed: {', '.join(sorted(recorded ^ declared))}"


def installed_metadata(name: str) -> importlib.metadata.PackageMetadata | None:
    try:
        return importlib.metadata.metadata(name)
    except importlib.metadata.PackageNotFoundError:
        return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="report only; exit 1 when stale")
    args = parser.parse_args(argv)
    stale = list(stale_members(ROOT, installed_metadata))
    for folder, why in stale:
        print(f"workspace_sync: {folder.relative_to(ROOT)}: {why}")
    if not stale or args.check:
        return 1 if stale else 0
    editable = [arg for folder, _ in stale for arg in ("-e", str(folder))]
    command = [sys.executable, "-m", "pip", "install", "-q", "--no-deps", *editable]
    subprocess.run(command, check=True)
    print(f"workspace_sync: reinstalled {len(stale)} package(s) editable")
    return 0


if __name__ == "__main__":
    sys.exit(main())
