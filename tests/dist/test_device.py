"""get_data_device and cast_data_device on CPU tensors and nested containers (GPU moves are
in test_cuda.py)."""

from collections import OrderedDict, namedtuple

import pytest
import torch

from treadle.dist import cast_data_device, get_data_device

CPU = torch.device("cpu")
Pair = namedtuple("Pair", ["left", "right"])


@pytest.mark.parametrize(
    "data",
    [
        torch.ones(2),
        [torch.ones(1), torch.zeros(2)],
        (torch.ones(1),),
        {"a": torch.ones(1), "b": [torch.zeros(1), {"c": torch.ones(3)}]},
        Pair(torch.ones(1), torch.ones(2)),
    ],
    ids=["tensor", "list", "tuple", "nested dict", "namedtuple"],
)
def test_get_data_device(data):
    assert get_data_device(data) == CPU


@pytest.mark.parametrize("data", [[], {}, [[]]], ids=["list", "dict", "nested"])
def test_get_data_device_of_nothing(data):
    with pytest.raises(ValueError, match="data is empty"):
        get_data_device(data)


@pytest.mark.parametrize("data", ["text", 3, [1.0], {"a": None}])
def test_get_data_device_of_non_tensors(data):
    with pytest.raises(TypeError, match="data should be a Tensor, sequence of tensor or dict"):
        get_data_device(data)


def test_get_data_device_of_mixed_devices():
    with pytest.raises(ValueError, match="all tensors must be on one device, found cpu and meta"):
        get_data_device([torch.ones(1), torch.ones(1, device="meta")])


def test_cast_keeps_tensors_already_there():
    tensor = torch.ones(2)
    assert cast_data_device(tensor, CPU) is tensor


def test_cast_rebuilds_containers_with_their_types():
    data = OrderedDict(a=[torch.ones(1), (torch.zeros(2),)], b=Pair(torch.ones(1), torch.ones(2)))
    cast = cast_data_device(data, CPU)
    assert type(cast) is OrderedDict
    assert type(cast["a"]) is list
    assert type(cast["a"][1]) is tuple
    assert type(cast["b"]) is Pair
    assert cast["b"].right is data["b"].right


def test_cast_to_another_device_copies():
    data = {"x": torch.ones(2)}
    cast = cast_data_device(data, torch.device("meta"))
    assert cast["x"].device.type == "meta"
    assert data["x"].device == CPU


def test_cast_with_out_writes_in_place():
    data = [torch.tensor([1.0, 2.0]), {"k": torch.tensor([3])}]
    out = [torch.zeros(2), {"k": torch.zeros(1, dtype=torch.int64)}]
    cast_data_device(data, CPU, out=out)
    assert out[0].tolist() == [1.0, 2.0]
    assert out[1]["k"].tolist() == [3]


def test_cast_bad_input():
    with pytest.raises(TypeError, match="out must have the type of data: data is list, out is"):
        cast_data_device([torch.ones(1)], CPU, out=(torch.ones(1),))
    with pytest.raises(TypeError, match="out must not be a set"):
        cast_data_device({torch.ones(1)}, CPU, out={torch.ones(1)})
    with pytest.raises(ValueError, match="data and out differ in length: 2 and 1"):
        cast_data_device([torch.ones(1), torch.ones(1)], CPU, out=[torch.ones(1)])
    with pytest.raises(ValueError, match="data and out differ in length: 1 and 2"):
        cast_data_device({"a": torch.ones(1)}, CPU, out={"a": torch.ones(1), "b": torch.ones(1)})
    with pytest.raises(ValueError, match="data is empty"):
        cast_data_device([], CPU)
    with pytest.raises(ValueError, match="data is empty"):
        cast_data_device({}, CPU)
    with pytest.raises(TypeError, match="got str"):
        cast_data_device("text", CPU)


def test_numpy_arrays_are_not_sequences_of_tensors():
    numpy = pytest.importorskip("numpy")
    with pytest.raises(TypeError, match="got ndarray"):
        cast_data_device(numpy.ones(2), CPU)
