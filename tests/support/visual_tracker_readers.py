"""Read back what the tracker backends wrote offline, with each tracker's own formats.

Used by tests/visual/test_{wandb,clearml,neptune,dvclive}_backend.py. Every reader imports its
tracker lazily, so importing this module needs none of them.
"""

from __future__ import annotations

import json
import struct
import subprocess
import sys
import threading
import warnings
import zipfile
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any

# ---------------------------------------------------------------------------------------- W&B
# An offline run is one run-<id>.wandb file: a ':W&B' header, then LevelDB's log format (32 KiB
# blocks of CRC-checked chunks) holding wandb_internal_pb2.Record protobufs. wandb has no
# Python reader for it any more (its Go core writes it), so the framing is decoded here and
# the records with wandb's own protobuf classes.

_WANDB_HEADER = struct.Struct("<4sHB")
_CHUNK_HEADER = struct.Struct("<IHB")
_BLOCK = 32768
_FULL, _FIRST, _MIDDLE, _LAST = 1, 2, 3, 4


@dataclass
class WandbRun:
    history: list[dict] = field(default_factory=list)
    config: dict = field(default_factory=dict)
    metrics: list[Any] = field(default_factory=list)  # MetricRecord protobufs (define_metric)
    artifacts: list[Any] = field(default_factory=list)  # ArtifactRecord protobufs

    def series(self, key: str, step_key: str = "step") -> list[tuple[Any, Any]]:
        """``[(row[step_key], row[key]), ...]`` for the rows that hold ``key``."""
        return [(row[step_key], row[key]) for row in self.history if key in row]


#: Neptune run keywords for tests: offline, no stdout/stderr/hardware capture threads and no
#: source upload (only what the test logs).
NEPTUNE_QUIET_RUN = dict(
    mode="offline",
    capture_stdout=False,
    capture_stderr=False,
    capture_hardware_metrics=False,
    capture_traceback=False,
    git_ref=False,
    source_files=[],
)


def offline_wandb_environment(tmp_path: Path, monkeypatch: Any) -> Any:
    """Put wandb offline with every file it writes (run, cache, settings) under ``tmp_path``
    (``monkeypatch`` is pytest's); returns the wandb module, or skips without it."""
    import pytest

    for name, value in {
        "HOME": tmp_path / "home",
        "WANDB_MODE": "offline",
        "WANDB_SILENT": "true",
        "WANDB_ERROR_REPORTING": "false",
        "WANDB_DIR": tmp_path / "wandb_dir",
        "WANDB_CACHE_DIR": tmp_path / "wandb_cache",
        "WANDB_CONFIG_DIR": tmp_path / "wandb_config",
        "WANDB_DATA_DIR": tmp_path / "wandb_data",
    }.items():
        monkeypatch.setenv(name, str(value))
    monkeypatch.chdir(tmp_path)
    return pytest.importorskip("wandb")


def _wandb_records(path: Path):
    from wandb.proto import wandb_internal_pb2

    data = path.read_bytes()
    ident, magic, version = _WANDB_HEADER.unpack_from(data)
    assert (ident, magic, version) == (b":W&B", 0xBEE1, 0), (ident, magic, version)
    pos, payload = _WANDB_HEADER.size, b""
    while pos + _CHUNK_HEADER.size <= len(data):
        left_in_block = _BLOCK - pos % _BLOCK
        if left_in_block < _CHUNK_HEADER.size:  # a block's zero padding
            pos += left_in_block
            continue
        crc, length, kind = _CHUNK_HEADER.unpack_from(data, pos)
        chunk = data[pos + _CHUNK_HEADER.size : pos + _CHUNK_HEADER.size + length]
        pos += _CHUNK_HEADER.size + length
        if kind == 0 and length == 0:
            continue
        assert zlib.crc32(chunk, zlib.crc32(bytes([kind]))) == crc, f"bad CRC in {path}"
        payload = chunk if kind in (_FULL, _FIRST) else payload + chunk
        if kind in (_FULL, _LAST):
            record = wandb_internal_pb2.Record()
            record.ParseFromString(payload)
            yield record


def read_wandb_run(wandb_dir: Path) -> WandbRun:
    """The single offline run under ``wandb_dir`` (the ``dir`` given to ``wandb.init``)."""
    (path,) = Path(wandb_dir).glob("wandb/offline-run-*/run-*.wandb")
    run = WandbRun()
    for record in _wandb_records(path):
        kind = record.WhichOneof("record_type")
        if kind == "history":
            row: dict = {}
            for item in record.history.item:
                keys = [item.key] if item.key else list(item.nested_key)
                target = row
                for key in keys[:-1]:
                    target = target.setdefault(key, {})
                target[keys[-1]] = json.loads(item.value_json)
            run.history.append(row)
        elif kind in ("config", "run"):
            updates = record.config.update if kind == "config" else record.run.config.update
            for item in updates:
                run.config[item.key] = json.loads(item.value_json)
        elif kind == "metric":
            run.metrics.append(record.metric)
        elif kind == "artifact":
            run.artifacts.append(record.artifact)
    return run


