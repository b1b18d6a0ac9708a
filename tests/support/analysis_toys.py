"""Small models for the tests of treadle.runner.analysis (and its parity suite)."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn


class ConvNet(nn.Module):
    """A plain, a strided-grouped and a transposed convolution."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.grouped = nn.Conv2d(8, 8, 3, stride=2, groups=4, bias=False)
        self.up = nn.ConvTranspose2d(8, 4, 2, stride=2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.up(self.grouped(self.conv(x)))


class LinearNet(nn.Module):
    """Linear layers on 2-d and 3-d inputs."""

    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(16, 32)
        self.fc2 = nn.Linear(32, 4, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(torch.relu(self.fc1(x)))


class NormNet(nn.Module):
    """Batch, layer, group and instance norm on one input."""

    def __init__(self) -> None:
        super().__init__()
        self.bn = nn.BatchNorm2d(3)
        self.bn_plain = nn.BatchNorm2d(3, affine=False)
        self.ln = nn.LayerNorm(8)
        self.gn = nn.GroupNorm(1, 3)
        self.inorm = nn.InstanceNorm2d(3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.bn(x) + self.bn_plain(x) + self.ln(x) + self.gn(x) + self.inorm(x)


class MatmulNet(nn.Module):
    """matmul, @, bmm and einsum on two operands."""

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> tuple[torch.Tensor, ...]:
        return (
            torch.matmul(a, b),
            a @ b,
            torch.bmm(a, b),
            torch.einsum("bij,bjk->bik", a, b),
        )


class AttentionNet(nn.Module):
    """Self-attention through nn.MultiheadAttention (and its weights), then a projection."""

    def __init__(self, embed: int = 16, heads: int = 4) -> None:
        super().__init__()
        self.attn = nn.MultiheadAttention(embed, heads)
        self.proj = nn.Linear(embed, embed)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out, _ = self.attn(x, x, x)
        return self.proj(out)


class SdpaNet(nn.Module):
    """scaled_dot_product_attention between projections."""

    def __init__(self, embed: int = 16, heads: int = 4) -> None:
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(embed, 3 * embed)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, n, e = x.shape
        q, k, v = self.qkv(x).view(b, n, 3, self.heads, e // self.heads).permute(2, 0, 3, 1, 4)
        return F.scaled_dot_product_attention(q, k, v)


class BasicBlock(nn.Module):
    """ResNet's basic block: two 3x3 conv-bn, a 1x1 conv-bn shortcut when the shape changes."""

    def __init__(self, cin: int, cout: int, stride: int = 1) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.relu = nn.ReLU(inplace=True)
        self.downsample = None
        if stride != 1 or cin != cout:
            self.downsample = nn.Sequential(
                nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout)
            )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        identity = x if self.downsample is None else self.downsample(x)
        out = self.relu(self.bn1(self.conv1(x)))
        return self.relu(self.bn2(self.conv2(out)) + identity)


class TinyResNet(nn.Module):
    """A stem, two stages of basic blocks, global pooling and a classifier."""

    def __init__(self, classes: int = 10) -> None:
        super().__init__()
        self.stem = nn.Sequential(
            nn.Conv2d(3, 8, 3, 1, 1, bias=False), nn.BatchNorm2d(8), nn.ReLU()
        )
        self.layer1 = nn.Sequential(BasicBlock(8, 8), BasicBlock(8, 8))
        self.layer2 = nn.Sequential(BasicBlock(8, 16, stride=2), BasicBlock(16, 16))
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(16, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.layer2(self.layer1(self.stem(x)))
        return self.fc(torch.flatten(self.pool(x), 1))


class UpsampleNet(nn.Module):
    """Nearest and bilinear upsampling, and grid sampling."""

    def __init__(self) -> None:
        super().__init__()
        self.near = nn.Upsample(scale_factor=2, mode="nearest")
        self.bil = nn.Upsample(scale_factor=2, mode="bilinear", align_corners=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        grid = torch.zeros(x.shape[0], 4, 4, 2)
        return (
            self.near(x).sum()
            + self.bil(x).sum()
            + F.grid_sample(x, grid, align_corners=False).sum()
        )
