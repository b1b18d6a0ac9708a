"""treadle.runner.evaluator against MMEngine 0.10's mmengine.evaluator: the same calls through
both, compared as a user observes them (values, keys, errors, dumped files).

Runs only where mmengine is installed: ``hatch run mmengine:pytest ...``.
"""

from __future__ import annotations

import pickle

import pytest

pytest.importorskip("mmengine")

import mmengine.evaluator as mm
import mmengine.registry as mm_registry
import mmengine.structures as mm_structures
import torch

import treadle.runner.evaluator as tr
import treadle.runner.registry as tr_registry
import treadle.runner.structures as tr_structures

SIDES = {
    "mmengine": (mm, mm_registry.METRICS, mm_structures),
    "treadle": (tr, tr_registry.METRICS, tr_structures),
}


def metric_classes(module, registry):
    """The same user metrics, written once, subclassing each side's BaseMetric."""

    class ParityAccuracy(module.BaseMetric):
        default_prefix = "acc"

        def process(self, data_batch, data_samples):
            for sample in data_samples:
                self.results.append((sample["pred"] == sample["gt"], data_batch))

        def compute_metrics(self, results):
            return {"top1": sum(hit for hit, _ in results) / len(results), "n": len(results)}

    class ParitySeen(module.BaseMetric):
        default_prefix = "seen"

        def process(self, data_batch, data_samples):
            self.results.append((data_batch, list(data_samples)))

        def compute_metrics(self, results):
            return {"batches": results, "meta": self.dataset_meta}

    class ParityFloat(ParityAccuracy):
        def compute_metrics(self, results):
            return 0.5

    for cls in (ParityAccuracy, ParitySeen, ParityFloat):
        registry.register_module(module=cls, force=True)
    return ParityAccuracy, ParitySeen, ParityFloat


CLASSES = {name: metric_classes(module, registry) for name, (module, registry, _) in SIDES.items()}
SAMPLES = [{"pred": index % 3, "gt": index % 2} for index in range(7)]


def both(call):
    """``call(side_name)`` on both sides: (mmengine's answer, treadle's answer)."""
    return call("mmengine"), call("treadle")


def outcome(function):
    try:
        return ("ok", function())
    except Exception as error:
        return ("error", type(error).__name__)


@pytest.mark.parametrize("prefix", [None, "", "val"])
def test_metric_values_and_prefixes(prefix):
    def run(side):
        metric = CLASSES[side][0](prefix=prefix)
        metric.process({"inputs": 1}, SAMPLES[:4])
        metric.process({"inputs": 2}, SAMPLES[4:])
        return metric.evaluate(5), metric.results

    mm_result, tr_result = both(run)
    assert mm_result == tr_result


def test_evaluator_with_configs_and_dataset_meta():
    def run(side):
        evaluator = SIDES[side][0].Evaluator([dict(type="ParityAccuracy"), dict(type="ParitySeen")])
        evaluator.dataset_meta = {"classes": ("a", "b")}
        evaluator.process(SAMPLES[:3], data_batch={"inputs": [0, 1, 2]})
        evaluator.process(SAMPLES[3:])
        return evaluator.evaluate(len(SAMPLES))

    mm_result, tr_result = both(run)
    assert mm_result == tr_result


def test_data_elements_become_the_same_dicts():
    def run(side):
        structures = SIDES[side][2]
        evaluator = SIDES[side][0].Evaluator(dict(type="ParitySeen"))
        element = structures.BaseDataElement(metainfo={"img_id": 4}, pred=torch.tensor([1, 2]))
        evaluator.process([element, {"pred": 3}])
        ((_, samples),) = evaluator.evaluate(1)["seen/batches"]
        return [
            {key: value.tolist() if torch.is_tensor(value) else value for key, value in s.items()}
            for s in samples
        ]

    mm_result, tr_result = both(run)
    assert mm_result == tr_result == [{"img_id": 4, "pred": [1, 2]}, {"pred": 3}]


@pytest.mark.parametrize("chunk_size", [1, 3, 10])
def test_offline_evaluate(chunk_size):
    def run(side):
        evaluator = SIDES[side][0].Evaluator(dict(type="ParityAccuracy"))
        data = [{"x": index} for index in range(len(SAMPLES))]
        return evaluator.offline_evaluate(SAMPLES, data, chunk_size=chunk_size)

    mm_result, tr_result = both(run)
    assert mm_result == tr_result


