"""The ``toyzoo://NAME`` checkpoint scheme: a model zoo that makes its weights from a seed."""

from __future__ import annotations

import zlib

import torch

from treadle.runner.checkpoint import CheckpointLoader

# The parameter shapes of each model the metafile lists (ToyZooClassifier's state dict keys).
SHAPES = {
    "toy-linear": {"head.weight": (3, 4), "head.bias": (3,)},
    "toy-mlp": {
        "head.0.weight": (8, 4),
        "head.0.bias": (8,),
        "head.2.weight": (3, 8),
        "head.2.bias": (3,),
    },
}


def zoo_state_dict(name: str) -> dict[str, torch.Tensor]:
    """The weights of the zoo model ``name``: the same on every call."""
    if name not in SHAPES:
        raise FileNotFoundError(f"toyzoo://{name}: no such model in the toy zoo")
    generator = torch.Generator().manual_seed(zlib.crc32(name.encode()))
    return {key: torch.randn(shape, generator=generator) for key, shape in SHAPES[name].items()}


def load_from_toyzoo(filename, map_location=None):
    return {"state_dict": zoo_state_dict(filename[len("toyzoo://") :]), "meta": {}}


CheckpointLoader.register_scheme(prefixes="toyzoo://", loader=load_from_toyzoo, force=True)
