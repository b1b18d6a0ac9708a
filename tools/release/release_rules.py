"""The rules `release:check` enforces without building anything (its fast part).

Each rule returns a list of problems, one sentence each that names the package, the file and
what to do; an empty list means the rule holds. The rules:

- a package whose released files changed since its last tag has a new, higher version;
- a package whose version has no tag yet has a CHANGELOG.md entry for that version;
- every range on a sibling has both bounds and admits the sibling's current version;
- no package declares a sibling that DESIGN.md's table (the import-linter contracts of the root
  pyproject.toml) forbids it to import.
"""

from __future__ import annotations

import functools
import importlib.util
import pathlib

import tomllib
from release_git import changed_files, last_release
from release_workspace import Package, changelog_entries, sibling_requirements

TOOLS_REPO = pathlib.Path(__file__).resolve().parents[2]


@functools.cache
def _layering_module():
    """tests/repo/test_layering.py: the one reading of the contracts (shared, not copied)."""
    path = TOOLS_REPO / "tests" / "repo" / "test_layering.py"
    spec = importlib.util.spec_from_file_location("treadle_repo_test_layering", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def version_rules(repo_root: pathlib.Path, packages: dict[str, Package]) -> list[str]:
    problems = []
    for package in packages.values():
        where = package.path.relative_to(repo_root)
        release = last_release(repo_root, package)
        if release is not None:
            released, tag = release
            changed = changed_files(repo_root, package, tag)
            if package.version < released:
                problems.append(
                    f"{package.distribution}: version {package.version} "
                    f"({package.version_file.relative_to(repo_root)}) is lower than its last "
                    f"release {released} (tag {tag})"
                )
                continue
            if package.version == released:
                if changed:
                    shown = ", ".join(changed[:5]) + (" ..." if len(changed) > 5 else "")
                    problems.append(
                        f"{package.distribution}: {len(changed)} released file(s) changed since "
                        f"tag {tag} ({shown}) but the version is still {released}: bump it in "
                        f"{package.version_file.relative_to(repo_root)} (see RELEASING.md) and "
                        f"add a '## <new version>' entry to {where}/CHANGELOG.md"
                    )
                continue  # released and unchanged: nothing to say
        # Unreleased version (first release, or bumped since the tag): it needs its entry.
        entry = changelog_entries(package).get(package.version)
        if entry is None:
            problems.append(
                f"{package.distribution}: {where}/CHANGELOG.md has no entry "
                f"'## {package.version}' for the version in "
                f"{package.version_file.relative_to(repo_root)}"
            )
        elif not entry:
            problems.append(
                f"{package.distribution}: the entry '## {package.version}' of "
                f"{where}/CHANGELOG.md is empty: say what changed"
            )
    return problems


def range_rules(repo_root: pathlib.Path, packages: dict[str, Package]) -> list[str]:
    problems = []
    for package in packages.values():
        pyproject = (package.path / "pyproject.toml").relative_to(repo_root)
        for sibling, requirement in sibling_requirements(package, packages):
            operators = {spec.operator for spec in requirement.specifier}
            has_lower = bool(operators & {">=", ">", "==", "~=", "==="})
            has_upper = bool(operators & {"<", "<=", "==", "~=", "==="})
            if not (has_lower and has_upper):
                missing = "lower" if not has_lower else "upper"
                problems.append(
                    f"{package.distribution}: {pyproject} requires '{requirement}' with no "
                    f"{missing} bound; declare a range like "
                    f"'{sibling.distribution}>={sibling.version.major}.{sibling.version.minor},"
                    f"<{sibling.version.major}.{sibling.version.minor + 1}' (RELEASING.md)"
                )
            elif not requirement.specifier.contains(sibling.version, prereleases=True):
                problems.append(
                    f"{package.distribution}: {pyproject} requires '{requirement}', which "
                    f"excludes {sibling.distribution} {sibling.version} (its version in "
                    f"{sibling.version_file.relative_to(repo_root)})"
                )
    return problems


def layering_rules(repo_root: pathlib.Path, packages: dict[str, Package]) -> list[str]:
    layering = _layering_module()
    root_pyproject = tomllib.loads((repo_root / "pyproject.toml").read_text())
    if "importlinter" not in root_pyproject.get("tool", {}):
        return [f"{repo_root / 'pyproject.toml'}: no [tool.importlinter] contracts to check"]
    forbidden = layering.contracts_by_package(root_pyproject)
    problems = []
    for package in packages.values():
        pyproject = package.path / "pyproject.toml"
        bad = layering.declared_violations(pyproject.read_text(), forbidden.get(package.folder, []))
        for requirement in bad:
            problems.append(
                f"{package.distribution}: {pyproject.relative_to(repo_root)} declares "
                f"'{requirement}', which DESIGN.md's table forbids (the layering contract of "
                f"treadle.{package.folder} in the root pyproject.toml)"
            )
    return problems


def fast_rules(repo_root: pathlib.Path, packages: dict[str, Package]) -> list[str]:
    return [
        *version_rules(repo_root, packages),
        *range_rules(repo_root, packages),
        *layering_rules(repo_root, packages),
    ]
