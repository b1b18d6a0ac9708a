"""BaseDataset's full_init steps under MMEngine's private names, which task datasets that
override full_init call (mmdetection 3.3's BaseDetDataset: ``_get_unserialized_subset`` then
``_serialize_data``; its subsets ``_get_serialized_subset``)."""

from __future__ import annotations

import pytest

from treadle import fileio
from treadle.runner.dataset import BaseDataset


def dataset(tmp_path, **kwargs) -> BaseDataset:
    data_list = [{"img_path": f"{i}.png", "label": i} for i in range(6)]
    fileio.dump({"metainfo": {}, "data_list": data_list}, str(tmp_path / "ann.json"))
    return BaseDataset(str(tmp_path / "ann.json"), lazy_init=True, **kwargs)


class DetLikeDataset(BaseDataset):
    """full_init written the way mmdetection's BaseDetDataset writes it."""

    def full_init(self) -> None:
        if self._fully_initialized:
            return
        self.data_list = self.load_data_list()
        self.data_list = self.filter_data()
        if self._indices is not None:
            self.data_list = self._get_unserialized_subset(self._indices)
        if self.serialize_data:
            self.data_bytes, self.data_address = self._serialize_data()
        self._fully_initialized = True


@pytest.mark.parametrize("serialize", [True, False])
@pytest.mark.parametrize("indices", [None, 3, -2, [4, 0]])
def test_an_overridden_full_init_gives_what_base_full_init_gives(tmp_path, serialize, indices):
    kwargs = dict(serialize_data=serialize, indices=indices)
    ours = dataset(tmp_path, **kwargs)
    ours.full_init()
    det = DetLikeDataset(str(tmp_path / "ann.json"), lazy_init=True, **kwargs)
    det.full_init()
    assert [det[i]["label"] for i in range(len(det))] == [
        ours[i]["label"] for i in range(len(ours))
    ]


def test_serialize_data_empties_the_list(tmp_path):
    data = dataset(tmp_path, serialize_data=False)
    data.full_init()
    data_bytes, data_address = data._serialize_data()
    assert data.data_list == []
    assert len(data_address) == 6 and data_bytes.dtype.name == "uint8"


def test_serialized_subset_keeps_the_chosen_items_in_order(tmp_path):
    data = dataset(tmp_path)
    data.full_init()
    data.data_bytes, data.data_address = data._get_serialized_subset([5, 1])
    assert [data[i]["label"] for i in range(len(data))] == [5, 1]
    with pytest.raises(IndexError, match="index 7 is out of range"):
        data._get_serialized_subset([7])


def test_unserialized_subset_takes_first_or_last_n(tmp_path):
    data = dataset(tmp_path, serialize_data=False)
    data.full_init()
    assert [item["label"] for item in data._get_unserialized_subset(2)] == [0, 1]
    assert [item["label"] for item in data._get_unserialized_subset(-2)] == [4, 5]
