"""Run MMEngine's own test suite against treadle through treadle.compat, and judge the result.

MMEngine 0.10.7's tests/ (kept in the project's shared folder, ``../shared/mmengine-tests``, with
``baseline_pass.txt``: the tests that pass with MMEngine itself) is treadle's definition of
"behaves like MMEngine". This script copies the suite to a scratch folder (the shared one may be
read-only), runs it with every ``import mmengine`` resolved to treadle (the suite's own pytest
plugin calls ``treadle.compat.install()``; by default only the baseline's tests, the others fail
with MMEngine too), and prints:

- the share of the baseline that passes, overall and by area (``tests/test_config``, ...);
- every failing baseline test, grouped by cause: first the deliberate differences listed in
  ``tools/mmengine_suite_differences.toml`` (each with its reason; the compat documentation's
  page ``docs/compat/mmengine-suite.md`` is written from the same file), then anything else,
  grouped by its first error line.

It exits 1 when the whole suite was run and fewer baseline tests pass than the floor of that file,
or when a test listed there as a deliberate difference passes (the list must stay true), and 0
with a plain "skipped" where the suite's folder is absent (a user's clone).

    hatch run mmsuite:run                       # the whole suite (about 3 minutes on 2 cores)
    hatch run mmsuite:run tests/test_config     # a part of it: share only, no floor
    hatch run mmsuite:run --all                 # every test, not only the baseline's
    python tools/mmengine_suite.py --docs       # rewrite docs/compat/mmengine-suite.md

Environment: TREADLE_MMENGINE_TESTS names the suite's folder (default ../shared/mmengine-tests
beside the repository); TREADLE_SUITE_DIFFERENCES another differences file (the tests of this
script use it). The tests run in one process, in the suite's order, as the baseline was recorded
(some of them read ``sys.argv`` or switch the start method of multiprocessing for the rest).
"""

from __future__ import annotations

import argparse
import collections
import fnmatch
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

import tomllib

REPO = pathlib.Path(__file__).resolve().parent.parent
DIFFERENCES = REPO / "tools" / "mmengine_suite_differences.toml"
DOCS_PAGE = REPO / "docs" / "compat" / "mmengine-suite.md"
DOCS_BEGIN = "<!-- generated from tools/mmengine_suite_differences.toml: begin -->"
DOCS_END = "<!-- generated from tools/mmengine_suite_differences.toml: end -->"


def suite_folder() -> pathlib.Path:
    given = os.environ.get("TREADLE_MMENGINE_TESTS")
    return pathlib.Path(given) if given else REPO.parent / "shared" / "mmengine-tests"


def differences_file() -> pathlib.Path:
    return pathlib.Path(os.environ.get("TREADLE_SUITE_DIFFERENCES", DIFFERENCES))


def load_differences() -> dict:
    """The floor and the deliberate differences: ``{"floor": int, "difference": [{cause,
    reason, tests}]}``; a test id may be a glob (``...TestPetrelBackend::*``)."""
    with differences_file().open("rb") as file:
        return tomllib.load(file)


def cause_of(test: str, differences: list[dict]) -> dict | None:
    for difference in differences:
        # An exact id first: a parametrized one holds brackets, which a glob reads as a class.
        patterns = difference["tests"]
        if test in patterns or any(fnmatch.fnmatchcase(test, p) for p in patterns):
            return difference
    return None


def junit_results(xml: pathlib.Path) -> dict[str, tuple[str, str]]:
    """``test id -> (outcome, first line of the message)``; ids as in baseline_pass.txt."""
    results: dict[str, tuple[str, str]] = {}
    for case in ET.parse(xml).iter("testcase"):
        test = f"{case.get('classname')}::{case.get('name')}"
        outcome, message = "passed", ""
        for child in case:
            if child.tag in ("failure", "error", "skipped"):
                outcome = child.tag
                lines = (child.get("message") or "").strip().splitlines()
                message = lines[0] if lines else child.tag
        # A test reported twice (an error in teardown after a pass) keeps its worst outcome.
        if results.get(test, ("passed",))[0] == "passed":
            results[test] = (outcome, message)
    return results


def selected(baseline: list[str], paths: list[str]) -> list[str]:
    """The baseline tests under the given test paths (``tests/test_config``, a file, ...)."""
    prefixes = [re.sub(r"\.py$", "", p.rstrip("/")).replace("/", ".") for p in paths]
    return [
        t for t in baseline if any(t == p or t.startswith((p + ".", p + "::")) for p in prefixes)
    ]


def area(test: str) -> str:
    return ".".join(test.split(".")[:2])


def node_id(suite: pathlib.Path, test: str) -> str:
    """pytest's node id of a baseline test id (``tests.test_x.test_y.TestZ::test_w`` ->
    ``tests/test_x/test_y.py::TestZ::test_w``): the longest dotted prefix that is a file."""
    dotted, _, name = test.partition("::")
    parts = dotted.split(".")
    for end in range(len(parts), 0, -1):
        path = "/".join(parts[:end]) + ".py"
        if (suite / path).is_file():
            return "::".join([path, *parts[end:], name])
    return test  # not a file of the suite: pytest reports it as not found


