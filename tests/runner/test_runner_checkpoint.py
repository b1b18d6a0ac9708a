"""Runner checkpoints: what save_runner_checkpoint writes, and resume_runner / plan_load_or_resume
(treadle.runner.runner.checkpointing), through a stand-in runner made of real parts."""

from __future__ import annotations

import logging
import os

import numpy as np
import pytest
import torch
from runner_checkpoint_stub import CountingHook, StubRunner
from runner_toys import captured_log

from treadle.runner.runner import checkpointing
from treadle.runner.runner.checkpointing import (
    build_runner_checkpoint,
    plan_load_or_resume,
    resume_runner,
    runner_save_checkpoint,
    save_runner_checkpoint,
)

MMENGINE_KEYS = {"meta", "state_dict", "optimizer", "param_schedulers", "message_hub"}


def batches(count: int, seed: int = 0):
    generator = torch.Generator().manual_seed(seed)
    return [
        (torch.randn(4, 2, generator=generator), torch.randn(4, 1, generator=generator))
        for _ in range(count)
    ]


def trained(steps: int = 3) -> StubRunner:
    torch.manual_seed(0)
    runner = StubRunner()
    for inputs, labels in batches(steps):
        runner.step(inputs, labels)
    if steps:
        runner.param_schedulers[0].step()
    return runner


def test_checkpoint_has_mmengine_keys_and_treadle_beside_them(tmp_path):
    runner = trained()
    path = str(tmp_path / "iter_3.pth")
    save_runner_checkpoint(runner, path)
    checkpoint = torch.load(path, weights_only=True)  # no safe globals needed
    assert set(checkpoint) == MMENGINE_KEYS | {"loop", "hooks"}
    meta = checkpoint["meta"]
    assert meta["cfg"] == runner.cfg.pretty_text
    assert meta["seed"] == 0 and meta["experiment_name"] == runner.experiment_name
    assert meta["world_size"] == 1 and meta["treadle_version"]
    assert meta["dataset_meta"] == {"classes": ("a", "b")}
    assert checkpoint["loop"] == {"epoch": 0, "iter": 3, "position": 0}
    assert checkpoint["hooks"] == {"CountingHook": {"seen": 3}}
    for key, value in runner.model.state_dict().items():
        assert torch.equal(checkpoint["state_dict"][key], value)
    loss = checkpoint["message_hub"]["log_scalars"]["train/loss"]
    assert loss["log_history"] == runner.message_hub.get_scalar("train/loss").data[0]
    assert checkpoint["param_schedulers"][0]["last_step"] == 1
    assert runner.calls[-1][0] == "before_save_checkpoint"


def test_before_save_checkpoint_hooks_can_add_entries(tmp_path):
    runner = trained(1)

    def call_hook(fn_name, checkpoint=None, **kwargs):
        if fn_name == "before_save_checkpoint":
            checkpoint["ema_state_dict"] = {"w": torch.zeros(2)}

    runner.call_hook = call_hook
    path = str(tmp_path / "a.pth")
    save_runner_checkpoint(runner, path)
    assert torch.equal(torch.load(path, weights_only=True)["ema_state_dict"]["w"], torch.zeros(2))


@pytest.mark.parametrize(
    ("by_epoch", "expected"), [(True, {"epoch": 1, "iter": 3}), (False, {"epoch": 0, "iter": 4})]
)
def test_runner_save_checkpoint_counts_the_finished_step(tmp_path, by_epoch, expected):
    runner = trained()
    runner_save_checkpoint(runner, str(tmp_path), "c.pth", by_epoch=by_epoch)
    meta = torch.load(tmp_path / "c.pth", weights_only=True)["meta"]
    assert {key: meta[key] for key in expected} == expected


def test_given_meta_wins_and_must_be_a_dict(tmp_path):
    runner = trained(1)
    runner_save_checkpoint(runner, str(tmp_path), "c.pth", meta={"epoch": 7, "note": "x"})
    meta = torch.load(tmp_path / "c.pth", weights_only=True)["meta"]
    assert meta["epoch"] == 7 and meta["note"] == "x"
    with pytest.raises(TypeError, match="meta should be a dict or None, but got list"):
        runner_save_checkpoint(runner, str(tmp_path), "d.pth", meta=[1])


def test_file_client_args_and_backend_args_together_are_refused(tmp_path):
    with pytest.raises(ValueError, match='"file_client_args" and "backend_args" cannot be set'):
        runner_save_checkpoint(
            trained(1), str(tmp_path), "c.pth", file_client_args={}, backend_args={}
        )


def test_file_client_args_still_works_with_a_warning(tmp_path):
    runner = trained(1)
    with captured_log(runner.logger) as log:
        runner_save_checkpoint(
            runner, str(tmp_path), "c.pth", file_client_args={"backend": "local"}
        )
    assert os.path.isfile(tmp_path / "c.pth")
    assert any("file_client_args" in m for m in log.at(logging.WARNING))


def test_optimizer_and_schedulers_can_be_left_out(tmp_path):
    runner = trained(1)
    save_runner_checkpoint(runner, str(tmp_path / "c.pth"), False, False)
    checkpoint = torch.load(tmp_path / "c.pth", weights_only=True)
    assert "optimizer" not in checkpoint and "param_schedulers" not in checkpoint


