"""A small ResNet-like conv net and synthetic image batches, for the benchmarks and checks that
need a convolutional model (torchvision may be missing where they run, so it is written here).

A stem convolution, two stages of two residual blocks (the second stage halves the image and
doubles the width), global average pooling and a linear classifier: the layer kinds of a
ResNet-18 (conv, BatchNorm, ReLU, residual adds, strided downsampling) at a size that also
trains on one CPU core.

    from convnet import make_convnet, make_image_batch
    model = make_convnet(width=32)
    images, labels = make_image_batch(batch_size=16, image_size=16)
"""

from __future__ import annotations

import torch
from torch import nn

CHANNELS = 3
CLASSES = 10


class BasicBlock(nn.Module):
    """Two 3x3 convolutions with BatchNorm and a residual connection (a 1x1 projection where
    the stride or the width changes), as in ResNet-18."""

    def __init__(self, in_width: int, width: int, stride: int = 1) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(in_width, width, 3, stride=stride, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(width)
        self.conv2 = nn.Conv2d(width, width, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(width)
        self.shortcut: nn.Module = nn.Identity()
        if stride != 1 or in_width != width:
            self.shortcut = nn.Sequential(
                nn.Conv2d(in_width, width, 1, stride=stride, bias=False), nn.BatchNorm2d(width)
            )

    def forward(self, inputs: torch.Tensor) -> torch.Tensor:
        hidden = torch.relu(self.bn1(self.conv1(inputs)))
        return torch.relu(self.bn2(self.conv2(hidden)) + self.shortcut(inputs))


def make_convnet(
    width: int = 32,
    channels: int = CHANNELS,
    classes: int = CLASSES,
    seed: int = 0,
    device: str | torch.device = "cpu",
) -> nn.Sequential:
    """The conv net with ``width`` channels in its first stage; weights from ``seed``."""
    generator_state = torch.random.get_rng_state()
    torch.manual_seed(seed)
    model = nn.Sequential(
        nn.Conv2d(channels, width, 3, padding=1, bias=False),
        nn.BatchNorm2d(width),
        nn.ReLU(),
        BasicBlock(width, width),
        BasicBlock(width, width),
        BasicBlock(width, 2 * width, stride=2),
        BasicBlock(2 * width, 2 * width),
        nn.AdaptiveAvgPool2d(1),
        nn.Flatten(),
        nn.Linear(2 * width, classes),
    ).to(device)
    # Leave the global generator as it was: building a model must not shift a caller's randomness.
    torch.random.set_rng_state(generator_state)
    return model


def make_image_batch(
    batch_size: int = 16,
    image_size: int = 16,
    channels: int = CHANNELS,
    classes: int = CLASSES,
    seed: int = 0,
    device: str | torch.device = "cpu",
) -> tuple[torch.Tensor, torch.Tensor]:
    """Random images (N, C, H, W) and class labels drawn from their own generator."""
    generator = torch.Generator().manual_seed(seed)
    images = torch.randn(batch_size, channels, image_size, image_size, generator=generator)
    labels = torch.randint(classes, (batch_size,), generator=generator)
    return images.to(device), labels.to(device)
