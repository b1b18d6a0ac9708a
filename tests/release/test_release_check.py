"""`release:check`'s fast part: on the real checkout, and on scratch repositories where it
must fail (a source change without a bump, a bump without a CHANGELOG entry, a sibling range
that excludes the sibling's version, a forbidden dependency) or must pass."""

from __future__ import annotations

from release_scratch import REPO_ROOT, run_tool

CONFIG_INIT = "packages/config/src/treadle/config/__init__.py"


def problems(result) -> str:
    assert result.returncode == 1, result.stdout + result.stderr
    return result.stderr


def test_the_checkout_passes_the_fast_check():
    # CI runs this: every package changed since its tag was bumped and has its entry, etc.
    result = run_tool("check.py", "--fast")
    assert result.returncode == 0, result.stderr
    assert "release check: ok (" in result.stdout


def test_before_the_first_tags_every_package_needs_an_entry(scratch):
    assert scratch.check().returncode == 0  # the copy: no tag, and a 0.1.0 entry each
    changelog = "packages/registry/CHANGELOG.md"
    scratch.replace(changelog, "## 0.1.0", "## 0.0.9")
    err = problems(scratch.check())
    assert "treadle-registry: packages/registry/CHANGELOG.md has no entry '## 0.1.0'" in err
    assert "treadle-config" not in err


def test_tagged_and_unchanged_passes(scratch):
    scratch.tag_all()
    # Wording of the README and CHANGELOG is not released code: no bump needed.
    scratch.edit("packages/config/README.md", "\nOne more line.\n", append=True)
    scratch.edit("packages/config/CHANGELOG.md", "\nA note.\n", append=True)
    scratch.commit("docs")
    result = scratch.check()
    assert result.returncode == 0, result.stderr


def test_source_change_without_a_bump_fails(scratch):
    scratch.tag_all()
    scratch.edit(CONFIG_INIT, "\nANSWER = 42\n", append=True)
    err = problems(scratch.check())  # uncommitted edits count
    assert (
        "treadle-config: 1 released file(s) changed since tag treadle-config-v0.1.0 "
        f"({CONFIG_INIT}) but the version is still 0.1.0: bump it in {CONFIG_INIT}"
    ) in err
    assert "add a '## <new version>' entry to packages/config/CHANGELOG.md" in err
    assert err.count("treadle-") == err.count("treadle-config") + err.count("treadle-v")


def test_new_untracked_source_file_counts_as_a_change(scratch):
    scratch.tag_all()
    scratch.edit("packages/logging/src/treadle/logging/extra.py", "X = 1\n")
    err = problems(scratch.check())
    assert "treadle-logging: 1 released file(s) changed since tag treadle-logging-v0.1.0" in err


def test_dependency_change_in_pyproject_needs_a_bump(scratch):
    scratch.tag_all()
    scratch.replace("packages/config/pyproject.toml", '"pyyaml>=5.4"', '"pyyaml>=6"')
    scratch.commit("raise pyyaml")
    err = problems(scratch.check())
    assert "packages/config/pyproject.toml" in err and "still 0.1.0" in err


def test_bump_without_a_changelog_entry_fails(scratch):
    scratch.tag_all()
    scratch.edit(CONFIG_INIT, "\nANSWER = 42\n", append=True)
    scratch.set_version("config", "0.1.1")
    err = problems(scratch.check())
    assert (
        "treadle-config: packages/config/CHANGELOG.md has no entry '## 0.1.1' for the version "
        f"in {CONFIG_INIT}"
    ) in err


def test_bump_with_an_empty_entry_fails(scratch):
    scratch.tag_all()
    scratch.set_version("config", "0.1.1")
    scratch.add_changelog_entry("config", "0.1.1", text="")
    err = problems(scratch.check())
    assert "the entry '## 0.1.1' of packages/config/CHANGELOG.md is empty" in err


def test_bump_with_an_entry_passes(scratch):
    scratch.tag_all()
    scratch.edit(CONFIG_INIT, "\nANSWER = 42\n", append=True)
    scratch.set_version("config", "0.1.1")
    scratch.add_changelog_entry("config", "0.1.1", "- `ANSWER`.")
    scratch.commit("config 0.1.1")
    assert scratch.check().returncode == 0
    # Once 0.1.1 is tagged, the next change needs the next bump.
    scratch.tag("config", "0.1.1")
    assert scratch.check().returncode == 0
    scratch.edit(CONFIG_INIT, "\nQUESTION = 6 * 9\n", append=True)
    assert "since tag treadle-config-v0.1.1" in problems(scratch.check())


