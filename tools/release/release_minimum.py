"""The minimum-versions run: a package with the oldest siblings its ranges allow.

For each sibling a package requires, the candidates are the sibling's released versions (its
tags) and its version in the working tree; the oldest candidate every range admits is the one
installed. Old versions are built from `git archive TAG` unpacked under a scratch folder (the
checkout is never touched), next to wheels of the working tree, into one local wheelhouse.
The package's tests (tests/NAME of the working tree) then run in that environment.
"""

from __future__ import annotations

import dataclasses
import pathlib
import subprocess

from packaging.version import Version
from release_git import export_tree, released_versions
from release_wheels import build_distributions, clean_env, fresh_venv, pip_install, wheel_of
from release_workspace import Package, ReleaseError, sibling_requirements


@dataclasses.dataclass(frozen=True)
class Oldest:
    """The oldest version of `sibling` that `package`'s ranges allow, and where it comes from."""

    sibling: Package
    version: Version
    tag: str | None  # None: the working tree (the version has no tag yet)

    @property
    def is_current(self) -> bool:
        return self.version == self.sibling.version

    def __str__(self) -> str:
        source = f"tag {self.tag}" if self.tag else "working tree"
        return f"{self.sibling.distribution}=={self.version} ({source})"


def oldest_siblings(
    repo_root: pathlib.Path, package: Package, packages: dict[str, Package]
) -> list[Oldest]:
    """The oldest allowed version of each sibling `package` requires (extras left out)."""
    ranges: dict[str, list] = {}
    for sibling, requirement in sibling_requirements(package, packages):
        if requirement.marker is None:  # an extra's requirement is not installed by default
            ranges.setdefault(sibling.folder, []).append(requirement)
    found = []
    for folder, requirements in ranges.items():
        sibling = packages[folder]
        candidates = {sibling.version: None, **released_versions(repo_root, sibling)}
        admitted = [
            version
            for version in candidates
            if all(r.specifier.contains(version, prereleases=True) for r in requirements)
        ]
        if not admitted:
            shown = ", ".join(str(v) for v in sorted(candidates))
            raise ReleaseError(
                f"{package.distribution}: no version of {sibling.distribution} ({shown}) "
                f"satisfies {', '.join(str(r) for r in requirements)}"
            )
        oldest = min(admitted)
        found.append(Oldest(sibling, oldest, candidates[oldest]))
    return found


def minimum_versions_run(
    repo_root: pathlib.Path,
    package: Package,
    packages: dict[str, Package],
    scratch: pathlib.Path,
    pins: list[str],
    wheelhouse: pathlib.Path | None = None,
) -> subprocess.CompletedProcess:
    """Install `package` with its oldest siblings in a fresh venv, run tests/NAME there.

    `wheelhouse` may hold the working tree's wheels already (built once per session); the old
    versions are added to a wheelhouse of this run. Returns pytest's completed process.
    """
    oldest = oldest_siblings(repo_root, package, packages)
    here = scratch / f"minimum-{package.folder}"
    house = here / "wheelhouse"
    house.mkdir(parents=True, exist_ok=True)
    current = wheelhouse or house
    for member in packages.values():
        if not wheel_of(current, member).is_file():
            build_distributions(member.path, current, targets=("wheel",))
    for old in oldest:
        if old.is_current:
            continue  # the working tree's wheel (the check keeps it equal to its tag)
        tree = export_tree(repo_root, old.tag, f"packages/{old.sibling.folder}", here / old.tag)
        build_distributions(tree, house, targets=("wheel",))
    python = fresh_venv(here / "venv")
    requirements = [f"{package.distribution}=={package.version}"]
    requirements += [f"{old.sibling.distribution}=={old.version}" for old in oldest]
    links = [house] if current == house else [house, current]
    pip_install(python, links, *requirements, "pytest", pins=pins)
    return subprocess.run(
        [str(python), "-m", "pytest", "-q", "-p", "no:cacheprovider", f"tests/{package.folder}"],
        cwd=repo_root,
        env=clean_env(),
        capture_output=True,
        text=True,
    )
