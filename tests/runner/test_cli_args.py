"""The `treadle` command's arguments and what they do to the config, with a fake runner (the
real one is exercised by test_cli_main_job.py)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path
from types import SimpleNamespace
from typing import ClassVar

import pytest

from treadle.config import Config
from treadle.runner.cli import build_parser, main, runner_factory
from treadle.runner.cli.config_edits import (
    CommandError,
    add_progress_bar,
    apply_test_args,
    apply_train_args,
    default_work_dir,
    with_dump_metric,
)

CONFIG = """
model = dict(type='M')
optim_wrapper = dict(type='OptimWrapper', optimizer=dict(type='SGD', lr=0.1))
train_cfg = dict(by_epoch=True, max_epochs=2)
test_evaluator = dict(type='Acc')
auto_scale_lr = dict(enable=False, base_batch_size=16)
"""


def _config(tmp_path: Path, text: str = CONFIG, name: str = "exp.py") -> str:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return str(path)


def _train_cfg(tmp_path: Path, *options: str, text: str = CONFIG) -> Config:
    path = _config(tmp_path, text)
    args = build_parser().parse_args(["train", path, *options])
    return apply_train_args(Config.fromfile(path), args)


class FakeRunner:
    """Records the config it was built from and which method ran."""

    built: ClassVar[list[FakeRunner]] = []

    def __init__(self, cfg: Config) -> None:
        self.cfg = cfg
        self.calls: list[str] = []
        FakeRunner.built.append(self)

    def train(self) -> None:
        self.calls.append("train")

    def test(self) -> dict:
        self.calls.append("test")
        return {}


@pytest.fixture
def fake_runner(monkeypatch: pytest.MonkeyPatch) -> type[FakeRunner]:
    FakeRunner.built = []
    monkeypatch.setattr(runner_factory, "build_runner", FakeRunner)
    return FakeRunner


# Parsing.
def test_resume_without_a_path_means_auto_and_with_one_means_that_checkpoint():
    parser = build_parser()
    assert parser.parse_args(["train", "c.py"]).resume is None
    assert parser.parse_args(["train", "c.py", "--resume"]).resume == "auto"
    assert parser.parse_args(["train", "c.py", "--resume", "w/epoch_3.pth"]).resume == (
        "w/epoch_3.pth"
    )


def test_unknown_launcher_is_refused_naming_the_choices(capsys):
    with pytest.raises(SystemExit) as exit_info:
        build_parser().parse_args(["train", "c.py", "--launcher", "torchrun"])
    assert exit_info.value.code == 2
    assert "invalid choice: 'torchrun'" in capsys.readouterr().err


def test_test_needs_a_checkpoint(capsys):
    with pytest.raises(SystemExit):
        build_parser().parse_args(["test", "c.py"])
    assert "checkpoint" in capsys.readouterr().err


def test_cfg_options_are_parsed_as_mmengine_dict_action():
    args = build_parser().parse_args(
        ["train", "c.py", "--cfg-options", "train_cfg.max_epochs=5", "model.sizes=[1,2]"]
    )
    assert args.cfg_options == {"train_cfg.max_epochs": 5, "model.sizes": [1, 2]}


def test_bad_cfg_options_are_a_usage_error(capsys):
    # DictAction raises MMEngine's AssertionError for unpaired brackets; the command shows it
    # as a usage error, without a traceback.
    with pytest.raises(SystemExit) as caught:
        main(["train", "c.py", "--cfg-options", "model.sizes=[1,2"])
    assert caught.value.code == 2
    assert "--cfg-options: model.sizes: Imbalanced brackets exist in" in capsys.readouterr().err


# What train's options do to the config.
def test_work_dir_option_beats_config_which_beats_the_default(tmp_path):
    assert _train_cfg(tmp_path, "--work-dir", "out").work_dir == "out"
    assert _train_cfg(tmp_path).work_dir == default_work_dir(str(tmp_path / "exp.py"))
    assert default_work_dir("configs/a/exp.py") == "./work_dirs/exp"
    assert _train_cfg(tmp_path, text=CONFIG + "work_dir = 'mine'\n").work_dir == "mine"


def test_cfg_options_launcher_and_resume(tmp_path):
    cfg = _train_cfg(
        tmp_path, "--cfg-options", "train_cfg.max_epochs=7", "--launcher", "pytorch", "--resume"
    )
    assert cfg.train_cfg.max_epochs == 7
    assert cfg.launcher == "pytorch"
    assert cfg.resume is True and cfg.load_from is None
    cfg = _train_cfg(tmp_path, "--resume", "w/iter_8.pth")
    assert cfg.resume is True and cfg.load_from == "w/iter_8.pth"
    cfg = _train_cfg(tmp_path)
    assert cfg.launcher == "none" and "resume" not in cfg


def test_amp_turns_optim_wrapper_into_amp(tmp_path):
    cfg = _train_cfg(tmp_path, "--amp")
    assert cfg.optim_wrapper.type == "AmpOptimWrapper"
    assert cfg.optim_wrapper.loss_scale == "dynamic"
    assert cfg.optim_wrapper.optimizer.lr == 0.1


def test_amp_on_an_amp_config_keeps_it(tmp_path):
    text = CONFIG + "optim_wrapper = dict(type='AmpOptimWrapper', optimizer=dict(type='SGD'))\n"
    cfg = _train_cfg(tmp_path, "--amp", text=text)
    assert cfg.optim_wrapper.type == "AmpOptimWrapper"
    assert "loss_scale" not in cfg.optim_wrapper


def test_amp_with_another_wrapper_type_names_it(tmp_path):
    text = CONFIG + "optim_wrapper = dict(type='ApexOptimWrapper', optimizer=dict(type='SGD'))\n"
    with pytest.raises(CommandError, match=r"optim_wrapper\.type='ApexOptimWrapper'"):
        _train_cfg(tmp_path, "--amp", text=text)


def test_amp_without_optim_wrapper_says_so(tmp_path):
    with pytest.raises(CommandError, match="--amp: the config has no optim_wrapper"):
        _train_cfg(tmp_path, "--amp", text="model = dict(type='M')\n")


def test_auto_scale_lr(tmp_path):
    assert _train_cfg(tmp_path, "--auto-scale-lr").auto_scale_lr.enable is True
    with pytest.raises(CommandError, match="base_batch_size"):
        _train_cfg(tmp_path, "--auto-scale-lr", text="model = dict(type='M')\n")


# What test's options do to the config.
def test_test_loads_the_checkpoint_without_resuming(tmp_path):
    path = _config(tmp_path)
    args = build_parser().parse_args(["test", path, "best.pth", "--work-dir", "w"])
    cfg = apply_test_args(Config.fromfile(path), args)
    assert (cfg.load_from, cfg.resume, cfg.work_dir) == ("best.pth", False, "w")


def test_out_adds_a_dump_results_metric_to_every_evaluator_form():
    dump = {"type": "DumpResults", "out_file_path": "p.pkl"}
    assert with_dump_metric({"type": "Acc"}, "p.pkl") == [{"type": "Acc"}, dump]
    assert with_dump_metric([{"type": "Acc"}], "p.pkl") == [{"type": "Acc"}, dump]
    assert with_dump_metric({"type": "Evaluator", "metrics": {"type": "Acc"}}, "p.pkl") == {
        "type": "Evaluator",
        "metrics": [{"type": "Acc"}, dump],
    }


def test_out_errors_name_the_problem():
    with pytest.raises(CommandError, match=r"--out must be a \.pkl or \.pickle file, got 'p.json'"):
        with_dump_metric({"type": "Acc"}, "p.json")
    with pytest.raises(CommandError, match="no test_evaluator"):
        with_dump_metric(None, "p.pkl")
    with pytest.raises(CommandError, match="got str"):
        with_dump_metric("Acc", "p.pkl")


def test_progress_bar_is_added_once():
    cfg = Config({"custom_hooks": [{"type": "EMAHook"}]})
    add_progress_bar(cfg)
    add_progress_bar(cfg)
    assert [h["type"] for h in cfg.custom_hooks] == ["EMAHook", "ProgressBarHook"]


# main() end to end with the fake runner.
def test_train_builds_the_runner_from_the_edited_config_and_trains(tmp_path, fake_runner):
    path = _config(tmp_path)
    assert main(["train", path, "--work-dir", str(tmp_path / "w"), "--no-progress"]) == 0
    (runner,) = fake_runner.built
    assert runner.calls == ["train"]
    assert runner.cfg.work_dir == str(tmp_path / "w")
    assert "custom_hooks" not in runner.cfg


def test_progress_flag_adds_the_bar_hook(tmp_path, fake_runner):
    main(["train", _config(tmp_path), "--progress"])
    assert fake_runner.built[0].cfg.custom_hooks == [{"type": "ProgressBarHook"}]


def test_in_a_pipe_no_bar_is_added(tmp_path, fake_runner, monkeypatch):
    monkeypatch.setattr(sys, "stdout", SimpleNamespace(isatty=lambda: False, write=print))
    main(["train", _config(tmp_path)])
    assert "custom_hooks" not in fake_runner.built[0].cfg


def test_test_command_runs_the_test_loop_and_dumps(tmp_path, fake_runner):
    checkpoint = tmp_path / "best.pth"
    checkpoint.write_bytes(b"")
    out = str(tmp_path / "preds.pkl")
    assert main(["test", _config(tmp_path), str(checkpoint), "--out", out, "--no-progress"]) == 0
    (runner,) = fake_runner.built
    assert runner.calls == ["test"]
    assert runner.cfg.load_from == str(checkpoint)
    assert runner.cfg.test_evaluator[-1] == {"type": "DumpResults", "out_file_path": out}


def test_config_folder_is_importable_for_custom_imports(tmp_path, fake_runner, monkeypatch):
    monkeypatch.setattr(sys, "path", list(sys.path))  # the folder added is dropped afterwards
    monkeypatch.setitem(sys.modules, "cli_test_custom_module", None)
    monkeypatch.delitem(sys.modules, "cli_test_custom_module")
    (tmp_path / "cli_test_custom_module.py").write_text("VALUE = 42\n")
    path = _config(tmp_path, CONFIG + "custom_imports = dict(imports=['cli_test_custom_module'])\n")
    assert main(["train", path, "--no-progress"]) == 0
    assert sys.modules["cli_test_custom_module"].VALUE == 42


def test_missing_config_is_one_line_naming_the_path(tmp_path, fake_runner, capsys):
    missing = str(tmp_path / "nope.py")
    assert main(["train", missing]) == 1
    err = capsys.readouterr().err
    assert err == f"treadle train: error: FileNotFoundError: config file not found: {missing}\n"
    assert fake_runner.built == []


def test_missing_checkpoint_is_one_line_naming_the_path(tmp_path, fake_runner, capsys):
    assert main(["test", _config(tmp_path), "gone.pth"]) == 1
    assert "checkpoint not found: gone.pth" in capsys.readouterr().err


def test_option_error_is_one_line(tmp_path, fake_runner, capsys):
    assert main(["train", _config(tmp_path, "model = dict(type='M')\n"), "--amp"]) == 1
    assert capsys.readouterr().err.startswith("treadle train: error: CommandError: --amp:")


def test_a_launch_mistake_is_one_line(tmp_path, monkeypatch, capsys):
    for name in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT"):
        monkeypatch.delenv(name, raising=False)
    config = _config(tmp_path, f"model = dict(type='M')\nwork_dir = {str(tmp_path / 'w')!r}\n")
    assert main(["train", config, "--launcher", "pytorch"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("treadle train: error: LaunchError: ")
    assert "RANK" in err and "torchrun" in err
    assert err.count("\n") == 1


def test_errors_raised_while_training_keep_their_traceback(tmp_path, monkeypatch):
    class Failing(FakeRunner):
        def train(self) -> None:
            raise ValueError("loss is nan at iteration 3")

    monkeypatch.setattr(runner_factory, "build_runner", Failing)
    with pytest.raises(ValueError, match="loss is nan"):
        main(["train", _config(tmp_path), "--no-progress"])


def test_python_dash_m_treadle_runner_is_the_same_command():
    result = subprocess.run(
        [sys.executable, "-m", "treadle.runner", "--help"], capture_output=True, text=True
    )
    assert result.returncode == 0
    assert "{train,test,plot}" in result.stdout or "COMMAND" in result.stdout
    for command in ("train", "test", "plot"):
        assert command in result.stdout
