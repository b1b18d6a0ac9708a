"""`hatch run release:minimum [PACKAGE...]`: each package's tests with its oldest siblings.

    python tools/release/minimum.py [--all] [--keep DIR] [PACKAGE...]

For each package (all by default), install it in a fresh venv with the oldest version of each
sibling that its ranges allow (built from the sibling's release tag), and run tests/NAME there.
A package whose oldest siblings are all their current versions is the single-package install
that tests/repo/test_single_package_install.py already runs: skipped unless --all.
A failure means a range claims more than the code supports: raise its lower bound.
"""

from __future__ import annotations

import argparse
import pathlib
import sys
import tempfile

from release_minimum import minimum_versions_run, oldest_siblings
from release_wheels import workspace_pins
from release_workspace import ReleaseError, read_packages, select

REPO_ROOT = pathlib.Path(__file__).resolve().parents[2]


def run_all(repo_root: pathlib.Path, names: list[str], everything: bool, scratch: pathlib.Path):
    packages = read_packages(repo_root)
    chosen = select(packages, names) if names else list(packages.values())
    pins = workspace_pins(repo_root, ("torch", "pytest"))
    failed = []
    for package in chosen:
        oldest = oldest_siblings(repo_root, package, packages)
        shown = ", ".join(map(str, oldest)) or "no siblings"
        if not oldest:
            print(f"{package.distribution}: skipped, it requires no sibling")
            continue
        if not everything and all(old.is_current for old in oldest):
            print(f"{package.distribution}: skipped, its oldest siblings are the current ones")
            continue
        print(f"{package.distribution} with {shown}: ", end="", flush=True)
        result = minimum_versions_run(
            repo_root, package, packages, scratch, pins, wheelhouse=scratch / "current"
        )
        last = (result.stdout.strip().splitlines() or ["(no output)"])[-1]
        print(last)
        if result.returncode != 0:
            failed.append(package.distribution)
            print(result.stdout[-6000:], result.stderr[-2000:], sep="\n", file=sys.stderr)
    return failed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("packages", nargs="*", metavar="PACKAGE")
    parser.add_argument("--repo", type=pathlib.Path, default=REPO_ROOT)
    parser.add_argument("--all", action="store_true", help="also packages at current siblings")
    parser.add_argument("--keep", type=pathlib.Path, help="work under DIR and keep it")
    args = parser.parse_args(argv)
    try:
        if args.keep:
            failed = run_all(args.repo.resolve(), args.packages, args.all, args.keep.resolve())
        else:
            with tempfile.TemporaryDirectory(prefix="treadle-minimum-") as scratch:
                failed = run_all(
                    args.repo.resolve(), args.packages, args.all, pathlib.Path(scratch)
                )
    except ReleaseError as error:
        print(f"minimum versions: {error}", file=sys.stderr)
        return 1
    if failed:
        print(
            f"minimum versions: {', '.join(failed)} failed with their oldest allowed siblings: "
            "raise the lower bound of the range that admits a version the code does not "
            "support (RELEASING.md)",
            file=sys.stderr,
        )
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
