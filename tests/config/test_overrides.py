import argparse
import re

import pytest

from treadle.config import Config, DictAction


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
    ("arg", "message"),
    [
        ("k=[1,2", r"k: unbalanced brackets in '\[1,2'"),
        ("novalue", "expected KEY=VALUE, got 'novalue'"),
        ("k=(1))", "unbalanced"),
    ],
)
def test_dict_action_bad_values(capsys, arg, message):
    parser = argparse.ArgumentParser()
    parser.add_argument("--cfg-options", nargs="+", action=DictAction)
    with pytest.raises(SystemExit):
        parser.parse_args(["--cfg-options", arg])
    err = capsys.readouterr().err
    assert "--cfg-options" in err
    assert re.search(message, err)
