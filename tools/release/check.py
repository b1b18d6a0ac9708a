"""`hatch run release:check`: may the packages of this checkout be released as they are?

    python tools/release/check.py [--fast] [--repo PATH] [--keep DIR]

Fast part (what CI runs through tests/release/): versions bumped where released files changed
since the package's last tag `treadle-NAME-vX.Y.Z`, a CHANGELOG.md entry for every version not
tagged yet, sibling ranges that admit the siblings' versions, no dependency DESIGN.md's table
forbids. Full part (the default; --fast skips it): every wheel and sdist builds, the sdist
rebuilds the same wheel, and each package installs alone from its wheel in a fresh virtual
environment and imports, reporting the version it was built with.

Exit status 0 when everything holds, 1 with one line per problem otherwise.
"""

from __future__ import annotations

import argparse
import pathlib
import sys
import tempfile
import time

from release_rules import fast_rules
from release_wheels import (
    build_distributions,
    check_installs_alone,
    check_sdist_rebuilds,
    workspace_pins,
)
from release_workspace import Package, ReleaseError, read_packages

REPO_ROOT = pathlib.Path(__file__).resolve().parents[2]


def full_rules(
    repo_root: pathlib.Path, packages: dict[str, Package], scratch: pathlib.Path
) -> list[str]:
    wheelhouse = scratch / "wheelhouse"
    problems = []
    for package in packages.values():
        try:
            build_distributions(package.path, wheelhouse)
        except ReleaseError as error:
            problems.append(f"{package.distribution}: does not build: {error}")
    if problems:
        return problems
    pins = workspace_pins(repo_root)
    for package in packages.values():
        started = time.perf_counter()
        problems += check_sdist_rebuilds(package, wheelhouse, scratch)
        problems += check_installs_alone(package, wheelhouse, scratch, pins)
        print(
            f"  {package.distribution} {package.version}: built, installed alone, imported "
            f"({time.perf_counter() - started:.0f} s)",
            flush=True,
        )
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repo", type=pathlib.Path, default=REPO_ROOT, help="checkout to check")
    parser.add_argument("--fast", action="store_true", help="skip building and installing")
    parser.add_argument("--keep", type=pathlib.Path, help="build and install under DIR, kept")
    args = parser.parse_args(argv)
    repo_root = args.repo.resolve()
    try:
        packages = read_packages(repo_root)
        problems = fast_rules(repo_root, packages)
        if not args.fast and not problems:
            print(f"release check: building and installing {len(packages)} packages alone")
            if args.keep:
                problems = full_rules(repo_root, packages, args.keep.resolve())
            else:
                with tempfile.TemporaryDirectory(prefix="treadle-release-") as scratch:
                    problems = full_rules(repo_root, packages, pathlib.Path(scratch))
    except ReleaseError as error:
        problems = [str(error)]
    for problem in problems:
        print(f"release check: {problem}", file=sys.stderr)
    if problems:
        print(f"release check: {len(problems)} problem(s)", file=sys.stderr)
        return 1
    summary = ", ".join(f"{p.distribution} {p.version}" for p in packages.values())
    print(f"release check: ok ({summary})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