def run_pytest(suite: pathlib.Path, scratch: pathlib.Path, targets: list[str]) -> pathlib.Path:
    copy = scratch / "mmengine-tests"
    shutil.copytree(suite, copy)
    xml = scratch / "junit.xml"
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(copy / "plugin"), env.get("PYTHONPATH")]))
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
    command += ["-p", "treadle_compat_plugin", "--continue-on-collection-errors"]
    command += ["--junitxml", str(xml)]
    log = scratch / "log"
    with log.open("w") as out:
        subprocess.run(
            [*command, *targets], cwd=copy, env=env, stdout=out, stderr=subprocess.STDOUT
        )
    if not xml.exists():
        sys.exit(f"pytest wrote no report; its output:\n{log.read_text()[-4000:]}")
    return xml


def report(
    base: list[str], results: dict[str, tuple[str, str]], differences: list[dict]
) -> tuple[int, list[str]]:
    """Print the share by area and the failures by cause; give the number passing and the
    listed differences that passed."""
    passing = [t for t in base if results.get(t, ("missing",))[0] == "passed"]
    by_area = collections.Counter(area(t) for t in base)
    passed_by_area = collections.Counter(area(t) for t in passing)
    print(f"\n{'area':<28}{'pass':>6}{'of':>6}{'share':>8}")
    for name in sorted(by_area):
        n, k = by_area[name], passed_by_area[name]
        print(f"{name:<28}{k:>6}{n:>6}{100 * k / n:>7.1f}%")
    failing = [t for t in base if t not in set(passing)]
    deliberate: dict[str, list[str]] = collections.defaultdict(list)
    other: dict[str, list[str]] = collections.defaultdict(list)
    for test in failing:
        difference = cause_of(test, differences)
        if difference is not None:
            deliberate[difference["cause"]].append(test)
        else:
            outcome, message = results.get(test, ("missing", "not collected (an import error)"))
            head = re.sub(r"0x[0-9a-f]+|/tmp/\S+|\d+(\.\d+)?", "#", message)[:160]
            other[f"{outcome}: {head}"].append(test)
    if deliberate:
        print("\nFailing by a deliberate difference (tools/mmengine_suite_differences.toml):")
        for difference in differences:
            tests = deliberate.get(difference["cause"], [])
            if tests:
                # The reason's first sentence; the documentation page has the whole.
                first = " ".join(difference["reason"].split()).split(". ")[0]
                print(f"{len(tests):5d}  {difference['cause']}: {first}.")
    if other:
        print("\nFailing for another cause (fix it, or argue it in the differences file):")
        for head, tests in sorted(other.items(), key=lambda kv: -len(kv[1])):
            print(f"{len(tests):5d}  {head}")
            for test in tests[:5]:
                print(f"         {test}")
    listed_passing = [t for t in passing if cause_of(t, differences) is not None]
    if listed_passing:
        print("\nListed as deliberate differences, yet passing (take them off the list):")
        for test in listed_passing:
            print(f"         {test}")
    return len(passing), listed_passing


def write_docs(differences: list[dict], floor: int) -> None:
    """Rewrite the generated part of docs/compat/mmengine-suite.md from the differences file."""
    lines = [DOCS_BEGIN, ""]
    for difference in differences:
        lines += [f"### {difference['cause']}", "", difference["reason"].strip(), ""]
        lines += [f"- `{test}`" for test in difference["tests"]]
        lines.append("")
    lines += [f"The command fails when fewer than {floor} baseline tests pass.", "", DOCS_END]
    text = DOCS_PAGE.read_text()
    start, end = text.index(DOCS_BEGIN), text.index(DOCS_END) + len(DOCS_END)
    DOCS_PAGE.write_text(text[:start] + "\n".join(lines) + text[end:])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("paths", nargs="*", help="parts of the suite (default: tests, the whole)")
    parser.add_argument("--docs", action="store_true", help="rewrite the documentation page")
    parser.add_argument(
        "--all",
        action="store_true",
        help="run every test of the paths, not only the baseline's (as run_compat.sh does)",
    )
    args = parser.parse_args(argv)
    data = load_differences()
    differences, floor = data["difference"], data["floor"]
    if args.docs:
        write_docs(differences, floor)
        return 0
    suite = suite_folder()
    if not (suite / "baseline_pass.txt").exists():
        print(
            f"MMEngine's test suite: skipped, its folder is absent ({suite}). It is kept in the "
            "project's shared folder beside the repository (or name it in TREADLE_MMENGINE_TESTS)."
        )
        return 0
    paths = args.paths or ["tests"]
    base = selected((suite / "baseline_pass.txt").read_text().split(), paths)
    with tempfile.TemporaryDirectory(prefix="treadle-mmengine-suite-") as scratch:
        # The baseline's tests only, by default: the others fail with MMEngine too, and some of
        # them (multi-process tests that time out) take minutes.
        targets = paths if args.all else [node_id(suite, test) for test in base]
        results = junit_results(run_pytest(suite, pathlib.Path(scratch), targets))
    passing, listed_passing = report(base, results, differences)
    whole = paths == ["tests"]
    share = 100 * passing / max(len(base), 1)
    print(
        f"\nMMEngine's suite {' '.join(paths)}: {passing} of {len(base)} baseline tests pass "
        f"through treadle.compat ({share:.1f}%)" + (f"; floor {floor}" if whole else "")
    )
    if whole and passing < floor:
        print(f"FAILED: {passing} is below the floor of {floor} ({differences_file().name})")
        return 1
    if listed_passing:
        listed = len(listed_passing)
        print(f"FAILED: {listed} listed differences pass; update {differences_file().name}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
