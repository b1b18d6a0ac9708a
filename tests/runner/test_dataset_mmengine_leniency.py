"""Dataset inputs MMEngine accepts (a Config as metainfo, negative indices into wrappers), and
MMEngine's error classes and phrases where both refuse."""

from __future__ import annotations

from typing import ClassVar

import pytest

from treadle.config import Config, ConfigDict
from treadle.runner.dataset import BaseDataset, ClassBalancedDataset, ConcatDataset, RepeatDataset


class ListDataset(BaseDataset):
    """Items ``{'name': str(i), 'cats': [i % 2]}`` made in code."""

    METAINFO: ClassVar[dict] = {"classes": ("a", "b")}

    def __init__(self, count: int = 4, **kwargs) -> None:
        self.count = count
        kwargs.setdefault("data_prefix", {})
        super().__init__(**kwargs)

    def load_data_list(self) -> list[dict]:
        return [{"name": str(i), "cats": [i % 2]} for i in range(self.count)]

    def get_cat_ids(self, idx: int) -> list[int]:
        return self.get_data_info(idx)["cats"]


@pytest.mark.parametrize(
    "metainfo", [Config(dict(classes=("x", "y"))), ConfigDict(classes=("x", "y"))]
)
def test_metainfo_as_a_config(metainfo):
    dataset = ListDataset(metainfo=metainfo)
    assert dataset.metainfo == {"classes": ("x", "y")}
    # A wrapper keeps the metainfo of what it wraps.
    assert ConcatDataset([dataset, ListDataset(metainfo=metainfo)]).metainfo == dataset.metainfo
    assert RepeatDataset(dataset, times=2).metainfo == dataset.metainfo


def test_metainfo_of_another_type_names_mmengine_phrase():
    with pytest.raises(
        TypeError, match=r"metainfo should be a Mapping or Config, but got <class 'str'>"
    ):
        ListDataset(metainfo="classes")


def test_negative_indices_into_every_wrapper():
    concat = ConcatDataset([ListDataset(2), ListDataset(3)])
    assert concat[-1]["name"] == "2" and concat.get_data_info(-5)["name"] == "0"
    assert concat._get_ori_dataset_idx(-1) == (1, 2)
    repeated = RepeatDataset(ListDataset(3), times=2)
    assert repeated[-1]["name"] == "2" and repeated.get_data_info(-4)["name"] == "2"
    balanced = ClassBalancedDataset(ListDataset(4), oversample_thr=0.1)
    assert balanced.get_data_info(-1)["name"] == balanced.get_data_info(len(balanced) - 1)["name"]


def test_concat_negative_index_past_the_start_is_a_value_error_too():
    concat = ConcatDataset([ListDataset(2), ListDataset(3)])
    for error in (IndexError, ValueError):
        with pytest.raises(
            error, match=r"absolute value of index\(-6\) should not exceed dataset length\(5\)"
        ):
            concat._get_ori_dataset_idx(-6)


def test_concat_errors_name_mmengine_phrases():
    with pytest.raises(
        TypeError, match=r"ignore_keys should be a list or str, but got <class 'tuple'>"
    ):
        ConcatDataset([ListDataset()], ignore_keys=("classes",))
    with pytest.raises(
        ValueError, match=r"the 2-th dataset does not match meta information of the first dataset"
    ):
        ConcatDataset([ListDataset(), ListDataset(metainfo=dict(classes=("c",)))])
    with pytest.raises(
        TypeError, match=r"elements in datasets sequence should be config or `BaseDataset` instance"
    ):
        ConcatDataset([ListDataset(), [1]])


def test_data_prefix_of_another_type_names_mmengine_phrase():
    with pytest.raises(TypeError, match=r"prefix should be a string, but got <class 'NoneType'>"):
        ListDataset(data_prefix=dict(img_path=None))
