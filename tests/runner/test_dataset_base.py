"""BaseDataset through its public API: reading annotation files on any backend, meta
information, prefixes, subsets, serialization, the pipeline and refetching, and the errors a
user can trigger."""

from __future__ import annotations

import pickle
from typing import ClassVar

import numpy as np
import pytest

from treadle import fileio
from treadle.runner.dataset import BaseDataset, Compose, force_full_init
from treadle.runner.registry import TRANSFORMS


def items(count: int) -> list[dict]:
    return [{"img_path": f"{i}.png", "label": i % 3} for i in range(count)]


def write_ann(path, count: int = 6, metainfo: dict | None = None) -> str:
    content = {"metainfo": metainfo or {"classes": ["a", "b", "c"]}, "data_list": items(count)}
    fileio.dump(content, str(path))
    return str(path)


class ToyDataset(BaseDataset):
    METAINFO: ClassVar[dict] = {"classes": ("x", "y"), "task": "toy"}

    def get_cat_ids(self, idx: int) -> list[int]:
        return [self.get_data_info(idx)["label"]]


@pytest.fixture(params=[True, False], ids=["serialized", "list"])
def serialize(request):
    return request.param


def test_reads_items_and_joins_prefixes(tmp_path, serialize):
    ann = write_ann(tmp_path / "ann.json")
    dataset = BaseDataset(
        "ann.json", data_root=str(tmp_path), data_prefix={"img_path": "img"},
        serialize_data=serialize,
    )  # fmt: skip
    assert dataset.ann_file == ann
    assert len(dataset) == 6
    assert dataset[4] == {"img_path": f"{tmp_path}/img/4.png", "label": 1, "sample_idx": 4}
    assert dataset.get_data_info(-1)["sample_idx"] == 5
    assert dataset.metainfo == {"classes": ["a", "b", "c"]}


def test_absolute_prefix_and_ann_file_ignore_data_root(tmp_path):
    ann = write_ann(tmp_path / "ann.json")
    dataset = BaseDataset(
        ann, data_root="/elsewhere", data_prefix={"img_path": "memory://bucket/img"}
    )
    assert dataset.ann_file == ann
    assert dataset[0]["img_path"] == "memory://bucket/img/0.png"


def test_annotation_file_in_memory_filesystem():
    pytest.importorskip("fsspec")
    write_ann("memory://treadle-dataset-test/ann.json", count=3)
    dataset = BaseDataset("ann.json", data_root="memory://treadle-dataset-test")
    # The default data_prefix (img_path='') puts data_root in front of every path.
    expected = [f"memory://treadle-dataset-test/{i}.png" for i in range(3)]
    assert [dataset[i]["img_path"] for i in range(3)] == expected


def test_annotation_file_as_yaml_and_pickle(tmp_path):
    for name in ("ann.yaml", "ann.pkl"):
        write_ann(tmp_path / name, count=2)
        assert len(BaseDataset(str(tmp_path / name))) == 2


def test_missing_annotation_file_names_path_and_backend(tmp_path):
    missing = tmp_path / "nope.json"
    with pytest.raises(FileNotFoundError, match=r"LocalBackend.*nope\.json"):
        BaseDataset(str(missing))


def test_missing_annotation_file_in_memory_names_backend():
    pytest.importorskip("fsspec")
    with pytest.raises(FileNotFoundError, match=r"memory.*memory://nowhere/ann\.json"):
        BaseDataset("memory://nowhere/ann.json")


@pytest.mark.parametrize(
    ("content", "error", "message"),
    [
        ([1, 2], TypeError, r"bad\.json.* holds a list"),
        ({"metainfo": {}}, ValueError, r"bad\.json.* no 'data_list' key"),
        ({"data_list": []}, ValueError, r"bad\.json.* no 'metainfo' key"),
        ({"metainfo": {}, "data_list": {"a": 1}}, TypeError, r"'data_list' in .*bad\.json.*dict"),
        ({"metainfo": [1], "data_list": []}, TypeError, r"'metainfo' in .*bad\.json.*list"),
    ],
)
def test_wrong_annotation_format_names_the_file(tmp_path, content, error, message):
    fileio.dump(content, str(tmp_path / "bad.json"))
    with pytest.raises(error, match=message):
        BaseDataset(str(tmp_path / "bad.json"))


