"""ConcatDataset, RepeatDataset and ClassBalancedDataset: lengths, items, meta information,
building from configs, and the errors a user can trigger."""

from __future__ import annotations

import math

import numpy as np
import pytest

from treadle import fileio
from treadle.runner.dataset import (
    BaseDataset,
    ClassBalancedDataset,
    ConcatDataset,
    RepeatDataset,
)
from treadle.runner.registry import DATASETS


@DATASETS.register_module(force=True)
class WrapperToyDataset(BaseDataset):
    """Items ``{'name': f'{prefix}{i}', 'cats': [...]}`` from a list given in code."""

    def __init__(self, cats: list[list[int]], prefix: str = "", **kwargs) -> None:
        self.cats, self.prefix = cats, prefix
        kwargs.setdefault("data_prefix", {})
        kwargs.setdefault("metainfo", {"classes": ("a", "b", "c")})
        super().__init__(**kwargs)

    def load_data_list(self) -> list[dict]:
        return [{"name": f"{self.prefix}{i}", "cats": c} for i, c in enumerate(self.cats)]

    def get_cat_ids(self, idx: int) -> list[int]:
        return self.get_data_info(idx)["cats"]


def toy(count: int, prefix: str = "", **kwargs) -> WrapperToyDataset:
    return WrapperToyDataset([[i % 3] for i in range(count)], prefix=prefix, **kwargs)


def names(dataset) -> list[str]:
    return [dataset[i]["name"] for i in range(len(dataset))]


def test_concat_items_in_order_and_negative_indices():
    concat = ConcatDataset([toy(3, "a"), dict(type="WrapperToyDataset", cats=[[0]], prefix="b")])
    assert len(concat) == 4
    assert names(concat) == ["a0", "a1", "a2", "b0"]
    assert concat[-1]["name"] == "b0"
    assert concat.get_data_info(3)["sample_idx"] == 0
    assert concat._get_ori_dataset_idx(-2) == (0, 2)
    assert [concat.get_cat_ids(i) for i in range(4)] == [[0], [1], [2], [0]]
    assert concat.metainfo == {"classes": ("a", "b", "c")}


def test_concat_index_out_of_range():
    concat = ConcatDataset([toy(2), toy(2)])
    with pytest.raises(IndexError, match="index 4 is out of range for ConcatDataset of length 4"):
        concat[4]
    with pytest.raises(IndexError, match="index -5 is out of range"):
        concat[-5]


def test_concat_metainfo_must_agree_unless_ignored():
    other = toy(1, metainfo={"classes": ("x",)})
    with pytest.raises(ValueError, match=r"'classes' of dataset 2 \(\('x',\)\) differs"):
        ConcatDataset([toy(1), other])
    assert len(ConcatDataset([toy(1), other], ignore_keys="classes")) == 2
    with pytest.raises(ValueError, match="dataset 1 has no 'extra' key"):
        ConcatDataset([toy(1), toy(1, metainfo={"classes": ("a", "b", "c"), "extra": 1})])
    with pytest.raises(
        TypeError, match="'classes' is a list in dataset 2 but a tuple in dataset 1"
    ):
        ConcatDataset([toy(1), toy(1, metainfo={"classes": ["a", "b", "c"]})])


def test_concat_compares_numpy_metainfo_by_value():
    palette = {"classes": ("a",), "palette": np.arange(3)}
    same = ConcatDataset([toy(1, metainfo=palette), toy(1, metainfo=dict(palette))])
    assert len(same) == 2
    with pytest.raises(ValueError, match="'palette' of dataset 2"):
        ConcatDataset(
            [toy(1, metainfo=palette), toy(1, metainfo={"classes": ("a",), "palette": np.ones(3)})]
        )


def test_wrapper_arguments_of_the_wrong_type():
    with pytest.raises(
        TypeError, match=r"ConcatDataset: datasets\[1\] must be a BaseDataset .*list"
    ):
        ConcatDataset([toy(1), [1, 2]])
    with pytest.raises(TypeError, match="ignore_keys must be a str or a list of str, got int"):
        ConcatDataset([toy(1)], ignore_keys=3)
    with pytest.raises(TypeError, match=r"RepeatDataset: dataset must be a BaseDataset .*range"):
        RepeatDataset(range(3), times=2)
    with pytest.raises(ValueError, match="at least one dataset"):
        ConcatDataset([])


def test_wrappers_have_no_subsets():
    for wrapper in (ConcatDataset([toy(2)]), RepeatDataset(toy(2), 2)):
        with pytest.raises(NotImplementedError, match="does not support get_subset"):
            wrapper.get_subset(1)
        with pytest.raises(NotImplementedError, match="does not support get_subset"):
            wrapper.get_subset_(1)


def test_repeat_dataset():
    repeated = RepeatDataset(dict(type="WrapperToyDataset", cats=[[0], [1]]), times=3)
    assert len(repeated) == 6
    assert names(repeated) == ["0", "1"] * 3
    assert repeated.get_data_info(5)["sample_idx"] == 1
    assert repeated.metainfo == {"classes": ("a", "b", "c")}
    with pytest.raises(IndexError, match="index 6 is out of range for RepeatDataset of length 6"):
        repeated[6]


def test_lazy_wrappers_initialize_on_first_use():
    inner = toy(3, lazy_init=True)
    repeated = RepeatDataset(inner, times=2, lazy_init=True)
    assert repeated._fully_initialized is False
    assert repeated[4]["name"] == "1"
    concat = ConcatDataset([toy(2, lazy_init=True)], lazy_init=True)
    assert len(concat) == 2


def test_class_balanced_repeats_rare_categories():
    # Category 0 is in 8 of 10 items, category 1 in 2 (items 8 and 9), category 2 in 1 (item 9).
    cats = [[0]] * 8 + [[1], [1, 2]]
    balanced = ClassBalancedDataset(dict(type="WrapperToyDataset", cats=cats), oversample_thr=0.5)
    factor_1 = math.ceil(math.sqrt(0.5 / 0.2))
    factor_2 = math.ceil(math.sqrt(0.5 / 0.1))
    assert balanced.repeat_indices == list(range(8)) + [8] * factor_1 + [9] * factor_2
    assert len(balanced) == 8 + factor_1 + factor_2
    assert balanced[len(balanced) - 1]["name"] == "9"
    assert balanced.get_cat_ids(8) == [1]
    assert balanced.metainfo == {"classes": ("a", "b", "c")}


def test_class_balanced_items_without_categories_appear_once():
    balanced = ClassBalancedDataset(WrapperToyDataset([[], [], [0]]), oversample_thr=1.0)
    assert balanced.repeat_indices == [0, 1, 2, 2]


def test_wrappers_build_from_the_registry_with_nested_configs(tmp_path):
    fileio.dump({"metainfo": {}, "data_list": [{"img_path": "x.png"}]}, str(tmp_path / "a.json"))
    cfg = dict(
        type="RepeatDataset",
        times=2,
        dataset=dict(type="ConcatDataset", datasets=[dict(type="WrapperToyDataset", cats=[[1]])]),
    )
    repeated = DATASETS.build(cfg)
    assert isinstance(repeated.dataset, ConcatDataset)
    assert names(repeated) == ["0", "0"]
    # Wrapper instances nest too.
    assert len(ClassBalancedDataset(RepeatDataset(toy(2), 2), oversample_thr=0.0)) == 4
