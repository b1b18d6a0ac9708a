"""The layering rule of DESIGN.md: dependencies between treadle packages only point down.

The rule lives in one place, the import-linter contracts of the root pyproject.toml. These
tests run import-linter over the real sources, prove that it catches planted violations
(lazy imports inside functions included), and check that no package's pyproject.toml
declares a dependency that its contract forbids.
"""

from __future__ import annotations

import os
import pathlib
import re
import subprocess
import sys

import pytest
import tomllib

LINT_IMPORTS = pathlib.Path(sys.executable).with_name("lint-imports")


def run_lint_imports(config: pathlib.Path, cwd: pathlib.Path, pythonpath: str | None = None):
    env = dict(os.environ)
    if pythonpath:
        env["PYTHONPATH"] = pythonpath
    return subprocess.run(
        [str(LINT_IMPORTS), "--config", str(config), "--no-cache"],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
    )


def contracts_by_package(root_pyproject: dict) -> dict[str, list[str]]:
    """Map each package name to the modules its contract forbids."""
    forbidden = {}
    for contract in root_pyproject["tool"]["importlinter"]["contracts"]:
        if contract["type"] != "forbidden":
            continue  # treadle.runner's layers contract is about its own subpackages
        (source,) = contract["source_modules"]
        forbidden[source.removeprefix("treadle.")] = contract["forbidden_modules"]
    return forbidden


def declared_violations(pyproject_text: str, forbidden_modules: list[str]) -> list[str]:
    """The treadle distributions a pyproject.toml declares that its package may not import."""
    project = tomllib.loads(pyproject_text)["project"]
    requirements = list(project.get("dependencies", []))
    for extra in project.get("optional-dependencies", {}).values():
        requirements.extend(extra)
    bad = []
    for requirement in requirements:
        match = re.match(r"\s*treadle[-_.]([A-Za-z0-9_]+)", requirement)
        if match and f"treadle.{match.group(1).lower()}" in forbidden_modules:
            bad.append(requirement)
    return bad


def test_every_package_but_compat_has_a_contract(root_pyproject, package_names):
    # compat is the top of the table: it may import everything, so it needs no contract.
    assert set(contracts_by_package(root_pyproject)) == set(package_names) - {"compat"}


def test_sources_keep_the_layering_contracts(repo_root):
    result = run_lint_imports(repo_root / "pyproject.toml", cwd=repo_root)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout


def plant_tree(tmp_path: pathlib.Path, package_names, planted: dict[str, str]) -> str:
    """A stand-in source tree: one empty module per package, and the planted files."""
    src = tmp_path / "src"
    for name in package_names:
        package = src / "treadle" / name
        package.mkdir(parents=True)
        (package / "__init__.py").write_text("")
    for relative, text in planted.items():
        (src / relative).parent.mkdir(parents=True, exist_ok=True)
        (src / relative).write_text(text)
    return str(src)


LAZY_IMPORT = "def later():\n    import {target}  # lazily, inside a function\n"
FROM_IMPORT = "def later():\n    from {target} import something\n"


@pytest.mark.parametrize(
    ("source", "target", "template"),
    [
        ("config", "treadle.logging", LAZY_IMPORT),
        ("logging", "treadle.runner", FROM_IMPORT),
        ("dist", "treadle.registry", LAZY_IMPORT),
        ("visual", "treadle.config", FROM_IMPORT),
        ("fileio", "torch", LAZY_IMPORT),
        ("config", "numpy", FROM_IMPORT),
        ("runner", "treadle.compat", LAZY_IMPORT),
    ],
)
def test_planted_violation_is_caught(tmp_path, repo_root, package_names, source, target, template):
    planted = {f"treadle/{source}/planted.py": template.format(target=target)}
    pythonpath = plant_tree(tmp_path, package_names, planted)
    result = run_lint_imports(repo_root / "pyproject.toml", cwd=tmp_path, pythonpath=pythonpath)
    assert result.returncode != 0, result.stdout
    assert "BROKEN" in result.stdout
    assert f"treadle.{source}.planted -> {target}" in result.stdout


def runner_subpackages(*names: str) -> dict[str, str]:
    return {f"treadle/runner/{name}/__init__.py": "" for name in names}


@pytest.mark.parametrize(
    ("source", "target"),
    [
        ("structures", "dataset"),  # a lower layer importing a higher one
        ("registry", "structures"),
        ("dataset", "evaluator"),  # independent subpackages of one layer
        ("registry", "utils"),
    ],
)
def test_planted_runner_layer_violation_is_caught(
    tmp_path, repo_root, package_names, source, target
):
    planted = runner_subpackages(source, target)
    planted[f"treadle/runner/{source}/planted.py"] = LAZY_IMPORT.format(
        target=f"treadle.runner.{target}"
    )
    pythonpath = plant_tree(tmp_path, package_names, planted)
    result = run_lint_imports(repo_root / "pyproject.toml", cwd=tmp_path, pythonpath=pythonpath)
    assert result.returncode != 0, result.stdout
    assert f"treadle.runner.{source}.planted -> treadle.runner.{target}" in result.stdout


def test_runner_layers_allow_imports_from_above(tmp_path, repo_root, package_names):
    planted = runner_subpackages("evaluator", "structures", "registry")
    planted["treadle/runner/evaluator/planted.py"] = (
        "import treadle.runner.structures\nimport treadle.runner.registry\n"
    )
    pythonpath = plant_tree(tmp_path, package_names, planted)
    result = run_lint_imports(repo_root / "pyproject.toml", cwd=tmp_path, pythonpath=pythonpath)
    assert result.returncode == 0, result.stdout + result.stderr


def test_allowed_lazy_import_is_kept(tmp_path, repo_root, package_names):
    planted = {"treadle/visual/planted.py": LAZY_IMPORT.format(target="treadle.dist")}
    pythonpath = plant_tree(tmp_path, package_names, planted)
    result = run_lint_imports(repo_root / "pyproject.toml", cwd=tmp_path, pythonpath=pythonpath)
    assert result.returncode == 0, result.stdout + result.stderr


def test_pyprojects_declare_only_allowed_treadle_dependencies(
    repo_root, root_pyproject, package_names
):
    forbidden = contracts_by_package(root_pyproject)
    for name in package_names:
        text = (repo_root / "packages" / name / "pyproject.toml").read_text()
        assert declared_violations(text, forbidden.get(name, [])) == [], name


def test_planted_declared_dependency_is_caught(repo_root, root_pyproject):
    forbidden = contracts_by_package(root_pyproject)
    text = (repo_root / "packages" / "dist" / "pyproject.toml").read_text()
    planted_line = 'dependencies = [\n    "treadle-visual>=0.1",\n'
    planted = text.replace("dependencies = [\n", planted_line, 1)
    assert declared_violations(planted, forbidden["dist"]) == ["treadle-visual>=0.1"]
    # Extras count too: an optional dependency is still a dependency.
    planted_extra = text + '\n[project.optional-dependencies]\nx = ["treadle_runner"]\n'
    assert declared_violations(planted_extra, forbidden["dist"]) == ["treadle_runner"]