def test_offline_evaluate_length_mismatch():
    def run(side):
        evaluator = SIDES[side][0].Evaluator(dict(type="ParityAccuracy"))
        return outcome(lambda: evaluator.offline_evaluate(SAMPLES, SAMPLES[:2]))

    # MMEngine asserts (an AssertionError, gone under python -O); treadle raises an error that
    # is both MMEngine's AssertionError and a ValueError, naming both lengths.
    assert both(run) == (("error", "AssertionError"), ("error", "EvaluatorArgumentError"))
    from treadle.runner.evaluator.errors import EvaluatorArgumentError

    assert issubclass(EvaluatorArgumentError, ValueError)
    assert issubclass(EvaluatorArgumentError, AssertionError)


METRIC_DICTS = [
    {"acc/top1": 1, "acc/top5": 2},
    {"a/top1": 1, "b/top1": 2},
    {"coco/bbox/mAP": 3},
    {"loss": 4},
]
INDICATORS = [
    "top1",
    "acc/top1",
    "top5",
    "mAP",
    "coco/bbox/mAP",
    "bbox/mAP",
    "loss",
    "missing",
    "x/loss",
]


@pytest.mark.parametrize("metrics", METRIC_DICTS)
@pytest.mark.parametrize("indicator", INDICATORS)
def test_get_metric_value(indicator, metrics):
    mm_result, tr_result = both(
        lambda side: outcome(lambda: SIDES[side][0].get_metric_value(indicator, metrics))
    )
    assert mm_result == tr_result


def test_duplicate_metric_names_are_value_errors():
    def run(side):
        evaluator = SIDES[side][0].Evaluator(
            [dict(type="ParityAccuracy"), dict(type="ParityAccuracy")]
        )
        evaluator.process(SAMPLES)
        return outcome(lambda: evaluator.evaluate(len(SAMPLES)))

    assert both(run) == (("error", "ValueError"), ("error", "ValueError"))


def test_unknown_metric_type_is_a_key_error():
    def run(side):
        return outcome(lambda: SIDES[side][0].Evaluator(dict(type="ParityAcuracy")))

    assert both(run) == (("error", "KeyError"), ("error", "KeyError"))


def test_compute_metrics_returning_no_dict():
    def run(side):
        metric = CLASSES[side][2]()
        metric.process(None, SAMPLES)
        return outcome(lambda: metric.evaluate(len(SAMPLES)))

    # Deliberate: MMEngine fails inside its prefixing code ('float' has no attribute 'items');
    # treadle raises a TypeError naming the metric class and the type returned.
    assert both(run) == (("error", "AttributeError"), ("error", "TypeError"))


def test_unknown_collect_device():
    def run(side):
        return outcome(lambda: CLASSES[side][0](collect_device="tpu").collect_device)

    # Deliberate: MMEngine accepts any name and fails only when several processes collect;
    # treadle refuses it when the metric is made.
    assert both(run) == (("ok", "tpu"), ("error", "ValueError"))


def test_dump_results_files_are_the_same(tmp_path):
    def run(side):
        path = tmp_path / f"{side}.pkl"
        evaluator = SIDES[side][0].Evaluator(dict(type="DumpResults", out_file_path=str(path)))
        predictions = [{"pred": torch.arange(3) + index, "id": index} for index in range(5)]
        result = evaluator.offline_evaluate(predictions, chunk_size=2)
        return result, pickle.loads(path.read_bytes())

    (mm_result, mm_dumped), (tr_result, tr_dumped) = both(run)
    assert mm_result == tr_result == {}
    assert [d["id"] for d in mm_dumped] == [d["id"] for d in tr_dumped] == list(range(5))
    assert all(torch.equal(a["pred"], b["pred"]) for a, b in zip(mm_dumped, tr_dumped, strict=True))


@pytest.mark.parametrize("name", ["preds.json", "preds", "preds.pkl.txt"])
def test_dump_results_refuses_non_pickle_paths(name):
    mm_result, tr_result = both(
        lambda side: outcome(lambda: SIDES[side][0].DumpResults(out_file_path=name))
    )
    assert mm_result == tr_result == ("error", "ValueError")


def test_every_public_name_of_mmengine_evaluator_exists():
    missing = [name for name in mm.__all__ if not hasattr(tr, name)]
    assert missing == []
