"""add_args: argparse options from a config dict, as MMEngine's add_args makes them."""

from argparse import ArgumentParser

import pytest

from treadle.config import Config, add_args


def test_options_follow_value_types_and_nesting():
    cfg = Config(
        {
            "name": "r50",
            "amp": False,
            "epochs": 12,
            "lr": 0.1,
            "sizes": [224, 256],
            "model": {"depth": 50, "head": {"classes": 10}},
        }
    )
    parser = add_args(ArgumentParser(), cfg)
    args = parser.parse_args(
        [
            "--name",
            "r18",
            "--amp",
            "--epochs",
            "3",
            "--lr",
            "0.5",
            "--sizes",
            "1",
            "2",
            "--model.depth",
            "18",
            "--model.head.classes",
            "5",
        ]
    )
    assert vars(args) == {
        "name": "r18",
        "amp": True,
        "epochs": 3,
        "lr": 0.5,
        "sizes": [1, 2],
        "model.depth": 18,
        "model.head.classes": 5,
    }


def test_prefix_and_unparsable_values():
    with pytest.warns(UserWarning, match="cannot parse key opt.x"):
        parser = add_args(ArgumentParser(), {"x": None, "y": "a"}, prefix="opt.")
    assert vars(parser.parse_args([])) == {"opt.y": None}


def test_empty_list_names_the_key():
    with pytest.raises(ValueError, match=r"--a\.b from the empty list"):
        add_args(ArgumentParser(), {"a": {"b": []}})
