"""ToyZooInferencer: a BaseInferencer subclass as a downstream task writes one."""

from __future__ import annotations

from typing import ClassVar

import numpy as np
import torch

from treadle.runner.infer import BaseInferencer

from .registry import INFERENCERS


@INFERENCERS.register_module()
class ToyZooInferencer(BaseInferencer):
    """Inputs are feature vectors (lists, arrays, tensors) or ``.txt`` files of
    comma-separated numbers; predictions are ``dict(pred_label=int, pred_score=[...])``."""

    preprocess_kwargs: ClassVar[set[str]] = {"scale"}
    forward_kwargs: ClassVar[set[str]] = set()
    visualize_kwargs: ClassVar[set[str]] = {"show", "draw_scores"}
    postprocess_kwargs: ClassVar[set[str]] = {"with_scores"}

    def _init_pipeline(self, cfg):
        def load(item):
            if isinstance(item, str):
                with open(item) as file:
                    item = [float(x) for x in file.read().split(",")]
            return dict(inputs=torch.as_tensor(np.asarray(item), dtype=torch.float32))

        return load

    def preprocess(self, inputs, batch_size=1, scale=1.0):
        for batch in super().preprocess(inputs, batch_size=batch_size):
            batch["inputs"] = [x * scale for x in batch["inputs"]]
            yield batch

    def visualize(self, inputs, preds, show=False, draw_scores=False):
        if not draw_scores:
            return None
        # One row of gray levels per prediction: the class scores as an image.
        return [(p.pred_score.numpy()[None, :] * 255).astype(np.uint8) for p in preds]

    def postprocess(self, preds, visualization, return_datasamples=False, with_scores=True):
        if return_datasamples:
            predictions = preds
        else:
            predictions = []
            for pred in preds:
                item = dict(pred_label=int(pred.pred_label))
                if with_scores:
                    item["pred_score"] = pred.pred_score.tolist()
                predictions.append(item)
        return dict(predictions=predictions, visualization=visualization)
