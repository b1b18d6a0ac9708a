"""The git side of a release: tags per package, what changed since them, old trees by tag.

Only reads: tags are listed, trees are diffed and archived, nothing in the checkout is
changed (old versions are unpacked into a folder the caller gives).
"""

from __future__ import annotations

import io
import pathlib
import subprocess
import tarfile

from packaging.version import InvalidVersion, Version
from release_workspace import Package, ReleaseError

# What a release ships whose change needs a new version. README.md and CHANGELOG.md are left
# out: fixing their wording needs no release (the next release carries it).
RELEASED_PATHS = ("src", "pyproject.toml")


def git(repo_root: pathlib.Path, *args: str) -> str:
    result = subprocess.run(
        ["git", "-C", str(repo_root), *args], capture_output=True, text=True, check=False
    )
    if result.returncode != 0:
        raise ReleaseError(f"git {' '.join(args)} failed in {repo_root}: {result.stderr.strip()}")
    return result.stdout


def released_versions(repo_root: pathlib.Path, package: Package) -> dict[Version, str]:
    """The versions of `package` that have a tag `treadle-NAME-vX.Y.Z`, each with its tag."""
    tags = git(repo_root, "tag", "--list", f"{package.tag_prefix}*").split()
    versions = {}
    for tag in tags:
        try:
            versions[Version(tag.removeprefix(package.tag_prefix))] = tag
        except InvalidVersion:
            continue  # not a release tag of ours ("treadle-config-vnext")
    return versions


def last_release(repo_root: pathlib.Path, package: Package) -> tuple[Version, str] | None:
    versions = released_versions(repo_root, package)
    if not versions:
        return None
    newest = max(versions)
    return newest, versions[newest]


def changed_files(repo_root: pathlib.Path, package: Package, tag: str) -> list[str]:
    """The released files of `package` that differ between `tag` and the working tree.

    Uncommitted edits and new files git does not ignore count: the check must see what the
    next commit would release, not only what is committed.
    """
    folder = package.path.relative_to(repo_root)
    paths = [str(folder / p) for p in RELEASED_PATHS]
    diffed = git(repo_root, "diff", "--name-only", tag, "--", *paths).split()
    untracked = git(repo_root, "ls-files", "--others", "--exclude-standard", "--", *paths).split()
    return sorted({*diffed, *untracked})


def export_tree(repo_root: pathlib.Path, tag: str, folder: str, into: pathlib.Path) -> pathlib.Path:
    """Unpack `folder` (packages/NAME) as it was at `tag` into `into`; return its path there."""
    archive = subprocess.run(
        ["git", "-C", str(repo_root), "archive", "--format=tar", tag, folder],
        capture_output=True,
        check=False,
    )
    if archive.returncode != 0:
        raise ReleaseError(
            f"git archive {tag} {folder} failed in {repo_root}: {archive.stderr.decode().strip()}"
        )
    with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as tar:
        tar.extractall(into, filter="data")
    return into / folder
