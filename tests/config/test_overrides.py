import argparse

import pytest

from treadle.config import Config, ConfigValueError, DictAction


def make_cfg():
    return Config(
        dict(
            model=dict(backbone=dict(type="ResNet", depth=50)),
            pipeline=[dict(type="Load"), dict(type="Flip", prob=0.5)],
            sizes=[1, 2, 3],
            lr=0.1,
        )
    )


def test_dotted_keys():
    cfg = make_cfg()
    cfg.merge_from_dict({"model.backbone.depth": 101, "model.neck.type": "FPN", "lr": 0.2})
    assert cfg.model.backbone.to_dict() == {"type": "ResNet", "depth": 101}
    assert cfg.model.neck.type == "FPN" and cfg.lr == 0.2


def test_list_indices():
    cfg = make_cfg()
    cfg.merge_from_dict({"pipeline.1.prob": 0.9, "pipeline.0": dict(type="LoadBig"), "sizes.2": 30})
    assert cfg.to_dict()["pipeline"] == [{"type": "LoadBig"}, {"type": "Flip", "prob": 0.9}]
    assert cfg.sizes == [1, 2, 30]
    cfg.merge_from_dict(dict(pipeline={"1": dict(type="Crop", _delete_=True)}))
    assert cfg.to_dict()["pipeline"][1] == {"type": "Crop"}


def test_list_indices_need_allow_list_keys():
    cfg = make_cfg()
    with pytest.raises(TypeError, match=r"'pipeline' cannot inherit .* is of type <class 'list'>"):
        cfg.merge_from_dict({"pipeline.0.type": "X"}, allow_list_keys=False)


def test_list_index_errors():
    cfg = make_cfg()
    with pytest.raises(
        IndexError, match="Index 5 exceeds the length of list 'pipeline' \\(2 items"
    ):
        cfg.merge_from_dict({"pipeline.5.type": "X"})
    with pytest.raises(TypeError, match="'pipeline' is a list: 'first' is not an index"):
        cfg.merge_from_dict({"pipeline.first": 1})


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("1", 1),
        ("-2.5", -2.5),
        ("1e-3", 1e-3),
        ("true", True),
        ("False", False),
        ("None", None),
        ("abc", "abc"),
        ("'quoted'", "quoted"),
        ("[a,b]", ["a", "b"]),
        ("1,2,3", [1, 2, 3]),
        ("(1,2)", (1, 2)),
        ("[(1,2),[a,b],c]", [(1, 2), ["a", "b"], "c"]),
        ("[[1, 2], (3, [4])]", [[1, 2], (3, [4])]),
        ("[]", []),
    ],
)
def test_dict_action_values(text, value):
    parser = argparse.ArgumentParser()
    parser.add_argument("--cfg-options", nargs="+", action=DictAction)
    assert parser.parse_args(["--cfg-options", f"k={text}"]).cfg_options == {"k": value}


def test_dict_action_collects_and_merges():
    parser = argparse.ArgumentParser()
    parser.add_argument("--cfg-options", nargs="+", action=DictAction)
    args = parser.parse_args(
        ["--cfg-options", "model.backbone.depth=18", "pipeline.0.type=X", "--cfg-options", "lr=1"]
    )
    cfg = make_cfg()
    cfg.merge_from_dict(args.cfg_options)
    assert (cfg.model.backbone.depth, cfg.pipeline[0].type, cfg.lr) == (18, "X", 1)


@pytest.mark.parametrize(
    ("arg", "error", "message"),
    [
        ("k=[1,2", AssertionError, r"--cfg-options: k: Imbalanced brackets exist in \[1,2"),
        ("k=(1))", AssertionError, r"--cfg-options: k: Imbalanced brackets exist in 1\)"),
        ("k=[(a,b),[1,2],x", AssertionError, "Imbalanced brackets exist in"),
        ("novalue", ValueError, "--cfg-options: expected KEY=VALUE, got 'novalue'"),
    ],
)
def test_dict_action_bad_values_raise_mmengines_errors(arg, error, message):
    # As MMEngine's DictAction: an AssertionError for unpaired brackets, a ValueError without
    # '=', raised as they are (not turned into argparse's usage message and SystemExit).
    parser = argparse.ArgumentParser()
    parser.add_argument("--cfg-options", nargs="+", action=DictAction)
    with pytest.raises(error, match=message) as caught:
        parser.parse_args(["--cfg-options", arg])
    assert isinstance(caught.value, ConfigValueError)


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("a(b)", "a(b)"),  # no comma, not wrapped in brackets: a string, as in MMEngine
        ("[a,,b]", ["a", "", "b"]),  # an empty item is kept...
        ("[a,b,]", ["a", "b"]),  # ...except after the last comma
    ],
)
def test_dict_action_takes_what_mmengine_takes(text, value):
    parser = argparse.ArgumentParser()
    parser.add_argument("--cfg-options", nargs="+", action=DictAction)
    assert parser.parse_args(["--cfg-options", f"k={text}"]).cfg_options == {"k": value}


def test_dict_action_warns_on_a_scalar_with_unpaired_brackets():
    parser = argparse.ArgumentParser()
    parser.add_argument("--cfg-options", nargs="+", action=DictAction)
    with pytest.warns(UserWarning, match=r"'\[1' has unpaired brackets; it is taken as the string"):
        args = parser.parse_args(["--cfg-options", "k=[1"])
    assert args.cfg_options == {"k": "[1"}
