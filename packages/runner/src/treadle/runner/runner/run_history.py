"""Which run a resumed run continues, recorded for its curves (one history across resumes).

Every run writes its scalars to a folder of its own (``WORK_DIR/TIMESTAMP/vis_data``), so the
curves of a resumed run would start at the resume. Every checkpoint records its run's folder in
its meta (``log_dir``; MMEngine's checkpoints and older treadle ones end their
``experiment_name`` with the run's timestamp, which names the folder too). When a run resumes,
:func:`record_resumed_run` finds that folder and writes ``resumed_from.json`` beside the new
run's scalars (:func:`treadle.visual.run_history.write_resume_record`): the earlier run's folder,
relative so that a moved work dir keeps its history, and the iteration of the checkpoint.
``treadle plot`` and the curves drawn at the end of training then follow the records back
through every resume (:func:`treadle.visual.run_history.read_history`).
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Iterator, Mapping
from typing import Any

from treadle import dist
from treadle.logging import Logger

from .checkpoint_meta import is_remote

LOG_DIR_KEY = "log_dir"
"""The meta key of a checkpoint that holds its run's folder (absolute)."""

_TIMESTAMP = re.compile(r"(\d{8}_\d{6})$")  # setup_env's %Y%m%d_%H%M%S, as MMEngine's


def run_log_dir(meta: Mapping[str, Any]) -> str | None:
    """The run folder's name a checkpoint's ``meta`` records: the last part of its
    ``log_dir``, else the timestamp that ends its ``experiment_name`` (MMEngine's, and older
    treadle checkpoints), else None.

    Example:
        >>> run_log_dir({'experiment_name': 'digits_20261123_133501'})
        '20261123_133501'
    """
    log_dir = meta.get(LOG_DIR_KEY)
    if isinstance(log_dir, str) and log_dir:
        return os.path.basename(os.path.normpath(log_dir))
    name = meta.get("experiment_name")
    match = _TIMESTAMP.search(name) if isinstance(name, str) else None
    return match.group(1) if match else None


def earlier_run_dir(
    checkpoint: str, meta: Mapping[str, Any], work_dir: str | None = None
) -> str | None:
    """The folder of the run that saved ``checkpoint`` (with ``meta``), where it is found:
    beside the checkpoint (a work dir moved whole), at the ``log_dir`` the meta records, or in
    ``work_dir`` (checkpoints kept in another ``out_dir``). None when none of them exists.

    Example:
        >>> earlier_run_dir('work/epoch_3.pth', {'log_dir': '/old/work/20240101_000000'})
        ... # doctest: +SKIP
        '/now/work/20240101_000000'
    """
    name = run_log_dir(meta)
    if name is None:
        return None
    candidates = []
    if not is_remote(checkpoint):
        candidates.append(os.path.join(os.path.dirname(os.path.abspath(checkpoint)), name))
    recorded = meta.get(LOG_DIR_KEY)
    if isinstance(recorded, str) and os.path.isabs(recorded):
        candidates.append(recorded)
    if work_dir is not None:
        candidates.append(os.path.join(work_dir, name))
    for candidate in candidates:
        if os.path.isdir(candidate):
            return os.path.abspath(candidate)
    return None


def local_vis_dirs(runner: Any) -> Iterator[str]:
    """The folders the runner's LocalVisBackends write scalars.json to."""
    from treadle.visual import LocalVisBackend

    backends = getattr(getattr(runner, "visualizer", None), "_vis_backends", None)
    if not isinstance(backends, Mapping):
        return  # no treadle or MMEngine Visualizer (a stand-in runner of a test)
    for backend in backends.values():
        save_dir = getattr(backend, "_save_dir", None)
        if isinstance(backend, LocalVisBackend) and save_dir is not None:
            yield os.fspath(save_dir)


def record_resumed_run(runner: Any, checkpoint: str, meta: Mapping[str, Any]) -> None:
    """Write ``resumed_from.json`` beside the scalars of ``runner`` (on rank 0), naming the
    run that saved ``checkpoint`` and its iteration, so that the curves of both are drawn as
    one history; log why when that run is not found.

    Example:
        >>> record_resumed_run(runner, 'work_dirs/toy/epoch_3.pth', checkpoint['meta'])
        ... # doctest: +SKIP
    """
    if dist.get_rank() != 0:
        return
    vis_dirs = list(local_vis_dirs(runner))
    log_dir = getattr(runner, "log_dir", None)
    if not vis_dirs or log_dir is None:
        return  # no scalars.json to draw
    iteration = int(meta["iter"])
    earlier = earlier_run_dir(checkpoint, meta, getattr(runner, "work_dir", None))
    # An MMEngine program (treadle.compat: MMEngine's log lines) logs only MMEngine's lines at
    # INFO: these go to DEBUG there, and the record is written all the same.
    level = logging.DEBUG if Logger.mmengine_style else logging.INFO
    if earlier is None:
        runner.logger.log(
            level,
            f"The curves of this run start after iteration {iteration}: the run that saved "
            f"{checkpoint} is not found (its folder {run_log_dir(meta) or '(not recorded)'} is "
            "in neither the checkpoint's folder nor the work dir)",
        )
        return
    if os.path.abspath(earlier) == os.path.abspath(log_dir):
        return  # both runs started within one second: one folder, one scalars.json
    from treadle.visual.run_history import write_resume_record

    for vis_dir in vis_dirs:
        write_resume_record(
            vis_dir, earlier, iteration, epoch=meta.get("epoch"), checkpoint=checkpoint
        )
    runner.logger.log(
        level,
        f"The curves of this run continue those of {earlier} after iteration "
        f"{iteration} (recorded in {os.path.join(vis_dirs[0], 'resumed_from.json')})",
    )