def test_no_schedulers_is_a_warning_when_saving(tmp_path):
    runner = trained(1)
    runner.param_schedulers = None
    with captured_log(runner.logger) as log:
        checkpoint = build_runner_checkpoint(runner)
    assert "param_schedulers" not in checkpoint
    assert any("self.param_schedulers` is None" in m for m in log.at(logging.WARNING))


def test_unbuilt_optimizer_is_named_when_saving():
    runner = trained(1)
    runner.optim_wrapper = {"optimizer": {"type": "SGD"}}
    with pytest.raises(TypeError, match=r"runner.optim_wrapper is \{'optimizer'"):
        build_runner_checkpoint(runner)


def test_message_hub_values_become_loadable(tmp_path):
    runner = trained(1)
    runner.message_hub.update_info("eta", np.float64(1.5))
    runner.message_hub.update_info("palette", np.array([1, 2]))
    path = str(tmp_path / "c.pth")
    save_runner_checkpoint(runner, path)
    info = torch.load(path, weights_only=False)["message_hub"]["runtime_info"]
    assert type(info["eta"]) is float and info["eta"] == 1.5
    resumed = StubRunner()
    resume_runner(resumed, path)  # numpy arrays are allowed when resuming
    assert resumed.message_hub.get_info("palette").tolist() == [1, 2]


class Opaque:
    """Something torch's weights_only loading does not know."""


def test_unknown_objects_are_kept_with_a_warning_naming_them(tmp_path):
    runner = trained(1)
    runner.message_hub.update_info("thing", Opaque())
    with captured_log(runner.logger) as log:
        save_runner_checkpoint(runner, str(tmp_path / "c.pth"))
    (warning,) = [m for m in log.at(logging.WARNING) if "refuses" in m]
    assert "message_hub['runtime_info']['thing']" in warning
    assert "Opaque" in warning and "add_safe_globals" in warning


def test_only_rank_0_writes(tmp_path, monkeypatch):
    monkeypatch.setattr(checkpointing.dist, "get_rank", lambda group=None: 1)
    save_runner_checkpoint(trained(1), str(tmp_path / "c.pth"))
    assert not os.path.exists(tmp_path / "c.pth")


def test_resume_restores_everything_and_training_continues_identically(tmp_path):
    data = batches(6)
    reference = trained(0)
    for inputs, labels in data:
        reference.step(inputs, labels)

    first = trained(0)
    for inputs, labels in data[:3]:
        first.step(inputs, labels)
    path = str(tmp_path / "iter_3.pth")
    save_runner_checkpoint(first, path)

    torch.manual_seed(123)  # another initialisation: everything must come from the file
    second = StubRunner()
    resume_runner(second, path)
    assert second._has_loaded
    assert second.train_loop.loaded == {"epoch": 0, "iter": 3, "position": 0}
    assert second.hooks[0].seen == 3
    assert second.message_hub.get_scalar("train/loss").data == (
        first.message_hub.get_scalar("train/loss").data
    )
    assert [c[0] for c in second.calls] == ["after_load_checkpoint"]
    for inputs, labels in data[3:]:
        second.step(inputs, labels)
    for key, value in reference.model.state_dict().items():
        assert torch.equal(second.model.state_dict()[key], value)
    assert second.message_hub.get_scalar("train/loss").data == (
        reference.message_hub.get_scalar("train/loss").data
    )


def test_resume_without_optimizer_and_schedulers(tmp_path):
    runner = trained(2)
    path = str(tmp_path / "c.pth")
    save_runner_checkpoint(runner, path)
    fresh = StubRunner()
    resume_runner(fresh, path, resume_optimizer=False, resume_param_scheduler=False)
    assert not fresh.optim_wrapper.optimizer.state
    assert fresh.param_schedulers[0].last_step == 0


def test_resume_logs_where_it_continues(tmp_path):
    runner = trained(2)
    path = str(tmp_path / "c.pth")
    save_runner_checkpoint(runner, path)
    fresh = StubRunner()
    with captured_log(fresh.logger) as log:
        resume_runner(fresh, path)
    assert "resumed epoch: 0, iter: 2" in log.messages


def test_resume_warns_about_another_seed_and_takes_the_saved_one(tmp_path):
    path = str(tmp_path / "c.pth")
    save_runner_checkpoint(trained(1), path)
    fresh = StubRunner(seed=5)
    reseeded = []
    fresh.set_randomness = lambda **cfg: reseeded.append(cfg)
    with captured_log(fresh.logger) as log:
        resume_runner(fresh, path)
    assert any(
        'checkpoint "0" is different from the value in `randomness` config "5"' in m
        for m in log.at(logging.WARNING)
    )
    assert reseeded == [{"seed": 0}]


def test_resume_warns_about_another_dataset(tmp_path):
    path = str(tmp_path / "c.pth")
    save_runner_checkpoint(trained(1), path)
    fresh = StubRunner()
    fresh.train_dataloader.dataset.metainfo = {"classes": ("c",)}
    with captured_log(fresh.logger) as log:
        resume_runner(fresh, path)
    assert any(
        "dataset metainfo from the resumed checkpoint is different" in m
        for m in log.at(logging.WARNING)
    )


