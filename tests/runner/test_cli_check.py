"""``treadle train --check CONFIG``: builds everything without training and reports every
problem at once, each with its config key, file and line."""

from __future__ import annotations

import os

import pytest
from runner_toy_model import toy_cfg

from treadle.config import Config
from treadle.runner.cli.main import main


def write(path, cfg: dict) -> str:
    Config(cfg).dump(str(path))
    return str(path)


def line_of(path: str, text: str) -> int:
    with open(path, encoding="utf-8") as file:
        return next(n for n, line in enumerate(file, 1) if text in line)


def three_mistakes(work_dir) -> dict:
    cfg = toy_cfg(work_dir)
    cfg["optim_wrapper"] = dict(type="OptimWrapper", optimizer=dict(type="SDG", lr=0.01))
    cfg["default_hooks"] = dict(checkpoint=dict(type="CheckpointHok"))
    cfg["val_evaluator"] = dict(type="RunnerToyMetrc")
    return cfg


def test_every_problem_is_reported_at_once(tmp_path, capsys):
    work_dir = tmp_path / "work"
    path = write(tmp_path / "bad.py", three_mistakes(work_dir))
    assert main(["train", path, "--check"]) == 1
    out = capsys.readouterr().out
    assert f"treadle train --check {path}: 3 problem(s) found:" in out
    assert f"{path}:{line_of(path, 'SDG')}: optim_wrapper: KeyError: SDG is not in the" in out
    assert "Did you mean 'SGD'" in out
    assert f"{path}:{line_of(path, 'CheckpointHok')}: default_hooks.checkpoint: KeyError" in out
    assert ": val_evaluator: KeyError: " in out and "RunnerToyMetrc is not in the" in out
    # Nothing was trained, nothing written into the work dir.
    assert not os.path.exists(work_dir)


def test_a_good_config_passes_without_training(tmp_path, capsys):
    work_dir = tmp_path / "work"
    path = write(tmp_path / "good.py", toy_cfg(work_dir))
    assert main(["train", path, "--check"]) == 0
    out = capsys.readouterr().out
    assert (
        "no problems found: built train_dataloader, val_dataloader, test_dataloader, model" in out
    )
    assert "optim_wrapper, param_scheduler" in out
    assert not os.path.exists(work_dir)


def test_cfg_options_are_applied_before_the_check(tmp_path, capsys):
    cfg = toy_cfg(tmp_path / "work")
    cfg["optim_wrapper"]["optimizer"]["type"] = "SDG"
    path = write(tmp_path / "typo.py", cfg)
    assert (
        main(["train", path, "--check", "--cfg-options", "optim_wrapper.optimizer.type=SGD"]) == 0
    )
    assert "no problems found" in capsys.readouterr().out


def test_yaml_configs_give_their_lines(tmp_path, capsys):
    cfg = toy_cfg(tmp_path / "work")
    cfg["train_cfg"]["max_epochs"] = "three"
    path = write(tmp_path / "bad.yaml", cfg)
    assert main(["train", path, "--check"]) == 1
    out = capsys.readouterr().out
    line = line_of(path, "max_epochs")
    assert f"{path}:{line}: train_cfg: TypeError: " in out
    assert "train_cfg max_epochs must be an int, got str: 'three'" in out


def test_a_key_from_a_base_file_names_the_base(tmp_path, capsys):
    base = toy_cfg(tmp_path / "work")
    base["param_scheduler"] = dict(type="MultiStepLRR", milestones=[1], by_epoch=True)
    base_path = write(tmp_path / "base.py", base)
    child = tmp_path / "child.py"
    child.write_text("_base_ = ['./base.py']\nrandomness = dict(seed=1)\n")
    assert main(["train", str(child), "--check"]) == 1
    out = capsys.readouterr().out
    assert f"{base_path}:{line_of(base_path, 'MultiStepLRR')}: param_scheduler: KeyError" in out


def test_a_missing_config_file(tmp_path, capsys):
    assert main(["train", str(tmp_path / "nope.py"), "--check"]) == 1
    assert "config file not found" in capsys.readouterr().err


EXAMPLE = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "digits", "config.py")


def test_the_readme_example_passes_and_its_mistakes_are_all_found(capsys):
    pytest.importorskip("sklearn")  # the digits example's data set
    path = os.path.abspath(EXAMPLE)
    assert main(["train", path, "--check"]) == 0
    assert "no problems found" in capsys.readouterr().out
    options = ["optim_wrapper.optimizer.type=SDG", "default_hooks.checkpoint.type=CheckpointHok"]
    assert (
        main(["train", path, "--check", "--cfg-options", *options, "train_cfg.max_epochs=x"]) == 1
    )
    out = capsys.readouterr().out
    assert "3 problem(s) found" in out
    line = line_of(path, "optim_wrapper = dict")
    assert f"{path}:{line}: optim_wrapper: KeyError: SDG is not in the" in out
    assert f"{path}:{line_of(path, 'train_cfg = dict')}: train_cfg: TypeError: " in out
    assert ": default_hooks.checkpoint: KeyError: CheckpointHok is not in the" in out