def test_metainfo_merges_class_argument_and_file(tmp_path):
    ann = write_ann(tmp_path / "ann.json", metainfo={"classes": ["a"], "palette": [1, 2]})
    dataset = ToyDataset(ann, metainfo={"task": "cls"})
    # The argument wins over METAINFO; the file only fills what neither has.
    assert dataset.metainfo == {"classes": ("x", "y"), "task": "cls", "palette": [1, 2]}
    dataset.metainfo["task"] = "changed"
    assert dataset.metainfo["task"] == "cls"
    assert ToyDataset.METAINFO == {"classes": ("x", "y"), "task": "toy"}


def test_metainfo_string_naming_a_file_is_read_as_lines(tmp_path):
    ann = write_ann(tmp_path / "ann.json")
    (tmp_path / "classes.txt").write_text("cat\ndog\n")
    dataset = BaseDataset(ann, metainfo={"classes": str(tmp_path / "classes.txt"), "name": "x"})
    assert dataset.metainfo["classes"] == ["cat", "dog"]
    assert dataset.metainfo["name"] == "x"


def test_metainfo_not_a_mapping_is_a_type_error(tmp_path):
    with pytest.raises(
        TypeError,
        match=r"metainfo should be a Mapping or Config, but got <class .list.>: \[.cat.\]",
    ):
        BaseDataset(write_ann(tmp_path / "ann.json"), metainfo=["cat"])


def test_data_prefix_not_a_string(tmp_path):
    with pytest.raises(TypeError, match=r"data_prefix\['img_path'\] must be a str, got int"):
        BaseDataset(write_ann(tmp_path / "ann.json"), data_prefix={"img_path": 3})


def test_item_without_prefix_key(tmp_path):
    with pytest.raises(KeyError, match=r"has no 'seg_path' key, which data_prefix"):
        BaseDataset(write_ann(tmp_path / "ann.json"), data_prefix={"seg_path": "seg"})


@pytest.mark.parametrize(
    ("indices", "labels"),
    [(2, [0, 1]), (-2, [1, 2]), (100, [0, 1, 2, 0, 1, 2]), ([5, 0, -3], [2, 0, 0])],
)
def test_indices_choose_items(tmp_path, serialize, indices, labels):
    dataset = BaseDataset(
        write_ann(tmp_path / "ann.json"), indices=indices, serialize_data=serialize
    )
    assert [dataset[i]["label"] for i in range(len(dataset))] == labels


@pytest.mark.parametrize("bad", [6, -7])
def test_indices_out_of_range_name_index_and_length(tmp_path, serialize, bad):
    with pytest.raises(IndexError, match=rf"index {bad} is out of range .* of length 6"):
        BaseDataset(write_ann(tmp_path / "ann.json"), indices=[0, bad], serialize_data=serialize)


def test_indices_of_another_type(tmp_path):
    with pytest.raises(TypeError, match="indices must be an int or a sequence of ints, got str"):
        BaseDataset(write_ann(tmp_path / "ann.json"), indices="01")


def test_item_index_out_of_range(tmp_path, serialize):
    dataset = BaseDataset(write_ann(tmp_path / "ann.json"), serialize_data=serialize)
    with pytest.raises(IndexError, match="index 6 is out of range for BaseDataset of length 6"):
        dataset[6]


def test_get_subset_leaves_the_original_and_get_subset_changes_it(tmp_path, serialize):
    dataset = BaseDataset(write_ann(tmp_path / "ann.json"), serialize_data=serialize)
    subset = dataset.get_subset([4, 1])
    assert [subset[i]["img_path"] for i in range(2)] == ["4.png", "1.png"]
    assert subset[1]["sample_idx"] == 1
    assert len(dataset) == 6
    empty = dataset.get_subset([])
    assert len(empty) == 0
    dataset.get_subset_(-2)
    assert [dataset[i]["img_path"] for i in range(len(dataset))] == ["4.png", "5.png"]


def test_serialized_data_is_one_buffer(tmp_path):
    dataset = BaseDataset(write_ann(tmp_path / "ann.json"), serialize_data=True)
    assert dataset.data_list == []
    assert dataset.data_bytes.dtype == np.uint8 and dataset.data_bytes.ndim == 1
    assert dataset.data_address.dtype == np.int64 and len(dataset.data_address) == 6
    # Each read is a fresh copy: changing it leaves the dataset alone.
    dataset.get_data_info(0)["label"] = 99
    assert dataset[0]["label"] == 0
    # The dataset pickles (spawned DataLoader workers receive it so).
    assert pickle.loads(pickle.dumps(dataset))[5]["img_path"] == "5.png"


