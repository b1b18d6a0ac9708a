"""ToyZooClassifier, ToyZooDataset and the collate function the configs name."""

from __future__ import annotations

import torch
from torch import nn

from treadle.runner.dataset import pseudo_collate
from treadle.runner.model import BaseModel
from treadle.runner.structures import BaseDataElement

from .registry import DATASETS, FUNCTIONS, MODELS


@MODELS.register_module()
class ToyZooClassifier(BaseModel):
    """Scores ``num_classes`` classes of ``in_features`` features: one linear layer, or two
    with ``hidden > 0``. ``predict`` gives one BaseDataElement per sample."""

    def __init__(self, in_features=4, num_classes=3, hidden=0, data_preprocessor=None, **kwargs):
        super().__init__(data_preprocessor=data_preprocessor)
        self.build_kwargs = kwargs
        if hidden:
            self.head = nn.Sequential(
                nn.Linear(in_features, hidden), nn.ReLU(), nn.Linear(hidden, num_classes)
            )
        else:
            self.head = nn.Linear(in_features, num_classes)

    def forward(self, inputs, data_samples=None, mode="tensor", tag=None):
        if isinstance(inputs, (list, tuple)):
            inputs = torch.stack(list(inputs))
        scores = self.head(inputs.float())
        if mode == "tensor":
            return scores
        if mode == "loss":
            labels = torch.stack(list(data_samples)).long()
            return dict(loss=nn.functional.cross_entropy(scores, labels))
        # ``tag`` comes from toy_zoo_collate: the predictions say which collate made the batch.
        metainfo = {} if tag is None else dict(tag=tag)
        return [
            BaseDataElement(metainfo=metainfo, pred_score=row.softmax(0), pred_label=row.argmax())
            for row in scores
        ]


@DATASETS.register_module()
class ToyZooDataset(torch.utils.data.Dataset):
    """``length`` samples of 4 features; the label is the largest of the first three."""

    def __init__(self, length=12):
        generator = torch.Generator().manual_seed(0)
        self.data = torch.randn(length, 4, generator=generator)
        self.labels = self.data[:, :3].argmax(1)
        self.metainfo = dict(classes=("a", "b", "c"))

    def __len__(self):
        return len(self.data)

    def __getitem__(self, index):
        return dict(inputs=self.data[index], data_samples=self.labels[index])


@FUNCTIONS.register_module()
def toy_zoo_collate(batch, tag="toy"):
    """pseudo_collate, with a ``tag`` key saying which collate function made the batch."""
    collated = pseudo_collate(batch)
    collated["tag"] = tag
    return collated