def test_resume_refuses_another_world_size(tmp_path):
    path = str(tmp_path / "c.pth")
    save_runner_checkpoint(trained(1), path)
    fresh = StubRunner()
    fresh.world_size = 2
    with pytest.raises(RuntimeError, match="saved by a run of 1 processes and this run has 2"):
        resume_runner(fresh, path)


def test_resume_refuses_a_weights_only_file(tmp_path):
    path = str(tmp_path / "weights.pth")
    torch.save({"state_dict": StubRunner().model.state_dict()}, path)
    with pytest.raises(KeyError, match=r"not a checkpoint a runner can resume from.*load_from="):
        resume_runner(StubRunner(), path)


def test_resume_reports_hook_states_it_cannot_place(tmp_path):
    runner = trained(1)
    runner.hooks.append(CountingHook())
    path = str(tmp_path / "c.pth")
    save_runner_checkpoint(runner, path)
    assert set(torch.load(path, weights_only=True)["hooks"]) == {"CountingHook", "CountingHook.1"}
    fresh = StubRunner()
    with captured_log(fresh.logger) as log:
        resume_runner(fresh, path)
    assert fresh.hooks[0].seen == 1
    assert any("hooks this run does not have: CountingHook.1" in m for m in log.at(logging.WARNING))


def test_resume_warns_when_scheduler_counts_differ(tmp_path):
    path = str(tmp_path / "c.pth")
    save_runner_checkpoint(trained(1), path)
    fresh = StubRunner()
    fresh.param_schedulers = fresh.param_schedulers * 2
    with captured_log(fresh.logger) as log:
        resume_runner(fresh, path)
    assert any(
        "has 1 parameter schedulers and this run has 2" in m for m in log.at(logging.WARNING)
    )


def test_resume_refuses_schedulers_per_optimizer_for_a_list(tmp_path):
    path = str(tmp_path / "c.pth")
    save_runner_checkpoint(trained(1), path)
    fresh = StubRunner()
    fresh.param_schedulers = {"generator": fresh.param_schedulers}
    with pytest.raises(TypeError, match=r"param_schedulers is a list.*per optimizer \(generator"):
        resume_runner(fresh, path)


def test_save_and_resume_on_another_storage():
    runner = trained(2)
    save_runner_checkpoint(runner, "memory://ckpt_test/iter_2.pth")
    fresh = StubRunner()
    resume_runner(fresh, "memory://ckpt_test/iter_2.pth", map_location="cpu")
    for key, value in runner.model.state_dict().items():
        assert torch.equal(fresh.model.state_dict()[key], value)


# -- where a run starts from --------------------------------------------------------------


def test_plan_resume_with_an_empty_work_dir_warns_and_starts_fresh(tmp_path):
    runner = StubRunner()
    with captured_log(runner.logger) as log:
        plan = plan_load_or_resume(str(tmp_path), True, None, runner.logger)
    assert plan == (None, None)
    assert any(
        "holds no complete checkpoint" in m and "from scratch" in m for m in log.at(logging.WARNING)
    )


def test_plan_resume_takes_a_named_checkpoint_over_newer_ones_of_work_dir(tmp_path):
    # MMEngine's meaning of resume=True with load_from: that checkpoint. Without a config to
    # recognise a requeued run by, newer checkpoints never replace it.
    runner = trained(1)
    save_runner_checkpoint(runner, str(tmp_path / "epoch_1.pth"))
    save_runner_checkpoint(runner, str(tmp_path / "epoch_2.pth"))
    elsewhere = str(tmp_path / "other.pth")
    save_runner_checkpoint(runner, elsewhere)
    with captured_log(runner.logger) as log:
        plan = plan_load_or_resume(str(tmp_path), True, elsewhere, runner.logger)
    assert plan == ("resume", elsewhere)
    assert any(f"continuing from {elsewhere}: the checkpoint named" in m for m in log.messages)


def test_plan_resume_from_load_from_on_a_first_run(tmp_path):
    path = str(tmp_path / "given.pth")
    save_runner_checkpoint(trained(1), path)
    work_dir = tmp_path / "new"
    work_dir.mkdir()
    plan = plan_load_or_resume(str(work_dir), True, path, StubRunner().logger)
    assert plan == ("resume", path)


def test_plan_without_resume_loads_weights_only(tmp_path):
    path = str(tmp_path / "given.pth")
    save_runner_checkpoint(trained(1), path)
    assert plan_load_or_resume(str(tmp_path), False, path, StubRunner().logger) == ("load", path)
    assert plan_load_or_resume(str(tmp_path), False, None, StubRunner().logger) == (None, None)


def test_plan_with_a_missing_load_from_names_it(tmp_path):
    missing = str(tmp_path / "nope.pth")
    with pytest.raises(FileNotFoundError, match=r"load_from=.*nope.pth.*no such checkpoint file"):
        plan_load_or_resume(str(tmp_path), False, missing, StubRunner().logger)