# ------------------------------------------------------------------------------------ ClearML
# An offline task is a folder <CLEARML_CACHE_DIR>/offline/<task id>/ (zipped at close):
# task.json (the task, configuration as HOCON text), metrics.jsonl (one JSON list of events
# per flush) and data/ (images and artifacts). Task.import_offline_session reads the same
# files, but only to upload them to a server.


@dataclass
class ClearMLSession:
    task: dict
    events: list[dict]
    names: list[str]

    def scalars(self, title: str) -> list[tuple[int, float]]:
        return [
            (event["iter"], event["value"])
            for event in self.events
            if event["type"] == "training_stats_scalar" and event["metric"] == title
        ]

    def images(self) -> list[dict]:
        return [event for event in self.events if event["type"] == "training_debug_image"]

    def configuration(self, name: str = "General") -> dict:
        from clearml.utilities.pyhocon import ConfigFactory

        text = self.task["configuration"][name]["value"]
        with warnings.catch_warnings():  # clearml's vendored pyhocon uses old pyparsing names
            warnings.simplefilter("ignore", DeprecationWarning)
            return ConfigFactory.parse_string(text).as_plain_ordered_dict()


def read_clearml_session(cache_dir: Path) -> ClearMLSession:
    """The single offline session zip under ``cache_dir`` (CLEARML_CACHE_DIR)."""
    (zip_path,) = Path(cache_dir).glob("offline/*.zip")
    with zipfile.ZipFile(zip_path) as archive:
        task = json.loads(archive.read("task.json"))
        names = archive.namelist()
        # No metrics.jsonl when nothing was reported.
        lines = (
            archive.read("metrics.jsonl").decode().splitlines() if "metrics.jsonl" in names else []
        )
    events = [event for line in lines if line.strip() for event in json.loads(line)]
    return ClearMLSession(task=task, events=events, names=names)


# ------------------------------------------------------------------------------------ Neptune
# An offline run is <NEPTUNE_DATA_DIRECTORY>/offline/run__<id>__.../: a DiskQueue of
# serialized Operations that `neptune sync` would send; read with neptune's own classes.


def read_neptune_operations(data_dir: Path) -> list[Any]:
    """Every Operation of the single offline run under ``data_dir``, in order."""
    from neptune.core.components.queue.disk_queue import DiskQueue
    from neptune.internal.operation import Operation

    (path,) = Path(data_dir).glob("offline/run__*")
    queue = DiskQueue(path, lambda op: op.to_dict(), Operation.from_dict, threading.RLock())
    operations = []
    while batch := queue.get_batch(1000):
        operations.extend(element.obj for element in batch)
    queue.close()  # not cleanup_if_empty(): that deletes the files
    return operations


def neptune_series(operations: list[Any], path: str) -> list[tuple[Any, Any]]:
    """``[(step, value), ...]`` appended to the series at ``path`` ('a/b' names ['a', 'b'])."""
    from neptune.internal.operation import LogFloats, LogImages

    return [
        (point.step, point.value)
        for op in operations
        if isinstance(op, (LogFloats, LogImages)) and "/".join(op.path) == path
        for point in op.values
    ]


# ------------------------------------------------------------------------------------ DVCLive


def read_dvclive_history(live_dir: Path, name: str) -> list[tuple[int, float]]:
    """``[(step, value), ...]`` of metric ``name`` read with dvclive's ``parse_metrics``.

    dvclive's ``read_history`` does the same but looks up the column ``name`` where a nested
    name 'val/acc' has the column 'acc'."""
    from dvclive.utils import parse_metrics

    # parse_metrics only needs these two paths; opening Live(live_dir) would reset the folder.
    live = SimpleNamespace(
        plots_dir=str(Path(live_dir) / "plots"), metrics_file=str(Path(live_dir) / "metrics.json")
    )
    history, _ = parse_metrics(live)
    rows = history[str(Path(live.plots_dir) / "metrics" / f"{name}.tsv")]
    column = name.rsplit("/", 1)[-1]
    return [(int(row["step"]), float(row[column])) for row in rows]


# -------------------------------------------------------------------------------- laziness


def modules_imported_by_building(backend_cfg: dict, modules: list[str], cwd: Path) -> list[str]:
    """Build ``backend_cfg`` from VISBACKENDS in a fresh interpreter; which of ``modules`` it
    imported. A fresh process, because this test process may have imported them already."""
    script = (
        "import json, sys\n"
        "from treadle.visual.registry import VISBACKENDS\n"
        f"VISBACKENDS.build({backend_cfg!r})\n"
        f"print(json.dumps([m for m in {modules!r} if m in sys.modules]))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=cwd, capture_output=True, text=True, check=True
    )
    return json.loads(done.stdout.strip().splitlines()[-1])
