"""pseudo_collate, default_collate, build_collate_fn and worker_init_fn."""

from __future__ import annotations

import random
from collections import namedtuple

import numpy as np
import pytest
import torch
from torch.utils.data import DataLoader

from treadle.runner.dataset import (
    COLLATE_FUNCTIONS,
    build_collate_fn,
    default_collate,
    pseudo_collate,
    worker_init_fn,
)
from treadle.runner.registry import FUNCTIONS
from treadle.runner.structures import BaseDataElement

Point = namedtuple("Point", ["x", "y"])


def test_pseudo_collate_transposes_without_stacking():
    tensors = [torch.zeros(2), torch.ones(2)]
    batch = pseudo_collate(
        [{"img": tensors[0], "meta": ("a", 1)}, {"img": tensors[1], "meta": ("b", 2)}]
    )
    assert batch["img"][0] is tensors[0] and batch["img"][1] is tensors[1]
    # Fields of sequences come out of zip as tuples, as in MMEngine.
    assert batch["meta"] == [("a", "b"), (1, 2)]
    assert pseudo_collate(["a", "b"]) == ["a", "b"]
    assert pseudo_collate([Point(1, "p"), Point(2, "q")]) == Point((1, 2), ("p", "q"))
    assert pseudo_collate([[1, 2], [3, 4]]) == [(1, 3), (2, 4)]


def test_default_collate_stacks_tensors_arrays_and_numbers():
    samples = [
        {"img": torch.full((2,), float(i)), "arr": np.full(3, i), "label": i, "name": f"n{i}"}
        for i in range(3)
    ]
    batch = default_collate(samples)
    assert torch.equal(batch["img"], torch.tensor([[0.0, 0.0], [1.0, 1.0], [2.0, 2.0]]))
    assert torch.equal(batch["arr"], torch.tensor([[0, 0, 0], [1, 1, 1], [2, 2, 2]]))
    assert torch.equal(batch["label"], torch.tensor([0, 1, 2]))
    assert batch["name"] == ["n0", "n1", "n2"]


def test_default_collate_keeps_data_elements_in_a_list():
    elements = [BaseDataElement(metainfo={"id": i}) for i in range(2)]
    batch = default_collate([{"inputs": torch.zeros(1), "data_samples": e} for e in elements])
    assert batch["data_samples"] == elements
    assert batch["data_samples"][0] is elements[0]
    assert batch["inputs"].shape == (2, 1)


def test_default_collate_keeps_container_types():
    batch = default_collate([Point(torch.zeros(1), 1), Point(torch.ones(1), 2)])
    assert isinstance(batch, Point) and torch.equal(batch.y, torch.tensor([1, 2]))
    # Tuples become lists (as torch's default_collate does); a range is rebuilt as a list.
    assert isinstance(default_collate([(1, 2), (3, 4)]), list)
    assert [t.tolist() for t in default_collate([range(2), range(2)])] == [[0, 0], [1, 1]]


@pytest.mark.parametrize("collate", [pseudo_collate, default_collate])
def test_samples_of_different_lengths_are_refused(collate):
    with pytest.raises(RuntimeError, match=r"sequences of different lengths \[1, 2\]"):
        collate([[1], [1, 2]])


def test_collate_functions_are_registered():
    assert COLLATE_FUNCTIONS is FUNCTIONS
    assert FUNCTIONS.get("pseudo_collate") is pseudo_collate
    assert FUNCTIONS.get("default_collate") is default_collate


def test_build_collate_fn_from_names_configs_and_functions():
    assert build_collate_fn(None) is pseudo_collate
    assert build_collate_fn("default_collate") is default_collate
    assert build_collate_fn(dict(type="pseudo_collate")) is pseudo_collate

    def scaled(batch, factor):
        return [item * factor for item in batch]

    bound = build_collate_fn(dict(type=scaled, factor=3))
    assert bound([1, 2]) == [3, 6]
    assert build_collate_fn(len) is len


def test_build_collate_fn_unknown_name_lists_the_closest():
    with pytest.raises(
        KeyError, match=r"default_colate is not in the treadle::function registry"
    ) as info:
        build_collate_fn(dict(type="default_colate"))
    assert "Did you mean 'default_collate'" in str(info.value)


def test_build_collate_fn_bad_configs():
    with pytest.raises(KeyError, match=r"the collate_fn config \{'factor': 2\} has no 'type' key"):
        build_collate_fn(dict(factor=2))
    with pytest.raises(
        TypeError,
        match="collate_fn must be a registered name, a config dict or a function, got int",
    ):
        build_collate_fn(3)
    with pytest.raises(TypeError, match="collate_fn type must be a name or a function, got 3"):
        build_collate_fn(dict(type=3))


def test_worker_init_fn_seeds_every_generator():
    worker_init_fn(worker_id=1, num_workers=4, rank=2, seed=10)
    drawn = (random.random(), np.random.rand(), torch.rand(1).item())
    random.seed(19)
    np.random.seed(19)
    torch.manual_seed(19)
    assert drawn == (random.random(), np.random.rand(), torch.rand(1).item())


class _RandomDataset(torch.utils.data.Dataset):
    def __len__(self):
        return 4

    def __getitem__(self, index):
        return np.random.randint(0, 2**31)


def test_workers_draw_distinct_reproducible_numbers():
    from functools import partial

    def draws():
        init = partial(worker_init_fn, num_workers=2, rank=0, seed=3)
        loader = DataLoader(_RandomDataset(), batch_size=1, num_workers=2, worker_init_fn=init)
        return [int(batch) for batch in loader]

    first = draws()
    assert first == draws()
    assert first[0] != first[1]  # worker 0 and worker 1 have different seeds
