"""treadle.runner.dataset against MMEngine 0.10's mmengine.dataset: the same calls through
both, comparing what a user observes (items, lengths, meta information, collate outputs, error
types). Deliberate differences are asserted as such, each with the reason.

Runs only where mmengine is installed: ``hatch run mmengine:pytest tests/runner/...``.
"""

from __future__ import annotations

from collections import namedtuple

import pytest

mm = pytest.importorskip("mmengine.dataset")

import numpy as np  # noqa: E402
import torch  # noqa: E402
from mmengine.structures import BaseDataElement as MMElement  # noqa: E402

import treadle.runner.dataset as tr  # noqa: E402
from treadle import fileio  # noqa: E402
from treadle.runner.structures import BaseDataElement as TRElement  # noqa: E402

ENGINES = {"mmengine": mm, "treadle": tr}
Pair = namedtuple("Pair", ["a", "b"])


def write_ann(path, count: int = 7) -> str:
    data_list = [{"img_path": f"{i}.png", "label": i % 3, "cats": [i % 3]} for i in range(count)]
    fileio.dump({"metainfo": {"classes": ["a", "b", "c"], "v": 1}, "data_list": data_list}, path)
    return str(path)


def subclass(engine):
    class Toy(engine.BaseDataset):
        METAINFO = {"classes": ("x", "y", "z")}  # noqa: RUF012 (as MMEngine's datasets write it)

        def get_cat_ids(self, idx):
            return self.get_data_info(idx)["cats"]

    return Toy


def both(make):
    """``make(engine)`` through each engine: {'mmengine': ..., 'treadle': ...}."""
    return {name: make(engine) for name, engine in ENGINES.items()}


def items(dataset) -> list:
    return [dataset[i] for i in range(len(dataset))]


def test_every_public_name_exists():
    for name in mm.__all__:
        assert hasattr(tr, name), name


@pytest.mark.parametrize("serialize", [True, False])
@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        {"data_prefix": {"img_path": "img"}},
        {"data_prefix": {"img_path": "/abs/img"}},
        {"indices": 3},
        {"indices": -2},
        {"indices": [5, 0, 2]},
        {"metainfo": {"classes": ("p",), "extra": [1]}},
        {"pipeline": [lambda d: {**d, "label": d["label"] * 2}]},
    ],
    ids=str,
)
def test_base_dataset_items_lengths_and_metainfo(tmp_path, serialize, kwargs):
    write_ann(tmp_path / "ann.json")
    made = both(
        lambda e: subclass(e)(
            "ann.json", data_root=str(tmp_path), serialize_data=serialize, **kwargs
        )
    )
    assert len(made["treadle"]) == len(made["mmengine"])
    assert items(made["treadle"]) == items(made["mmengine"])
    assert made["treadle"].metainfo == made["mmengine"].metainfo
    assert made["treadle"].ann_file == made["mmengine"].ann_file
    assert made["treadle"].data_prefix == made["mmengine"].data_prefix


@pytest.mark.parametrize("serialize", [True, False])
@pytest.mark.parametrize("indices", [2, -3, [6, 1, 1], []], ids=str)
def test_subsets(tmp_path, serialize, indices):
    ann = write_ann(tmp_path / "ann.json")
    subsets = both(lambda e: e.BaseDataset(ann, serialize_data=serialize).get_subset(indices))
    assert items(subsets["treadle"]) == items(subsets["mmengine"])

    def in_place(engine):
        dataset = engine.BaseDataset(ann, serialize_data=serialize)
        dataset.get_subset_(indices)
        return items(dataset)

    in_place_items = both(in_place)
    assert in_place_items["treadle"] == in_place_items["mmengine"]


def test_metainfo_file_values(tmp_path):
    ann = write_ann(tmp_path / "ann.json")
    (tmp_path / "classes.txt").write_text("cat\ndog\n")
    metainfo = {"classes": str(tmp_path / "classes.txt"), "name": "plain"}
    made = both(lambda e: e.BaseDataset(ann, metainfo=metainfo).metainfo)
    assert made["treadle"] == made["mmengine"]


def error_of(call):
    try:
        call()
    except Exception as error:  # comparing what each engine raises
        return error
    return None


@pytest.mark.parametrize(
    "case",
    ["missing_file", "not_a_dict", "no_data_list", "metainfo_list", "indices_out_of_range"],
)
def test_error_types(tmp_path, case):
    bad = str(tmp_path / "bad.json")
    good = write_ann(tmp_path / "ann.json")
    if case == "not_a_dict":
        fileio.dump([1, 2], bad)
    elif case == "no_data_list":
        fileio.dump({"metainfo": {}}, bad)
    calls = {
        "missing_file": lambda e: e.BaseDataset(str(tmp_path / "missing.json")),
        "not_a_dict": lambda e: e.BaseDataset(bad),
        "no_data_list": lambda e: e.BaseDataset(bad),
        "metainfo_list": lambda e: e.BaseDataset(good, metainfo=["x"]),
        "indices_out_of_range": lambda e: e.BaseDataset(
            good, indices=[0, 10], serialize_data=False
        ),
    }
    errors = both(lambda e: error_of(lambda: calls[case](e)))
    assert errors["mmengine"] is not None
    assert isinstance(errors["treadle"], type(errors["mmengine"]))


