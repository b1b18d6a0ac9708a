"""What the release tools know about the workspace: its packages, versions and changelogs.

Everything is read from files (packages/*/pyproject.toml, each package's `__version__` line,
CHANGELOG.md), never by importing a package, so the tools work on any checkout: the real one,
an old tag unpacked into /tmp, or a scratch repository built by a test.
"""

from __future__ import annotations

import dataclasses
import pathlib
import re
import sys

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

# tools/workspace_sync.py reads the workspace through this module on every tested Python, 3.10's
# included (hatch's light matrix), where tomllib is the tomli package.
if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

VERSION_LINE = re.compile(r"""^__version__\s*=\s*["']([^"']+)["']""", re.M)
# "## 0.2.0", "## 0.2.0 (unreleased)", "## [0.2.0] - 2026-11-23": the Keep a Changelog forms.
CHANGELOG_HEADING = re.compile(r"^##\s+\[?v?(\d[^\s\]]*)\]?(.*)$", re.M)


class ReleaseError(Exception):
    """A problem with the workspace that stops a release tool; the message says what to fix."""


@dataclasses.dataclass(frozen=True)
class Package:
    """One distribution of the workspace, as its files describe it.

    Example:
        >>> pkg = read_packages(pathlib.Path("."))["logging"]
        >>> pkg.distribution, str(pkg.version)
        ('treadle-logging', '0.1.0')
    """

    folder: str  # "logging": packages/logging, import treadle.logging
    distribution: str  # "treadle-logging"
    version: Version
    version_file: pathlib.Path
    path: pathlib.Path
    requirements: tuple[Requirement, ...]  # dependencies and every extra's

    @property
    def tag_prefix(self) -> str:
        return f"{self.distribution}-v"

    def tag(self, version: Version | None = None) -> str:
        return f"{self.tag_prefix}{version or self.version}"


def read_version(version_file: pathlib.Path) -> Version:
    match = VERSION_LINE.search(version_file.read_text())
    if match is None:
        raise ReleaseError(f'{version_file}: no `__version__ = "X.Y.Z"` line')
    return Version(match.group(1))


def read_package(path: pathlib.Path) -> Package:
    """The package whose pyproject.toml lies in `path` (packages/NAME)."""
    pyproject_file = path / "pyproject.toml"
    pyproject = tomllib.loads(pyproject_file.read_text())
    project = pyproject["project"]
    try:
        version_path = pyproject["tool"]["hatch"]["version"]["path"]
    except KeyError:
        raise ReleaseError(
            f"{pyproject_file}: [tool.hatch.version] path is missing; every package reads its "
            "version from its __init__.py"
        ) from None
    texts = list(project.get("dependencies", []))
    for extra in project.get("optional-dependencies", {}).values():
        texts.extend(extra)
    requirements = []
    for text in texts:
        try:
            requirements.append(Requirement(text))
        except ValueError as error:
            raise ReleaseError(f"{pyproject_file}: requirement {text!r}: {error}") from None
    return Package(
        folder=path.name,
        distribution=canonicalize_name(project["name"]),
        version=read_version(path / version_path),
        version_file=path / version_path,
        path=path,
        requirements=tuple(requirements),
    )


def read_packages(repo_root: pathlib.Path) -> dict[str, Package]:
    """Every package under packages/, by folder name, in folder order."""
    found = sorted((repo_root / "packages").glob("*/pyproject.toml"))
    if not found:
        raise ReleaseError(f"{repo_root / 'packages'}: no packages/*/pyproject.toml")
    return {p.parent.name: read_package(p.parent) for p in found}


def sibling_requirements(package: Package, packages: dict[str, Package]):
    """(sibling, requirement) for each requirement of `package` on another workspace package."""
    by_distribution = {p.distribution: p for p in packages.values()}
    for requirement in package.requirements:
        sibling = by_distribution.get(canonicalize_name(requirement.name))
        if sibling is not None:
            yield sibling, requirement


def select(packages: dict[str, Package], names: list[str]) -> list[Package]:
    """The packages named on a command line, by folder ("config") or distribution name."""
    import difflib

    chosen = []
    for name in names:
        package = packages.get(canonicalize_name(name).removeprefix("treadle-"))
        if package is None:
            known = [*packages, *(p.distribution for p in packages.values())]
            close = difflib.get_close_matches(name, known, n=3)
            hint = f"; did you mean {', '.join(close)}?" if close else ""
            raise ReleaseError(
                f"no package {name!r} in packages/ (known: {', '.join(packages)}){hint}"
            )
        chosen.append(package)
    return chosen


def changelog_entries(package: Package) -> dict[Version, str]:
    """The CHANGELOG.md sections of `package` by version, each with its text below the heading."""
    changelog = package.path / "CHANGELOG.md"
    if not changelog.is_file():
        return {}
    text = changelog.read_text()
    headings = list(CHANGELOG_HEADING.finditer(text))
    entries = {}
    for index, heading in enumerate(headings):
        end = headings[index + 1].start() if index + 1 < len(headings) else len(text)
        try:
            version = Version(heading.group(1))
        except ValueError:
            continue  # "## Unreleased" and other headings that name no version
        entries[version] = text[heading.end() : end].strip()
    return entries


def changelog_heading(package: Package, version: Version) -> str | None:
    """The heading line of `version`'s entry ("## 0.1.0 (unreleased)"), or None."""
    changelog = package.path / "CHANGELOG.md"
    if not changelog.is_file():
        return None
    for heading in CHANGELOG_HEADING.finditer(changelog.read_text()):
        try:
            if Version(heading.group(1)) == version:
                return heading.group(0).strip()
        except ValueError:
            continue
    return None


def installed_closure(package: Package, packages: dict[str, Package]) -> set[str]:
    """The distributions installing `package` brings: its own and its siblings' requirements
    (extras left out), by canonical name, the treadle siblings included."""
    by_distribution = {p.distribution: p for p in packages.values()}
    seen: set[str] = set()
    stack = [package]
    while stack:
        current = stack.pop()
        for requirement in current.requirements:
            if requirement.marker is not None:
                continue
            name = canonicalize_name(requirement.name)
            if name in seen:
                continue
            seen.add(name)
            if name in by_distribution:
                stack.append(by_distribution[name])
    return seen
