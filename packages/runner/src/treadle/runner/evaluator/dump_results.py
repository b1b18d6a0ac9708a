"""DumpResults: a metric that computes nothing and writes every prediction to a pickle file."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from treadle import fileio
from treadle.logging import print_log
from treadle.runner.registry import METRICS

from .cpu import to_cpu
from .metric import BaseMetric

PICKLE_SUFFIXES = (".pkl", ".pickle")


@METRICS.register_module()
class DumpResults(BaseMetric):
    """Write the predictions of the whole dataset, in dataset order, to ``out_file_path`` (any
    treadle.fileio backend); the file appears whole or not at all.

    Example:
        >>> evaluator = Evaluator(dict(type='DumpResults', out_file_path='work_dirs/preds.pkl'))
        >>> evaluator.offline_evaluate([{'pred': 1}, {'pred': 0}])
        {}
    """

    def __init__(
        self, out_file_path: str, collect_device: str = "cpu", collect_dir: str | None = None
    ) -> None:
        if not str(out_file_path).endswith(PICKLE_SUFFIXES):
            raise ValueError(
                f"The output file must be a pkl file. DumpResults writes a pickle file: "
                f"out_file_path must end in {' or '.join(PICKLE_SUFFIXES)}, got {out_file_path!r}"
            )
        super().__init__(collect_device=collect_device, collect_dir=collect_dir)
        self.out_file_path = str(out_file_path)

    def process(self, data_batch: Any, data_samples: Sequence[Any]) -> None:
        self.results.extend(to_cpu(data_samples))

    def compute_metrics(self, results: list) -> dict[str, Any]:
        # treadle.fileio writes to a temporary name and renames, on every backend.
        fileio.dump(results, self.out_file_path, file_format="pkl")
        print_log(f"Results have been saved to {self.out_file_path}.", logger="current")
        return {}