def test_test_mode_none_is_an_exception_in_both(tmp_path):
    ann = write_ann(tmp_path / "ann.json")
    errors = both(
        lambda e: error_of(lambda: e.BaseDataset(ann, test_mode=True, pipeline=[lambda d: None])[0])
    )
    # MMEngine raises a bare Exception; treadle a RuntimeError (an Exception, so the same
    # ``except Exception`` catches it) whose message names the dataset and the item.
    assert type(errors["mmengine"]) is Exception
    assert isinstance(errors["treadle"], RuntimeError)


def test_missing_prefix_key_is_a_key_error_not_an_assertion(tmp_path):
    ann = write_ann(tmp_path / "ann.json")
    errors = both(lambda e: error_of(lambda: e.BaseDataset(ann, data_prefix={"seg": "s"})))
    # Deliberate: MMEngine asserts (and ``python -O`` would skip it); treadle raises KeyError.
    assert isinstance(errors["mmengine"], AssertionError)
    assert isinstance(errors["treadle"], KeyError)


def test_concat_repeat_and_class_balanced(tmp_path):
    ann = write_ann(tmp_path / "ann.json", count=9)
    short = write_ann(tmp_path / "short.json", count=2)

    def wrappers(engine):
        toy = subclass(engine)
        concat = engine.ConcatDataset([toy(ann), toy(short)])
        repeat = engine.RepeatDataset(toy(short), times=3)
        balanced = engine.ClassBalancedDataset(
            toy(ann, indices=[0, 1, 2, 3, 4, 5, 6, 7, 8, 0]), 0.6
        )
        return {
            "concat": (len(concat), items(concat), concat.metainfo, concat.get_data_info(-1)),
            "repeat": (len(repeat), items(repeat), repeat.get_data_info(4)),
            "balanced": (len(balanced), items(balanced), balanced.get_cat_ids(3)),
        }

    made = both(wrappers)
    assert made["treadle"] == made["mmengine"]


@pytest.mark.parametrize(
    "case", ["metainfo_mismatch", "metainfo_type", "ignore_keys_type", "subset", "not_a_dataset"]
)
def test_wrapper_error_types(tmp_path, case):
    ann = write_ann(tmp_path / "ann.json")

    def call(engine):
        toy = subclass(engine)
        if case == "metainfo_mismatch":
            return engine.ConcatDataset([toy(ann), toy(ann, metainfo={"classes": ("q", "r")})])
        if case == "metainfo_type":
            return engine.ConcatDataset([toy(ann), toy(ann, metainfo={"classes": ["x"]})])
        if case == "ignore_keys_type":
            return engine.ConcatDataset([toy(ann)], ignore_keys=1)
        if case == "subset":
            return engine.RepeatDataset(toy(ann), 2).get_subset(1)
        return engine.RepeatDataset([1, 2], 2)

    errors = both(lambda e: error_of(lambda: call(e)))
    assert errors["mmengine"] is not None
    assert isinstance(errors["treadle"], type(errors["mmengine"]))


def same(a, b) -> bool:
    """Equal values with equal types, tensors compared by value and dtype."""
    if isinstance(a, torch.Tensor):
        return isinstance(b, torch.Tensor) and a.dtype == b.dtype and torch.equal(a, b)
    if type(a) is not type(b):
        return False
    if isinstance(a, np.ndarray):
        return a.dtype == b.dtype and np.array_equal(a, b)
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    return a == b


def batches():
    return {
        "dicts": [
            {"img": torch.full((2, 2), float(i)), "label": i, "name": f"n{i}", "f": 0.5 * i}
            for i in range(3)
        ],
        "tuples": [(np.full(3, i), i) for i in range(2)],
        "lists": [[torch.zeros(1), "a"], [torch.ones(1), "b"]],
        "namedtuples": [Pair(torch.zeros(2), 1), Pair(torch.ones(2), 2)],
        "nested": [{"a": {"b": [i, i + 1]}, "s": b"x"} for i in range(2)],
        "strings": ["a", "b"],
        "numbers": [1.5, 2.5],
    }


@pytest.mark.parametrize("kind", list(batches()))
@pytest.mark.parametrize("function", ["pseudo_collate", "default_collate"])
def test_collate_outputs(kind, function):
    outputs = both(lambda e: getattr(e, function)(batches()[kind]))
    assert same(outputs["treadle"], outputs["mmengine"]), outputs


def test_default_collate_keeps_each_engines_data_elements():
    mm_batch = mm.default_collate([{"s": MMElement(metainfo={"i": i})} for i in range(2)])
    tr_batch = tr.default_collate([{"s": TRElement(metainfo={"i": i})} for i in range(2)])
    assert [e.i for e in mm_batch["s"]] == [e.i for e in tr_batch["s"]] == [0, 1]


def test_collate_error_types():
    errors = both(lambda e: error_of(lambda: e.pseudo_collate([[1], [1, 2]])))
    assert isinstance(errors["treadle"], type(errors["mmengine"]))


def test_worker_init_fn_draws_the_same_numbers():
    def draws(engine):
        engine.worker_init_fn(2, 4, 1, 123)
        return np.random.rand(), torch.rand(1).item()

    made = both(draws)
    assert made["treadle"] == made["mmengine"]


def test_compose():
    pipelines = both(lambda e: e.Compose([lambda d: d + 1, lambda d: None, lambda d: d * 2]))
    assert pipelines["treadle"](1) == pipelines["mmengine"](1) is None
    pipelines = both(lambda e: e.Compose([lambda d: d + 1, lambda d: d * 2]))
    assert pipelines["treadle"](1) == pipelines["mmengine"](1) == 4
    errors = both(lambda e: error_of(lambda: e.Compose([1])))
    assert isinstance(errors["treadle"], type(errors["mmengine"]))