def test_unserialized_reads_are_copies(tmp_path):
    dataset = BaseDataset(write_ann(tmp_path / "ann.json"), serialize_data=False)
    dataset.get_data_info(0)["label"] = 99
    assert dataset[0]["label"] == 0
    assert len(dataset.data_list) == 6


def test_lazy_init_loads_on_first_use(tmp_path):
    dataset = BaseDataset(write_ann(tmp_path / "ann.json"), lazy_init=True)
    assert dataset._fully_initialized is False
    assert len(dataset) == 6
    assert dataset._fully_initialized is True
    lazy = BaseDataset(write_ann(tmp_path / "ann.json"), lazy_init=True)
    assert lazy[2]["img_path"] == "2.png"


def test_pipeline_of_callables_and_configs(tmp_path):
    @TRANSFORMS.register_module(force=True)
    class AddOne:
        def __call__(self, data):
            return {**data, "label": data["label"] + 1}

    dataset = BaseDataset(
        write_ann(tmp_path / "ann.json"),
        pipeline=[dict(type="AddOne"), lambda data: {"label": data["label"] * 10}],
    )
    assert [dataset[i] for i in range(3)] == [{"label": 10}, {"label": 20}, {"label": 30}]


def test_train_mode_refetches_when_the_pipeline_rejects(tmp_path):
    np.random.seed(0)
    dataset = BaseDataset(
        write_ann(tmp_path / "ann.json"),
        pipeline=[lambda data: data if data["label"] == 2 else None],
    )
    assert all(dataset[i]["label"] == 2 for i in range(6))


def test_refetch_gives_up_after_max_refetch(tmp_path):
    calls = []
    dataset = BaseDataset(
        write_ann(tmp_path / "ann.json"), max_refetch=4, pipeline=[lambda d: calls.append(d)]
    )
    with pytest.raises(RuntimeError, match=r"returned None for 5 items .*max_refetch=4"):
        dataset[0]
    assert len(calls) == 5


def test_test_mode_does_not_refetch(tmp_path):
    dataset = BaseDataset(
        write_ann(tmp_path / "ann.json"), test_mode=True, pipeline=[lambda data: None]
    )
    with pytest.raises(RuntimeError, match="test pipeline of BaseDataset returned None for item 3"):
        dataset[3]


def test_parse_data_info_may_return_several_items(tmp_path):
    class Split(BaseDataset):
        def parse_data_info(self, raw):
            return [dict(raw, part=0), dict(raw, part=1)]

    dataset = Split(write_ann(tmp_path / "ann.json", count=2), data_prefix={})
    assert [(dataset[i]["img_path"], dataset[i]["part"]) for i in range(4)] == [
        ("0.png", 0), ("0.png", 1), ("1.png", 0), ("1.png", 1),
    ]  # fmt: skip


def test_parse_data_info_of_the_wrong_type(tmp_path):
    class Broken(BaseDataset):
        def parse_data_info(self, raw):
            return raw["img_path"]

    with pytest.raises(TypeError, match=r"Broken.parse_data_info must return a dict .* got str"):
        Broken(write_ann(tmp_path / "ann.json"))


def test_filter_data_is_applied_before_indices(tmp_path):
    class OnlyLabelZero(BaseDataset):
        def filter_data(self):
            return [item for item in self.data_list if item["label"] == self.filter_cfg["label"]]

    dataset = OnlyLabelZero(write_ann(tmp_path / "ann.json"), filter_cfg={"label": 0}, indices=1)
    assert len(dataset) == 1 and dataset[0]["img_path"] == "0.png"


def test_get_cat_ids_must_be_implemented(tmp_path):
    dataset = BaseDataset(write_ann(tmp_path / "ann.json"))
    with pytest.raises(NotImplementedError, match="BaseDataset must implement get_cat_ids"):
        dataset.get_cat_ids(0)


def test_compose_rejects_what_is_not_callable():
    with pytest.raises(TypeError, match=r"transform 1 of the pipeline must be a callable .*int"):
        Compose([lambda d: d, 3])
    assert "Compose(" in repr(Compose([abs]))


def test_force_full_init_on_an_object_without_full_init():
    class NoInit:
        @force_full_init
        def size(self):
            return 1

    with pytest.raises(AttributeError, match=r"NoInit.size is decorated .* has no full_init"):
        NoInit().size()
