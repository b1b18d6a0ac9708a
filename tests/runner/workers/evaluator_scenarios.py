"""Scenarios of tests/runner/test_evaluator_distributed.py, run on every rank of a gloo group.

The dataset has 7 samples; each rank gets its share as DefaultSampler(round_up=True) deals it
out (rank r takes indices r, r + world_size, ... of the dataset followed by its first samples
again, up to a multiple of world_size), and feeds it to the metrics in batches of 2.
"""

import os

import torch

from treadle.runner.evaluator import BaseMetric, Evaluator, TorchMetric

SIZE = 7
NUM_CLASSES = 4
GENERATOR = torch.Generator().manual_seed(3)
PREDS = torch.randint(0, NUM_CLASSES, (SIZE,), generator=GENERATOR).tolist()
TARGETS = torch.randint(0, NUM_CLASSES, (SIZE,), generator=GENERATOR).tolist()


class SampleIds(BaseMetric):
    """Returns which samples it saw, in the order it saw them after collection."""

    default_prefix = "ids"

    def process(self, data_batch, data_samples):
        self.results.extend(sample["id"] for sample in data_samples)

    def compute_metrics(self, results):
        return {"order": list(results), "correct": sum(PREDS[i] == TARGETS[i] for i in results)}


class PerBatch(BaseMetric):
    default_prefix = "batches"

    def process(self, data_batch, data_samples):
        self.results.append(len(data_samples))

    def compute_metrics(self, results):
        return {"samples": sum(results)}


class ReturnsList(SampleIds):
    def compute_metrics(self, results):
        return list(results)


def rank_indices(context):
    rank, world_size = context["rank"], context["world_size"]
    total = -(-SIZE // world_size) * world_size
    padded = (list(range(SIZE)) * 2)[:total]
    return padded[rank::world_size]


def feed(evaluator, context, batch_size=2):
    indices = rank_indices(context)
    for start in range(0, len(indices), batch_size):
        batch = indices[start : start + batch_size]
        samples = [{"id": i, "pred_label": PREDS[i], "gt_label": TARGETS[i]} for i in batch]
        evaluator.process(samples, data_batch={"inputs": batch})


def scenario_dataset(context):
    return {"preds": PREDS, "targets": TARGETS, "indices": rank_indices(context)}


def scenario_base_metric(context):
    evaluator = Evaluator(SampleIds())
    feed(evaluator, context)
    return evaluator.evaluate(SIZE)


def scenario_torch_metric(context):
    evaluator = Evaluator(
        [
            dict(type="TorchMetric", metric="MulticlassAccuracy", num_classes=NUM_CLASSES),
            TorchMetric("MulticlassConfusionMatrix", num_classes=NUM_CLASSES, prefix="cm"),
        ]
    )
    feed(evaluator, context)
    return evaluator.evaluate(SIZE)


def scenario_collect_through_files(context):
    directory = os.path.join(context["out_dir"], "collect")
    evaluator = Evaluator(SampleIds(collect_dir=directory))
    feed(evaluator, context)
    result = evaluator.evaluate(SIZE)
    return result, sorted(os.listdir(directory))


def scenario_collect_on_device(context):
    evaluator = Evaluator(SampleIds(collect_device="gpu"))  # gloo: the device is the CPU
    feed(evaluator, context)
    return evaluator.evaluate(SIZE)


def scenario_per_batch_results(context):
    evaluator = Evaluator(PerBatch())
    feed(evaluator, context)
    return evaluator.evaluate(SIZE)


def scenario_compute_error_reaches_every_rank(context):
    evaluator = Evaluator(ReturnsList())
    feed(evaluator, context)
    try:
        evaluator.evaluate(SIZE)
    except Exception as error:
        return type(error).__name__, str(error)
    return None


def scenario_still_in_step_after_the_error(context):
    # A rank left waiting by the error above would make this collection hang or mix up.
    return scenario_base_metric(context)