def test_version_lower_than_the_last_release_fails(scratch):
    scratch.tag_all()
    scratch.set_version("config", "0.0.9")
    err = problems(scratch.check())
    assert "treadle-config: version 0.0.9" in err
    assert "is lower than its last release 0.1.0 (tag treadle-config-v0.1.0)" in err


def test_sibling_range_excluding_the_siblings_version_fails(scratch):
    scratch.tag_all()
    # treadle-logging makes a breaking change: 0.2.0 while 0.x.
    scratch.edit("packages/logging/src/treadle/logging/__init__.py", "\nX = 1\n", append=True)
    scratch.set_version("logging", "0.2.0")
    scratch.add_changelog_entry("logging", "0.2.0", "- Removed something.")
    err = problems(scratch.check())
    # Every package that declares treadle-logging (compat too, once it exists).
    dependents = [
        path.parent.name
        for path in sorted((scratch.root / "packages").glob("*/pyproject.toml"))
        if '"treadle-logging>=0.1.0,<0.2"' in path.read_text()
    ]
    assert {"registry", "dist", "visual", "runner"} <= set(dependents)
    for dependent in dependents:
        assert (
            f"treadle-{dependent}: packages/{dependent}/pyproject.toml requires "
            "'treadle-logging<0.2,>=0.1.0', which excludes treadle-logging 0.2.0 (its version "
            "in packages/logging/src/treadle/logging/__init__.py)"
        ) in err, err
    # Widening the ranges changes the dependents: each needs its own bump and entry.
    for dependent in dependents:
        scratch.replace(
            f"packages/{dependent}/pyproject.toml",
            '"treadle-logging>=0.1.0,<0.2"',
            '"treadle-logging>=0.1.0,<0.3"',
        )
    err = problems(scratch.check())
    assert "excludes" not in err
    assert "treadle-registry: 1 released file(s) changed since tag" in err
    for dependent in dependents:
        scratch.set_version(dependent, "0.1.1")
        scratch.add_changelog_entry(dependent, "0.1.1", "- Works with treadle-logging 0.2.")
    result = scratch.check()
    assert result.returncode == 0, result.stderr


def test_sibling_range_without_an_upper_bound_fails(scratch):
    scratch.replace(
        "packages/registry/pyproject.toml", '"treadle-logging>=0.1.0,<0.2"', '"treadle-logging"'
    )
    err = problems(scratch.check())
    assert (
        "treadle-registry: packages/registry/pyproject.toml requires 'treadle-logging' with no "
        "lower bound; declare a range like 'treadle-logging>=0.1,<0.2' (RELEASING.md)"
    ) in err
    scratch.replace(
        "packages/registry/pyproject.toml", '"treadle-logging"', '"treadle-logging>=0.1"'
    )
    assert "requires 'treadle-logging>=0.1' with no upper bound" in problems(scratch.check())


def test_forbidden_dependency_fails(scratch):
    scratch.replace(
        "packages/dist/pyproject.toml",
        '"treadle-logging>=0.1.0,<0.2",',
        '"treadle-logging>=0.1.0,<0.2",\n    "treadle-config>=0.1.0,<0.2",',
    )
    err = problems(scratch.check())
    assert (
        "treadle-dist: packages/dist/pyproject.toml declares 'treadle-config>=0.1.0,<0.2', "
        "which DESIGN.md's table forbids (the layering contract of treadle.dist in the root "
        "pyproject.toml)"
    ) in err


def test_forbidden_dependency_in_an_extra_fails(scratch):
    scratch.edit(
        "packages/config/pyproject.toml",
        '\n[project.optional-dependencies]\nall = ["treadle-runner>=0.1.0,<0.2"]\n',
        append=True,
    )
    err = problems(scratch.check())
    assert "treadle-config: packages/config/pyproject.toml declares 'treadle-runner" in err


def test_a_checkout_without_packages_is_an_error(tmp_path):
    result = run_tool("check.py", "--fast", "--repo", str(tmp_path))
    assert result.returncode == 1
    assert f"release check: {tmp_path / 'packages'}: no packages/*/pyproject.toml" in result.stderr


def test_the_check_reads_the_checkout_it_is_given(scratch):
    # The tools never look at the checkout they live in when given another one.
    scratch.set_version("config", "0.1.5")
    scratch.add_changelog_entry("config", "0.1.5")
    result = scratch.check()
    assert "treadle-config 0.1.5" in result.stdout, result.stderr
    assert scratch.root != REPO_ROOT
