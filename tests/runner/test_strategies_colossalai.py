"""ColossalAIStrategy without ColossalAI: what ``plugin`` and ``mixed_precision`` name, the
error when colossalai is not installed (naming the extra), and the optimizer and model
wrappers' arguments. The real booster (TorchDDPPlugin on gloo) is tested in
test_strategies_colossalai_gloo.py."""

from __future__ import annotations

import re
import subprocess
import sys
import types

import pytest
import torch
from torch import nn

from treadle.runner.optim.optimizer.colossalai_optim_wrapper import ColossalAIOptimWrapper
from treadle.runner.registry import MODEL_WRAPPERS, OPTIM_WRAPPERS, STRATEGIES
from treadle.runner.strategies.colossalai_config import (
    build_from_module,
    import_colossalai,
    mixed_precision_spec,
    plugin_spec,
)


def test_mmengines_plugin_names_and_torch_ddp():
    assert plugin_spec("gemini") == (
        "GeminiPlugin",
        {"precision": "bf16", "placement_policy": "auto"},
    )
    assert plugin_spec("lowlevel-zero") == ("LowLevelZeroPlugin", {})
    assert plugin_spec("torch-ddp") == ("TorchDDPPlugin", {})
    assert plugin_spec(dict(type="LowLevelZeroPlugin", stage=2, max_norm=1.0)) == (
        "LowLevelZeroPlugin",
        {"stage": 2, "max_norm": 1.0},
    )


def test_unknown_plugin_name_lists_the_names_and_the_closest():
    with pytest.raises(
        ValueError,
        match=re.escape(
            "plugin='gemeni' is not a plugin name (did you mean 'gemini'?); use one of "
            "'gemini', 'lowlevel-zero', 'torch-ddp'"
        ),
    ):
        plugin_spec("gemeni")
    with pytest.raises(TypeError, match="plugin dict needs type="):
        plugin_spec(dict(stage=2))
    with pytest.raises(
        TypeError, match="plugin must be a name, a dict with type, or a built Plugin, got int"
    ):
        plugin_spec(3)


def test_mixed_precision_names():
    assert mixed_precision_spec("fp16") == ("FP16TorchMixedPrecision", {})
    assert mixed_precision_spec("bf16") == ("BF16MixedPrecision", {})
    assert mixed_precision_spec(dict(type="FP16NaiveMixedPrecision", initial_scale=2**8)) == (
        "FP16NaiveMixedPrecision",
        {"initial_scale": 256},
    )
    with pytest.raises(
        ValueError, match="mixed_precision='bf61' is not one of 'fp16', 'fp16_apex', 'bf16', 'fp8'"
    ):
        mixed_precision_spec("bf61")


def test_build_from_module_names_the_closest_class():
    module = types.SimpleNamespace(TorchDDPPlugin=dict, GeminiPlugin=list)
    assert build_from_module(module, ("TorchDDPPlugin", {}), "plugin") == {}
    with pytest.raises(
        ValueError,
        match="colossalai has no plugin 'TorchDDPPlugn' \\(did you mean 'TorchDDPPlugin'\\?\\)",
    ):
        build_from_module(module, ("TorchDDPPlugn", {}), "plugin")


@pytest.fixture
def without_colossalai(monkeypatch):
    monkeypatch.setitem(sys.modules, "colossalai", None)


def test_missing_colossalai_names_the_extra(without_colossalai):
    with pytest.raises(ImportError, match=r"pip install 'treadle-runner\[colossalai\]'"):
        import_colossalai()
    with pytest.raises(
        ImportError,
        match=r"ColossalAIStrategy needs the colossalai package.*treadle-runner\[colossalai\]",
    ):
        STRATEGIES.build(dict(type="ColossalAIStrategy", plugin="torch-ddp"))


def test_registering_the_classes_does_not_import_colossalai():
    code = (
        "import sys\n"
        "from treadle.runner.registry import STRATEGIES, OPTIM_WRAPPERS, MODEL_WRAPPERS\n"
        "import treadle.runner.strategies\n"
        "assert STRATEGIES.get('ColossalAIStrategy') is not None\n"
        "assert OPTIM_WRAPPERS.get('ColossalAIOptimWrapper') is not None\n"
        "assert MODEL_WRAPPERS.get('ColossalAIModelWrapper') is not None\n"
        "print('colossalai' in sys.modules)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "False"


def test_optim_wrapper_refuses_clip_grad():
    optimizer = torch.optim.SGD(nn.Linear(2, 1).parameters(), lr=0.1)
    with pytest.raises(
        ValueError, match="does not take clip_grad: ColossalAI clips gradients in the plugin"
    ):
        OPTIM_WRAPPERS.build(
            dict(type="ColossalAIOptimWrapper", optimizer=optimizer, clip_grad=dict(max_norm=1.0))
        )


def test_optim_wrapper_before_boosting_is_a_plain_optim_wrapper():
    layer = nn.Linear(2, 1)
    wrapper = ColossalAIOptimWrapper(
        torch.optim.SGD(layer.parameters(), lr=0.1), accumulative_counts=2
    )
    with wrapper.optim_context(layer):
        loss = layer(torch.ones(1, 2)).sum()
    wrapper.update_params(loss)
    assert wrapper.inner_count == 1
    assert layer.weight.grad is not None


def test_model_wrapper_needs_the_model_and_a_boosted_one_or_a_way_to_boost():
    with pytest.raises(TypeError, match="needs model and either model_wrapper"):
        MODEL_WRAPPERS.build(dict(type="ColossalAIModelWrapper", model=nn.Linear(2, 1)))
    # MMEngine's misspelt alias builds the same class.
    assert MODEL_WRAPPERS.get("CollosalAIModelWrapper") is MODEL_WRAPPERS.get(
        "ColossalAIModelWrapper"
    )
