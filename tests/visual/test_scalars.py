"""Scalars given to add_scalar(s): numbers of any common kind pass, anything else is named."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from treadle.visual.scalars import scalar_dict, scalar_value


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (3, 3),
        (0.25, 0.25),
        (True, True),
        (np.float32(0.5), 0.5),
        (np.int64(7), 7),
        (np.array(1.5), 1.5),
        (np.array([2]), 2),
        (torch.tensor(2.5), 2.5),
        (torch.tensor([4]), 4),
        (float("nan"), None),
    ],
    ids=[
        "int",
        "float",
        "bool",
        "np.float32",
        "np.int64",
        "0-d array",
        "1-elem array",
        "0-d tensor",
        "1-elem tensor",
        "nan",
    ],
)
def test_numbers_become_python_numbers(value, expected):
    result = scalar_value("loss", value)
    assert type(result) in (int, float, bool)
    if expected is None:
        assert result != result  # nan stays nan: a diverged loss is worth seeing on the curve
    else:
        assert result == expected


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        ("0.5", "str: '0.5'"),
        (None, "NoneType: None"),
        ([1.0], r"list: \[1.0\]"),
        (np.zeros(3), "ndarray"),
        (torch.zeros(2), "Tensor"),
        (1j, "complex: 1j"),
        ({"a": 1}, "dict"),
    ],
)
def test_non_numbers_name_the_key_and_the_type(value, shown):
    with pytest.raises(TypeError, match=rf"scalar 'loss' must be a number .*got {shown}"):
        scalar_value("loss", value)


def test_long_values_are_shortened_in_the_message():
    with pytest.raises(TypeError) as error:
        scalar_value("acc", "x" * 500)
    assert len(str(error.value)) < 200
    assert str(error.value).endswith("...")


def test_scalar_dict_checks_every_value_and_names_the_bad_one():
    assert scalar_dict({"loss": torch.tensor(0.5), "lr": 0.1}) == {"loss": 0.5, "lr": 0.1}
    with pytest.raises(TypeError, match=r"scalar 'acc' must be a number.*got str"):
        scalar_dict({"loss": 0.5, "acc": "high"})


def test_scalar_dict_needs_a_mapping_with_str_keys():
    with pytest.raises(TypeError, match="add_scalars expects a dict of name -> number, got list"):
        scalar_dict([("loss", 0.5)])
    with pytest.raises(TypeError, match=r"scalar names must be str, got 3 \(int\)"):
        scalar_dict({3: 0.5})
