"""Runner.from_cfg and FlexibleRunner.from_cfg with Runner subclasses written for MMEngine 0.10:
a constructor with exactly MMEngine's parameters (no ``elastic``) builds from any config that
does not set ``elastic``; a config that sets it is refused naming the class and what to add."""

from __future__ import annotations

import sys
import uuid
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "support"))

from elastic_toys import elastic_cfg

from treadle.config import Config
from treadle.runner.registry import RUNNERS
from treadle.runner.runner import FlexibleRunner, Runner
from treadle.runner.runner.runner import runner_arguments


class MMEngineSignatureRunner(Runner):
    """A subclass as MMEngine users write them: MMEngine 0.10's parameters, passed on."""

    def __init__(
        self,
        model,
        work_dir,
        train_dataloader=None,
        val_dataloader=None,
        test_dataloader=None,
        train_cfg=None,
        val_cfg=None,
        test_cfg=None,
        auto_scale_lr=None,
        optim_wrapper=None,
        param_scheduler=None,
        val_evaluator=None,
        test_evaluator=None,
        default_hooks=None,
        custom_hooks=None,
        data_preprocessor=None,
        load_from=None,
        resume=False,
        launcher="none",
        env_cfg=dict(dist_cfg=dict(backend="nccl")),  # noqa: B006 - MMEngine's default
        log_processor=None,
        log_level="INFO",
        visualizer=None,
        default_scope="mmengine",
        randomness=dict(seed=None),  # noqa: B006 - MMEngine's default
        experiment_name=None,
        cfg=None,
    ):
        self.built_by_subclass = True
        super().__init__(
            model, work_dir, train_dataloader, val_dataloader, test_dataloader, train_cfg,
            val_cfg, test_cfg, auto_scale_lr, optim_wrapper, param_scheduler, val_evaluator,
            test_evaluator, default_hooks, custom_hooks, data_preprocessor, load_from, resume,
            launcher, env_cfg, log_processor, log_level, visualizer, default_scope, randomness,
            experiment_name, cfg,
        )  # fmt: skip


class MMEngineSignatureFlexibleRunner(FlexibleRunner):
    """The same for FlexibleRunner: MMEngine 0.10's keyword-only parameters, passed on."""

    def __init__(
        self,
        model,
        *,
        work_dir="work_dirs",
        experiment_name=None,
        train_dataloader=None,
        optim_wrapper=None,
        param_scheduler=None,
        train_cfg=None,
        val_dataloader=None,
        val_evaluator=None,
        val_cfg=None,
        test_dataloader=None,
        test_evaluator=None,
        test_cfg=None,
        strategy=None,
        auto_scale_lr=None,
        default_hooks=None,
        custom_hooks=None,
        data_preprocessor=None,
        load_from=None,
        resume=False,
        launcher=None,
        env_cfg=dict(dist_cfg=dict(backend="nccl")),  # noqa: B006 - MMEngine's default
        log_processor=None,
        log_level="INFO",
        visualizer=None,
        default_scope="mmengine",
        randomness=dict(seed=None),  # noqa: B006 - MMEngine's default
        compile=False,
        cfg=None,
    ):
        arguments = dict(locals())
        del arguments["self"], arguments["model"], arguments["__class__"]
        super().__init__(model, **arguments)


def _cfg(tmp_path, **overrides):
    cfg = elastic_cfg(tmp_path, elastic=None)
    del cfg["elastic"]
    cfg.update(overrides)
    return Config(cfg)


def test_runner_arguments_name_elastic_only_when_the_config_sets_it(tmp_path):
    assert "elastic" not in runner_arguments(_cfg(tmp_path))
    assert "elastic" not in runner_arguments(_cfg(tmp_path, elastic=None))
    elastic = dict(global_batch_size=8)
    assert runner_arguments(_cfg(tmp_path, elastic=elastic))["elastic"] == elastic


@pytest.mark.parametrize("extra", [{}, {"elastic": None}])
def test_a_subclass_with_mmengines_parameters_builds_from_a_config(tmp_path, extra):
    runner = MMEngineSignatureRunner.from_cfg(_cfg(tmp_path, **extra))
    assert runner.built_by_subclass and runner._elastic is None
    # Through the registry, as runner_type = 'Name' in a config.
    name = f"MMEngineSignatureRunner_{uuid.uuid4().hex[:8]}"
    RUNNERS.register_module(name=name, module=MMEngineSignatureRunner)
    built = RUNNERS.build(_cfg(tmp_path / "registry", runner_type=name, **extra))
    assert isinstance(built, MMEngineSignatureRunner)
    flexible = MMEngineSignatureFlexibleRunner.from_cfg(_cfg(tmp_path / "flexible", **extra))
    assert flexible._elastic is None


@pytest.mark.parametrize("runner_cls", [MMEngineSignatureRunner, MMEngineSignatureFlexibleRunner])
def test_elastic_for_a_subclass_without_the_parameter_names_the_class(tmp_path, runner_cls):
    cfg = _cfg(tmp_path, elastic=dict(global_batch_size=8))
    with pytest.raises(TypeError) as error:
        runner_cls.from_cfg(cfg)
    message = str(error.value)
    assert f"but {runner_cls.__qualname__}.__init__() got an unexpected keyword argument " in (
        message
    )
    assert "the config sets elastic={'global_batch_size': 8}" in message
    assert "Add `elastic: dict | None = None` to it and pass it on to super().__init__(" in message
    assert not (tmp_path / "last_checkpoint").exists()


def test_a_subclass_that_takes_elastic_or_any_keyword_gets_it(tmp_path):
    class KeywordRunner(Runner):
        def __init__(self, model, work_dir, **kwargs):
            super().__init__(model, work_dir, **kwargs)

    runner = KeywordRunner.from_cfg(_cfg(tmp_path, elastic=dict(global_batch_size=8)))
    assert runner._elastic.global_batch_size == 8
