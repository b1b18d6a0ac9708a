"""Running mmpretrain's own tools/train.py and tools/test.py with MMEngine or with treadle.

The downstream tests (tests/downstream/) start every run as a subprocess, as a user would:
``python tools/train.py CFG ...`` for the MMEngine reference and
``python -m treadle.compat tools/train.py CFG ...`` for treadle, on one CPU thread, with the
import-only torchvision stand-in first on ``PYTHONPATH``. The readers below turn a work
directory into what the tests compare: per-iteration scalars and the log lines with the
timings taken out.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
STANDIN = HERE / "torchvision_standin"
#: Its ``mmengine`` raises on import: first on the path of treadle runs, so that any import of
#: the real MMEngine (installed for the reference) that gets past treadle.compat fails.
HIDER = HERE / "mmengine_hider"
CONFIGS = HERE.parent / "downstream" / "configs"

ENGINES = ("mmengine", "treadle")

#: The checkpoint tools/test.py loads. Both are the weights of the uninterrupted run after
#: epoch 4: treadle's resumed run repeats it exactly; MMEngine's does not (its resume restarts
#: the persistent DataLoader workers' random streams from their seeds), so its own run's.
TESTED_CHECKPOINT = {"treadle": "resumed/epoch_4.pth", "mmengine": "work/epoch_4.pth"}

#: Keys of scalars.json whose values are timings: compared by presence, never by value.
TIMING_KEYS = frozenset({"time", "data_time", "eta"})

#: treadle keeps the timings of validation and test apart from training's (runner README,
#: "Differences from MMEngine"); MMEngine writes them as ``time`` / ``data_time`` in every mode.
TREADLE_TIMING_KEYS = {
    "val/time": "time",
    "val/data_time": "data_time",
    "test/time": "time",
    "test/data_time": "data_time",
}


#: Set by ``hatch run downstream:test``: there a missing toolbox is an error, not a skip.
REQUIRED_VARIABLE = "TREADLE_DOWNSTREAM_REQUIRED"


def skip_without_toolbox(toolbox: str = "mmpretrain", compiled_mmcv: bool = False) -> None:
    """Skip the calling test module unless ``toolbox`` and mmengine are installed (and, with
    ``compiled_mmcv``, mmcv's full build with its C++ ops, which mmdet and mmseg need).

    Looked up without importing them (the toolboxes import torch, mmcv and torchvision). In the
    downstream environment (``TREADLE_DOWNSTREAM_REQUIRED=1``) their absence fails instead, so
    a broken install cannot pass as a skipped suite.
    """
    import pytest

    missing = [name for name in (toolbox, "mmengine") if importlib.util.find_spec(name) is None]
    if compiled_mmcv and not _has_compiled_mmcv():
        missing.append("mmcv with its compiled ops (tools/build_mmcv.py)")
    if not missing:
        return
    if os.environ.get(REQUIRED_VARIABLE):
        raise RuntimeError(
            f"{', '.join(missing)} not installed, and {REQUIRED_VARIABLE} says the downstream "
            "suite must run: install them as the `downstream` hatch env does"
        )
    pytest.skip(
        f"{', '.join(missing)} not installed: the downstream suite runs in "
        "`hatch run downstream:test`",
        allow_module_level=True,
    )


def _package_dir(package: str) -> Path | None:
    """Where ``package`` is installed, found without importing it (imports take seconds)."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def _has_compiled_mmcv() -> bool:
    """mmcv-lite installs the same ``mmcv`` package without the ``_ext`` extension module."""
    folder = _package_dir("mmcv")
    return folder is not None and any(folder.glob("_ext*.so"))


def tools_dir(package: str = "mmpretrain") -> Path:
    """A toolbox's ``tools/`` as its wheel ships it (``<package>/.mim/tools``), unmodified."""
    folder = _package_dir(package)
    if folder is None:
        raise RuntimeError(f"{package} is not installed in this environment")
    return folder / ".mim" / "tools"


def run_env(hide_mmengine: bool = False) -> dict[str, str]:
    """The environment of every run: one thread, the torchvision stand-in, no inherited rank;
    with ``hide_mmengine``, the real MMEngine cannot be imported."""
    env = {
        key: value
        for key, value in os.environ.items()
        # A pytest started under torchrun, or a leftover of a distributed shell, must not make
        # the single-process runs join a group.
        if key not in {"RANK", "LOCAL_RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT"}
    }
    env["PYTHONPATH"] = os.pathsep.join([str(STANDIN), *filter(None, [env.get("PYTHONPATH")])])
    env.update(
        OMP_NUM_THREADS="1",
        MKL_NUM_THREADS="1",
        PYTHONHASHSEED="0",
        PYTHONWARNINGS="ignore",
        # MMEngine 0.10.7 calls torch.load without weights_only, and torch >= 2.6 defaults it
        # to True, which refuses the MessageHub in every checkpoint: without this its resume
        # and tools/test.py fail. treadle passes weights_only itself and needs no such switch.
        TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD="1",
    )
    return env


def engine_command(engine: str, script: Path, *args: str) -> list[str]:
    """``python SCRIPT ARGS`` (MMEngine) or ``python -m treadle.compat SCRIPT ARGS``."""
    if engine == "mmengine":
        return [sys.executable, str(script), *args]
    if engine == "treadle":
        return [sys.executable, "-m", "treadle.compat", str(script), *args]
    raise ValueError(f"engine must be one of {ENGINES}, got {engine!r}")


def torchrun_command(nproc: int, script: Path, *args: str) -> list[str]:
    """``torchrun --standalone --nproc-per-node N -m treadle.compat SCRIPT ARGS``."""
    torchrun = Path(sys.executable).with_name("torchrun")
    launcher = (
        [str(torchrun)] if torchrun.exists() else [sys.executable, "-m", "torch.distributed.run"]
    )
    return [
        *launcher,
        "--standalone",
        f"--nproc-per-node={nproc}",
        "-m",
        "treadle.compat",
        str(script),
        *args,
    ]


@dataclass
class Finished:
    """A finished run: its command line, exit status and output (stdout and stderr)."""

    command: list[str]
    returncode: int
    output: str

    def check(self) -> Finished:
        """Raise with the command and the end of its output unless it exited 0."""
        if self.returncode != 0:
            raise AssertionError(
                f"{' '.join(self.command)} exited {self.returncode}:\n{self.output[-6000:]}"
            )
        return self


def run(command: list[str], cwd: Path, timeout: float = 300) -> Finished:
    """Run ``command`` in ``cwd`` with :func:`run_env`; output is kept, never printed.

    A treadle run (``-m treadle.compat`` in the command) cannot import the real MMEngine.
    """
    done = subprocess.run(
        command,
        cwd=cwd,
        env=run_env(hide_mmengine="treadle.compat" in command),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=timeout,
        check=False,
    )
    return Finished(command, done.returncode, done.stdout)


def prepare_folder(folder: Path, data: Path) -> Path:
    """A run folder holding ``data`` (a link to the generated images) and the configs."""
    folder.mkdir(parents=True, exist_ok=True)
    link = folder / "data"
    if not link.exists():
        link.symlink_to(data, target_is_directory=True)
    for config in CONFIGS.glob("*.py"):
        shutil.copy(config, folder / config.name)
    return folder


def timestamp_dirs(work_dir: Path) -> list[Path]:
    """The per-run folders (``YYYYMMDD_HHMMSS``) of a work dir, oldest first."""
    return sorted(
        p for p in work_dir.iterdir() if p.is_dir() and re.fullmatch(r"\d{8}_\d{6}", p.name)
    )


def scalars(run_dir: Path) -> list[dict]:
    """The records of one run's ``vis_data/scalars.json``, in order."""
    path = run_dir / "vis_data" / "scalars.json"
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def json_log(run_dir: Path) -> list[dict]:
    """The records of one run's ``<stamp>.json`` log (tools/test.py writes no scalars.json);
    training runs keep it in ``vis_data/``, test runs next to the text log."""
    name = f"{run_dir.name}.json"
    (path,) = [p for p in (run_dir / name, run_dir / "vis_data" / name) if p.exists()]
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def mmengine_keys(record: dict) -> dict:
    """``record`` with treadle's val/test timing keys renamed to MMEngine's (under
    treadle.compat, validation records hold no ``iter``: exactly MMEngine's other keys)."""
    return {TREADLE_TIMING_KEYS.get(key, key): value for key, value in record.items()}


def train_losses(records: list[dict]) -> dict[int, float]:
    """``step -> loss`` of the training records (the logger interval is 1: every iteration)."""
    return {record["step"]: record["loss"] for record in records if "loss" in record}


def val_metrics(records: list[dict], key: str = "accuracy/top1") -> dict[int, float]:
    """``epoch -> metric`` of the validation records (their step is the epoch)."""
    return {record["step"]: record[key] for record in records if key in record}


_PREFIX = re.compile(
    r"^\d{4}/\d{2}/\d{2} \d{2}:\d{2}:\d{2} - (?P<logger>\S+) - (?P<level>[A-Z]+) - "
)
_TIMINGS = (
    # treadle's val/test epoch lines end with how long the pass took (issue 20).
    (re.compile(r"  (val|test)_time: [0-9.]+s$"), ""),
    (re.compile(r"\b(time|data_time): [0-9.]+"), r"\1: <t>"),
    (re.compile(r"\beta: \d+( days?, )?[0-9:]+"), "eta: <t>"),
    (re.compile(r"\d{8}_\d{6}"), "<stamp>"),
)


def log_records(run_dir: Path, folder: Path) -> list[str]:
    """The first line of every record of one run's text log, as ``LEVEL - message``.

    Timestamps, the logger's name (MMEngine's 'mmengine', treadle's 'treadle'), timings,
    the run's time stamp and the run folder's path are taken out; continuation lines (the
    environment banner, the config, the initialisation table) are left to other checks.
    """
    (log,) = run_dir.glob("*.log")
    lines = []
    for line in log.read_text().splitlines():
        match = _PREFIX.match(line)
        if not match:
            continue
        text = f"{match['level']} - {line[match.end() :]}".rstrip().replace(str(folder), "<folder>")
        for pattern, replacement in _TIMINGS:
            text = pattern.sub(replacement, text)
        lines.append(text)
    return lines


_TABLE_ROW = re.compile(r"^([a-z_]+:|\([A-Z_ ]+\) \S+| -+ )\s*$")


def hook_table(run_dir: Path) -> list[str]:
    """The "Hooks will be executed in the following order" table of one run's log."""
    (log,) = run_dir.glob("*.log")
    table: list[str] = []
    inside = False
    for line in log.read_text().splitlines():
        if inside:
            # Stage names, "(PRIORITY) HookName" rows and separators; MMEngine writes its
            # initialisation table right after it, without a record header.
            if not _TABLE_ROW.match(line):
                break
            table.append(line.rstrip())
        elif _PREFIX.match(line) and line.endswith(
            "Hooks will be executed in the following order:"
        ):
            inside = True
    return table
