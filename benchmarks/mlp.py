"""A small MLP and synthetic batches, shared by the benchmarks of training steps.

The model is big enough that a step does real work (a few hundred microseconds on one CPU
core), small enough to run anywhere; the same seed gives the same weights and batches, so two
sides of a comparison start from the same point.

    from mlp import make_batch, make_mlp, mlp_loss
    model = make_mlp()
    inputs, targets = make_batch()
    loss = mlp_loss(model, (inputs, targets))
"""

from __future__ import annotations

import torch
from torch import nn

IN_FEATURES = 256
HIDDEN = 512
CLASSES = 10


def make_mlp(
    in_features: int = IN_FEATURES,
    hidden: int = HIDDEN,
    depth: int = 3,
    classes: int = CLASSES,
    seed: int = 0,
    device: str | torch.device = "cpu",
) -> nn.Sequential:
    """``depth`` hidden Linear+ReLU layers, then a Linear classifier; weights from ``seed``."""
    generator_state = torch.random.get_rng_state()
    torch.manual_seed(seed)
    layers: list[nn.Module] = []
    width = in_features
    for _ in range(depth):
        layers += [nn.Linear(width, hidden), nn.ReLU()]
        width = hidden
    layers.append(nn.Linear(width, classes))
    model = nn.Sequential(*layers).to(device)
    # Leave the global generator as it was: building a model must not shift a caller's randomness.
    torch.random.set_rng_state(generator_state)
    return model


def make_batch(
    batch_size: int = 64,
    in_features: int = IN_FEATURES,
    classes: int = CLASSES,
    seed: int = 0,
    device: str | torch.device = "cpu",
) -> tuple[torch.Tensor, torch.Tensor]:
    """Random inputs and class labels drawn from their own generator seeded with ``seed``."""
    generator = torch.Generator().manual_seed(seed)
    inputs = torch.randn(batch_size, in_features, generator=generator)
    targets = torch.randint(classes, (batch_size,), generator=generator)
    return inputs.to(device), targets.to(device)


def mlp_loss(model: nn.Module, batch: tuple[torch.Tensor, torch.Tensor]) -> torch.Tensor:
    """Cross-entropy of ``model`` on ``batch``."""
    inputs, targets = batch
    return nn.functional.cross_entropy(model(inputs), targets)
