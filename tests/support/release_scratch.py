"""Helpers of the release tests (tests/release/): the release tools on sys.path, running them,
and scratch repositories.

A scratch repository is a copy of what the release tools read (packages/, the root
pyproject.toml with the layering contracts, hatch.toml) in a new git repository under
pytest's tmp_path, where a test commits, tags and edits freely; the real checkout is only read.
"""

from __future__ import annotations

import os
import pathlib
import re
import shutil
import subprocess
import sys

REPO_ROOT = pathlib.Path(__file__).resolve().parents[2]
TOOLS = REPO_ROOT / "tools" / "release"
sys.path.insert(0, str(TOOLS))

GIT_IDENTITY = ["-c", "user.name=Release Test", "-c", "user.email=release@example.invalid"]


def git(repo: pathlib.Path, *args: str) -> str:
    result = subprocess.run(
        ["git", *GIT_IDENTITY, "-C", str(repo), *args], capture_output=True, text=True
    )
    assert result.returncode == 0, f"git {' '.join(args)}: {result.stderr}"
    return result.stdout


def run_tool(script: str, *args: str, cwd: pathlib.Path = REPO_ROOT):
    """Run tools/release/SCRIPT with this interpreter; return the completed process."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    return subprocess.run(
        [sys.executable, str(TOOLS / script), *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        env=env,
    )


class ScratchRepo:
    """A git repository holding a copy of the workspace's packages, for one test.

    Example:
        >>> repo = ScratchRepo.copy_of(REPO_ROOT, tmp_path)
        >>> repo.tag_all()
        >>> repo.edit("packages/config/src/treadle/config/__init__.py", "x = 1\\n", append=True)
        >>> repo.check().returncode
        1
    """

    def __init__(self, root: pathlib.Path):
        self.root = root

    @classmethod
    def copy_of(cls, source: pathlib.Path, into: pathlib.Path) -> ScratchRepo:
        root = into / "repo"

        def ignore(folder: str, names: list[str]) -> set[str]:
            # Caches, and build outputs (packages/NAME/dist, not the folder packages/dist).
            built = {"dist", "build"} if "pyproject.toml" in names else set()
            return {n for n in names if n == "__pycache__" or n.endswith(".egg-info")} | built

        shutil.copytree(source / "packages", root / "packages", ignore=ignore)
        for name in ("pyproject.toml", "hatch.toml", ".gitignore"):
            shutil.copy2(source / name, root / name)
        git(root, "init", "--quiet", "--initial-branch=main")
        repo = cls(root)
        # Every package at 0.1.0 with a 0.1.0 entry on top of its CHANGELOG, whatever the real
        # workspace has reached since: the tests spell out the versions they bump to.
        for folder in repo.folders():
            repo.set_version(folder, "0.1.0")
            # Sibling ranges raised since then come back to the 0.1.0 they all are here.
            pyproject = root / "packages" / folder / "pyproject.toml"
            pyproject.write_text(
                re.sub(
                    r"(treadle-[a-z]+)>=0\.1\.\d+,<0\.2", r"\1>=0.1.0,<0.2", pyproject.read_text()
                )
            )
            # The entries of later versions go: the tests add the ones they need.
            changelog = root / "packages" / folder / "CHANGELOG.md"
            head, _, rest = changelog.read_text().partition("\n## ")
            _, released, older = f"\n## {rest}".partition("\n## 0.1.0")
            if released:
                changelog.write_text(f"{head}\n## 0.1.0{older}")
            else:
                changelog.write_text(
                    f"{head}\n## 0.1.0 (2026-11-23)\n\n- The package.\n\n## {rest}"
                )
        repo.commit("the workspace as copied, every package at 0.1.0")
        return repo

    def commit(self, message: str) -> None:
        git(self.root, "add", "--all")
        git(self.root, "commit", "--quiet", "--allow-empty", "-m", message)

    def tag(self, folder: str, version: str) -> str:
        name = f"treadle-{folder}-v{version}"
        git(self.root, "tag", name)
        return name

    def tag_all(self) -> None:
        for folder in self.folders():
            self.tag(folder, self.version(folder))

    def folders(self) -> list[str]:
        return sorted(p.parent.name for p in (self.root / "packages").glob("*/pyproject.toml"))

    def version_file(self, folder: str) -> pathlib.Path:
        return self.root / "packages" / folder / "src" / "treadle" / folder / "__init__.py"

    def version(self, folder: str) -> str:
        from release_workspace import read_version

        return str(read_version(self.version_file(folder)))

    def set_version(self, folder: str, version: str) -> None:
        path = self.version_file(folder)
        old = self.version(folder)
        path.write_text(path.read_text().replace(f'"{old}"', f'"{version}"', 1))

    def add_changelog_entry(self, folder: str, version: str, text: str = "- A change.") -> None:
        path = self.root / "packages" / folder / "CHANGELOG.md"
        head, marker, rest = path.read_text().partition("\n## ")
        path.write_text(f"{head}\n## {version} (unreleased)\n\n{text}\n{marker}{rest}")

    def edit(self, relative: str, text: str, append: bool = False) -> None:
        path = self.root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text((path.read_text() if append and path.exists() else "") + text)

    def replace(self, relative: str, old: str, new: str) -> None:
        path = self.root / relative
        text = path.read_text()
        assert old in text, f"{old!r} not in {relative}"
        path.write_text(text.replace(old, new))

    def check(self, *args: str):
        return run_tool("check.py", "--fast", "--repo", str(self.root), *args)
