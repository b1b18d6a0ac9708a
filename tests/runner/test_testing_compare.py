"""treadle.runner.testing's comparison helpers and check_python_script."""

import os
import sys
import warnings

import numpy as np
import pytest
import torch
from torch import nn

from treadle.runner.testing import (
    assert_allclose,
    assert_attrs_equal,
    assert_dict_contains_subset,
    assert_dict_has_keys,
    assert_is_norm_layer,
    assert_keys_equal,
    assert_params_all_zeros,
    check_python_script,
)

SCRIPTS = os.path.join(os.path.dirname(__file__), "data", "testing_scripts")


def test_assert_allclose_takes_lists_and_mixed_dtypes_without_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert_allclose(torch.tensor([1.0, 2.0]), [1.0, 2.0 + 1e-6])
        assert_allclose(torch.tensor([1, 2]), torch.tensor([1.0, 2.0]))
        assert_allclose([float("nan")], [float("nan")])


def test_assert_allclose_default_tolerance_is_float32s():
    assert_allclose(torch.tensor([1.0]), torch.tensor([1.00005]))  # rtol 1e-4
    with pytest.raises(AssertionError, match="not close"):
        assert_allclose(torch.tensor([1.0]), torch.tensor([1.001]))


def test_assert_allclose_options_and_message():
    assert_allclose(torch.tensor([1.0]), torch.tensor([1.5]), rtol=0, atol=0.6)
    with pytest.raises(AssertionError, match="my message"):
        assert_allclose(torch.tensor([1.0]), torch.tensor([2.0]), msg="my message")
    with pytest.raises(AssertionError):
        assert_allclose([float("nan")], [float("nan")], equal_nan=False)
    with pytest.raises(ValueError, match="rtol"):
        assert_allclose(torch.tensor([1.0]), torch.tensor([1.0]), rtol=0.1)


def test_assert_dict_contains_subset():
    obj = dict(a=1, b=torch.ones(3), c=np.zeros(2), d=dict(e=torch.ones(2)), f=[1, 2])
    assert assert_dict_contains_subset(obj, dict(a=1, b=torch.ones(3)))
    assert assert_dict_contains_subset(obj, dict(c=np.zeros(2), d=dict(e=torch.ones(2))))
    assert not assert_dict_contains_subset(obj, dict(a=2))
    assert not assert_dict_contains_subset(obj, dict(z=1))
    assert not assert_dict_contains_subset(obj, dict(b=torch.tensor([1.0, 1.0, 0.0])))
    # Another shape is a difference, not an error.
    assert not assert_dict_contains_subset(obj, dict(b=torch.ones(4)))
    assert not assert_dict_contains_subset(obj, dict(d=dict(e=torch.zeros(2))))
    assert not assert_dict_contains_subset(obj, dict(f=(1, 2)))


def test_assert_attrs_equal():
    layer = nn.Linear(2, 3)
    assert assert_attrs_equal(layer, dict(in_features=2, out_features=3))
    assert assert_attrs_equal(layer, dict(weight=layer.weight.detach().clone()))
    assert not assert_attrs_equal(layer, dict(in_features=3))
    assert not assert_attrs_equal(layer, dict(missing=1))


def test_keys_helpers():
    assert assert_dict_has_keys(dict(a=1, b=2), ["a"])
    assert not assert_dict_has_keys(dict(a=1), ["a", "b"])
    assert assert_keys_equal(["a", "b"], ("b", "a"))
    assert not assert_keys_equal(["a"], ["a", "b"])


@pytest.mark.parametrize(
    "module",
    [
        nn.BatchNorm1d(2),
        nn.SyncBatchNorm(2),
        nn.InstanceNorm2d(2),
        nn.GroupNorm(1, 2),
        nn.LayerNorm(2),
        nn.RMSNorm(2),
    ],
)
def test_assert_is_norm_layer_true(module):
    assert assert_is_norm_layer(module)


def test_assert_is_norm_layer_false():
    assert not assert_is_norm_layer(nn.Conv2d(2, 2, 1))
    assert not assert_is_norm_layer(nn.Linear(2, 2))


def test_assert_params_all_zeros():
    layer = nn.Linear(2, 2)
    assert not assert_params_all_zeros(layer)
    nn.init.zeros_(layer.weight)
    assert not assert_params_all_zeros(layer)  # the bias is not zero yet
    nn.init.zeros_(layer.bias)
    assert assert_params_all_zeros(layer)
    assert assert_params_all_zeros(
        nn.Linear(2, 2, bias=False)
        .requires_grad_(False)
        .apply(lambda m: nn.init.constant_(m.weight, 1e-9))
    )


def test_assert_params_all_zeros_names_a_module_without_weight():
    with pytest.raises(TypeError, match="ReLU has no weight"):
        assert_params_all_zeros(nn.ReLU())


@pytest.fixture
def script_calls():
    sys.modules.pop("sibling_helper", None)
    yield lambda: sys.modules["sibling_helper"].CALLS
    sys.modules.pop("sibling_helper", None)


def test_check_python_script_runs_as_main_with_argv(script_calls):
    script = os.path.join(SCRIPTS, "echo_args.py")
    path_before = list(sys.path)
    check_python_script(f"python {script} a 'b c'")
    check_python_script(f"{script} --x")
    assert script_calls() == [[script, "a", "b c"], [script, "--x"]]
    assert sys.path == path_before


def test_check_python_script_lets_exit_codes_through(script_calls):
    with pytest.raises(SystemExit) as exit_info:
        check_python_script(f"python {os.path.join(SCRIPTS, 'echo_args.py')} --fail")
    assert exit_info.value.code == 3


def test_check_python_script_errors_name_the_command(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"no such script 'missing\.py'"):
        check_python_script("python missing.py --a")
    with pytest.raises(ValueError, match="names no script"):
        check_python_script("python")
