"""`hatch run release:build PACKAGE...`: the wheel and sdist of each named package in dist/.

    python tools/release/build.py [--out DIR] [--no-twine] PACKAGE...

PACKAGE is a folder name (`config`) or a distribution name (`treadle-config`). Before building,
the fast part of the release check must hold for the named packages (a version bumped where
needed, a CHANGELOG entry, ranges that admit the siblings). After building, `twine check
--strict` must accept every file (the release environment has twine); nothing is uploaded:
`twine upload dist/treadle_config-0.2.0*` is the release manager's step (RELEASING.md).
"""

from __future__ import annotations

import argparse
import pathlib
import subprocess
import sys

from release_rules import fast_rules
from release_wheels import build_distributions
from release_workspace import ReleaseError, changelog_heading, read_packages, select

REPO_ROOT = pathlib.Path(__file__).resolve().parents[2]


def twine_check(files: list[pathlib.Path]) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "twine", "check", "--strict", *map(str, files)],
        capture_output=True,
        text=True,
    )
    if "No module named twine" in result.stderr:
        raise ReleaseError(
            "twine is not installed in this environment: run `hatch run release:build`, whose "
            "environment has it, or pass --no-twine"
        )
    if result.returncode != 0:
        raise ReleaseError(
            f"twine check --strict refused the build:\n{result.stdout}{result.stderr}"
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("packages", nargs="+", metavar="PACKAGE")
    parser.add_argument("--repo", type=pathlib.Path, default=REPO_ROOT)
    parser.add_argument("--out", type=pathlib.Path, help="where to put them (default: REPO/dist)")
    parser.add_argument("--no-twine", action="store_true", help="skip `twine check`")
    args = parser.parse_args(argv)
    repo_root = args.repo.resolve()
    out = (args.out or repo_root / "dist").resolve()
    try:
        packages = read_packages(repo_root)
        chosen = select(packages, args.packages)
        names = {p.distribution for p in chosen}
        problems = [p for p in fast_rules(repo_root, packages) if p.split(":")[0] in names]
        if problems:
            raise ReleaseError(
                "the release check fails for the packages to build:\n  " + "\n  ".join(problems)
            )
        built = []
        for package in chosen:
            heading = changelog_heading(package, package.version) or ""
            if "unreleased" in heading.lower():
                print(
                    f"release build: note: {package.path.name}/CHANGELOG.md still says "
                    f"'{heading}'; put the release date there before tagging",
                    file=sys.stderr,
                )
            for stale in out.glob(f"{package.distribution.replace('-', '_')}-{package.version}*"):
                stale.unlink()  # a rebuild replaces the files of the same version
            built += build_distributions(package.path, out)
        if not args.no_twine:
            twine_check(built)
    except ReleaseError as error:
        print(f"release build: {error}", file=sys.stderr)
        return 1
    for path in built:
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
