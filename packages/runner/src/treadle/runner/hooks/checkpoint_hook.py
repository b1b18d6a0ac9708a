"""CheckpointHook: periodic, last and best checkpoints, on any treadle.fileio backend."""

from __future__ import annotations

import contextlib
import os
from collections import deque
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

from treadle import fileio
from treadle.dist import is_main_process

from ..checkpoint.io import merge_client_args
from ..checkpoint.pointer import write_pointer
from ..checkpoint.store_paths import same_location
from ..registry import HOOKS
from .checkpoint_args import (
    check_best_with_state,
    key_names,
    names_list,
    rules_list,
    save_best_names,
)
from .checkpoint_async import (
    STALE,
    AsyncSaves,
    SaveInFlight,
    prepare_async_save,
)
from .checkpoint_best import BestCheckpoints, same_folder
from .checkpoint_failure import (
    check_on_save_error,
    failure_on_any_rank,
    pointer_failed,
    removal_failed,
    save_failed,
    storage_failure,
)
from .checkpoint_publish import publish_checkpoint, remove_checkpoint
from .checkpoint_rules import INITIAL_SCORE, RULES, resolve_rules
from .checkpoint_schedule import SaveSchedule
from .hook import DATA_BATCH, Hook

OUT_DIR_NOTE = ".checkpoint_out_dir"


@HOOKS.register_module()
class CheckpointHook(AsyncSaves, SaveSchedule, BestCheckpoints, Hook):
    """Save checkpoints every ``interval`` epochs (or iterations), at the end of training, and
    the best one by a validation metric.

    Checkpoints go to ``runner.work_dir``, or to ``out_dir/<last folder of work_dir>`` on any
    treadle.fileio backend (``s3://bucket/ckpts``); each save updates the ``last_checkpoint``
    file in the work directory (and in the out_dir, so a run resumes from either).
    ``max_keep_ckpts`` deletes the oldest periodic checkpoints; ``save_best`` keeps one
    ``best_<metric>_<epoch|iter>_<n>.pth`` per named metric, the rule being 'greater', 'less'
    or inferred from the metric's name; a key the evaluation does not return is an error that
    names the keys it does return. The new best is written before the old one is deleted;
    ``best_with_state=True`` gives it the optimizer, scheduler and loop state too, so a run
    resumes from it. ``max_keep_ckpts`` never deletes a best checkpoint, nor the checkpoint a
    run resumed from before a newer one is complete, nor files in another folder than its own.
    What it needs to go on after a resume (the kept steps, the best scores and files) lives in
    the message hub, which checkpoints hold. Outside training (``runner.val()``) it reports the
    ``save_best`` scores and saves nothing.
    ``async_save=True`` has the strategy write each checkpoint in the background: the
    parameters and optimizer state are copied to host memory while the next forward and
    backward run (the next optimizer step waits for the copy), and a thread writes the file,
    then moves the ``last_checkpoint`` pointer and deletes the checkpoint ``max_keep_ckpts``
    dropped; a save waits for the previous one, and ``train()`` waits for the last one before
    it returns. A failed background write is reported at the next save or the end of training
    (as ``on_save_error`` says); the pointer never names an incomplete checkpoint.

    Example:
        >>> default_hooks = dict(checkpoint=dict(
        ...     type='CheckpointHook', interval=1, max_keep_ckpts=3,
        ...     save_best=['accuracy/top1', 'loss'], rule=['greater', 'less']))
        >>> resumable_best = dict(type='CheckpointHook', save_best='val/loss',
        ...                       best_with_state=True)
        >>> CheckpointHook(interval=2, by_epoch=False, out_dir='s3://bucket/ckpts',
        ...                published_keys=['meta', 'state_dict'])  # doctest: +ELLIPSIS
        <...CheckpointHook object at ...>
    """

    out_dir: str
    priority = "VERY_LOW"

    # Downstream projects override these to teach the rule inference their metrics' names.
    rule_map = RULES
    init_value_map = INITIAL_SCORE
    _default_greater_keys: ClassVar[list[str]] = [
        "acc",
        "top",
        "AR@",
        "auc",
        "precision",
        "mAP",
        "mDice",
        "mIoU",
        "mAcc",
        "aAcc",
    ]
    _default_less_keys: ClassVar[list[str]] = ["loss"]

    def __init__(
        self,
        interval: int = -1,
        by_epoch: bool = True,
        save_optimizer: bool = True,
        save_param_scheduler: bool = True,
        out_dir: str | Path | None = None,
        max_keep_ckpts: int = -1,
        save_last: bool = True,
        save_best: str | list[str] | None = None,
        rule: str | list[str] | None = None,
        greater_keys: Sequence[str] | None = None,
        less_keys: Sequence[str] | None = None,
        file_client_args: dict | None = None,
        filename_tmpl: str | None = None,
        backend_args: dict | None = None,
        published_keys: str | list[str] | None = None,
        save_begin: int = 0,
        async_save: bool = False,
        on_save_error: str = "continue",
        best_with_state: bool = False,
        **kwargs: Any,
    ) -> None:
        if not isinstance(interval, int):
            raise TypeError(f"CheckpointHook: interval must be an int, got {interval!r}")
        if save_begin < 0:
            raise ValueError(f"CheckpointHook: save_begin must be >= 0, got {save_begin}")
        merge_client_args(file_client_args, backend_args)
        self.interval = interval
        self.by_epoch = by_epoch
        self.save_optimizer = save_optimizer
        self.save_param_scheduler = save_param_scheduler
        self.out_dir = os.fspath(out_dir) if isinstance(out_dir, Path) else out_dir  # type: ignore[assignment]
        # What the user wrote: before_train derives out_dir from it (again on a second train()).
        self._out_root = self.out_dir
        self.max_keep_ckpts = max_keep_ckpts
        self.save_last = save_last
        self.save_begin = save_begin
        if not isinstance(async_save, bool):
            raise TypeError(f"CheckpointHook: async_save must be a bool, got {async_save!r}")
        # The strategy's CheckpointIO writes in the background; the next save, the end of
        # train() and the runner's exit wait for it.
        self.async_save = async_save
        # A write that fails (after treadle.fileio's retries): log it and go on, or stop.
        self.on_save_error = check_on_save_error(on_save_error)
        self.args = kwargs
        self.file_client_args = file_client_args
        self.backend_args = backend_args
        if filename_tmpl is None:
            filename_tmpl = "epoch_{}.pth" if by_epoch else "iter_{}.pth"
        elif filename_tmpl.count("{}") != 1:
            raise ValueError(
                f'CheckpointHook: filename_tmpl must hold "{{}}" exactly once (replaced with the '
                f"epoch or iteration), got {filename_tmpl!r}"
            )
        self.filename_tmpl = filename_tmpl

        self.greater_keys = key_names(greater_keys, self._default_greater_keys, "greater_keys")
        self.less_keys = key_names(less_keys, self._default_less_keys, "less_keys")
        self.save_best = save_best_names(save_best)
        if self.save_best is not None:
            rules = rules_list(rule, self.save_best)
            self.is_better_than: dict[str, Any] = {}
            self._init_rule(rules, self.save_best)
            if len(self.key_indicators) == 1:
                self.best_ckpt_path: str | None = None
            else:
                self.best_ckpt_path_dict: dict[str, str | None] = {}
        self.best_with_state = check_best_with_state(best_with_state, self.save_best)

        self.published_keys = names_list(published_keys, "published_keys")
        self.last_ckpt: str | None = None
        self.keep_ckpt_ids: deque = deque()
        # The asynchronous save whose write may still be going on (see .checkpoint_async).
        self._in_flight: SaveInFlight | None = None
        # runner.val()/test() call before_run without before_train: no training state to save.
        self._outside_training = False
        # The checkpoint a resumed run continues: kept until this run has written a newer one.
        self._resumed_from: str | None = None
        self._saved_since_resume = False

    # --- arguments ---

    def _init_rule(self, rules: Sequence[str | None], key_indicators: Sequence[str]) -> None:
        """Set ``rules``, ``key_indicators`` and ``is_better_than`` for ``key_indicators``."""
        self.rules = resolve_rules(rules, key_indicators, self.greater_keys, self.less_keys)
        for key, rule in zip(key_indicators, self.rules, strict=True):
            if rule is not None:
                self.is_better_than[key] = self.rule_map[rule]
        self.key_indicators = list(key_indicators)

    # --- where checkpoints go ---

    def before_run(self, runner: Any) -> None:
        """Every run starts here; only training follows it with before_train."""
        self._outside_training = True

    def before_train(self, runner: Any) -> None:
        """Resolve the output folder and backend, and take back what a resumed run kept."""
        self._outside_training = False
        self._in_flight = None
        work_dir = os.fspath(runner.work_dir)
        backend_args = self.file_client_args or self.backend_args
        root = work_dir if self._out_root is None else self._out_root
        # The backend this hook writes through; `file_backend` is the one it shows (MMEngine's
        # FileClient where file_client_args is given).
        self._store = fileio.get_file_backend(
            root, backend_args=backend_args, enable_singleton=True
        )
        self.out_dir = root
        if root != work_dir:
            # Several runs share one out_dir: each gets a folder named after its work_dir.
            basename = os.path.basename(work_dir.rstrip(os.sep))
            self.out_dir = self._store.join_path(root, basename)
        self._file_client = None
        self.file_backend = self._store
        if self.file_client_args is not None:
            # A backend that FileClient does not know (backend='local') raises: treadle.fileio's
            # backends took it above, so the hook works where MMEngine's fails.
            with contextlib.suppress(ValueError):
                self.file_backend = self.file_client
        runner.logger.info(f"Checkpoints will be saved to {self.out_dir}.")
        if self.async_save:
            prepare_async_save(runner)
        if self.out_dir != work_dir and is_main_process():
            # Where a resume looks before the first pointer exists (a kill between the first
            # checkpoint and the pointer): find_latest_checkpoint reads it.
            fileio.put_text(self.out_dir, os.path.join(work_dir, OUT_DIR_NOTE))

        hub = runner.message_hub
        # A resumed run's message hub holds the best scores and files (MMEngine #1166): the
        # next better result replaces that file instead of leaving two bests.
        if self.save_best is not None:
            if len(self.key_indicators) == 1:
                self.best_ckpt_path = hub.runtime_info.get("best_ckpt")
            else:
                for key in self.key_indicators:
                    self.best_ckpt_path_dict[key] = hub.runtime_info.get(f"best_ckpt_{key}")

        self._resumed_from = hub.runtime_info.get("last_ckpt")
        self._saved_since_resume = False
        if self.max_keep_ckpts > 0:
            kept = list(hub.runtime_info.get("keep_ckpt_ids", []))
            if self._resumed_from and not same_folder(self._resumed_from, self.out_dir):
                # Steps another folder kept: deleting them here would delete files this run
                # never wrote (its checkpoints of the same names).
                runner.logger.info(
                    f"CheckpointHook: resumed from {self._resumed_from}, outside {self.out_dir}: "
                    "max_keep_ckpts counts only the checkpoints this run writes there"
                )
                kept = []
                hub.update_info("keep_ckpt_ids", [])
                hub.update_info(STALE, [])
            # A resumed run may keep fewer than the one that saved: drop the surplus now,
            # and the files a killed run dropped but had not deleted yet.
            surplus = kept[: max(0, len(kept) - self.max_keep_ckpts)]
            kept = kept[len(surplus) :]
            self.keep_ckpt_ids = deque(kept, self.max_keep_ckpts)
            stale = [step for step in hub.runtime_info.get(STALE, []) if step not in kept]
            if surplus or stale:
                self._point_at_resumed(runner)
            for step in surplus + stale:
                self._remove_step(step)

    @property
    def file_client(self) -> Any:
        """MMEngine's deprecated ``FileClient`` for ``out_dir`` (from ``file_client_args`` when
        given), made on first use, after ``before_train``. The hook never uses it (it writes
        through a backend of treadle.fileio), so a run that never asks for it gets no
        deprecation warning; with ``file_client_args``, ``file_backend`` is this client, as in
        MMEngine.

        Example:
            >>> hook = CheckpointHook(file_client_args=dict(backend='disk'))
            >>> hook.before_train(runner)  # doctest: +SKIP
            >>> hook.file_client is hook.file_backend  # doctest: +SKIP
            True
        """
        client = self.__dict__.get("_file_client")
        if client is None:
            if self.out_dir is None:
                raise AttributeError(
                    "CheckpointHook.file_client is made in before_train, from out_dir; it has "
                    "not run yet"
                )
            client = fileio.FileClient.infer_client(self.file_client_args, self.out_dir)
            self._file_client = client
        return client

    @file_client.setter
    def file_client(self, client: Any) -> None:
        self._file_client = client

    def _point_at_resumed(self, runner: Any) -> None:
        # The pointer may still name an older file (a kill between a checkpoint and the
        # pointer): it moves to the checkpoint this run resumed from before any is deleted.
        resumed = runner.message_hub.runtime_info.get("last_ckpt")
        if resumed and is_main_process() and self._store.exists(resumed):
            self.last_ckpt = resumed
            self._write_pointers(runner)

    def _path(self, filename: str) -> str:
        return self._store.join_path(self.out_dir, filename)

    def _remove_step(self, step: int) -> None:
        path = self._removable(step)
        if path is not None:
            self._remove_path(path)

    def _removable(self, step: int) -> str | None:
        """The file of ``step`` if this process is to delete it."""
        if not is_main_process():
            return None
        path = self._path(self.filename_tmpl.format(step))
        resumed = self._resumed_from
        if path in self._best_paths() or (
            resumed and same_location(path, resumed) and not self._saved_since_resume
        ):
            # max_keep_ckpts never takes a best checkpoint, nor the one this run resumed
            # from before a newer checkpoint of it is complete.
            return None
        return path

    def _remove_path(self, path: str) -> None:
        try:
            remove_checkpoint(path, self._store)
        except OSError as exc:  # a file too many is no reason to stop training
            removal_failed(path, exc)

    # --- periodic and last checkpoints ---

    def after_train_epoch(self, runner: Any) -> None:
        """Save every ``interval`` epochs from ``save_begin``, and after the last epoch."""
        if not self.by_epoch:
            return
        if self.every_n_epochs(runner, self.interval, self.save_begin) or (
            self.save_last and self.is_last_train_epoch(runner)
        ):
            runner.logger.info(f"Saving checkpoint at {runner.epoch + 1} epochs")
            self._save_checkpoint(runner)

    def after_train_iter(
        self,
        runner: Any,
        batch_idx: int,
        data_batch: DATA_BATCH = None,
        outputs: dict | None = None,
    ) -> None:
        """Save every ``interval`` iterations from ``save_begin``, and after the last one."""
        if self.by_epoch:
            return
        # Runs every step: the counters are read once (the same test as every_n_train_iters
        # and is_last_train_iter).
        done = runner.iter + 1
        since = done - self.save_begin
        periodic = self.interval > 0 and since >= 0 and since % self.interval == 0
        if periodic or (self.save_last and done == runner.max_iters):
            runner.logger.info(f"Saving checkpoint at {runner.iter + 1} iterations")
            self._save_checkpoint(runner)

    def _save_checkpoint(self, runner: Any) -> None:
        if self.by_epoch:
            step = runner.epoch + 1
            meta = dict(epoch=step, iter=runner.iter)
        else:
            step = runner.iter + 1
            meta = dict(epoch=runner.epoch, iter=step)
        self._save_checkpoint_with_step(runner, step, meta)

    def _save_checkpoint_with_step(self, runner: Any, step: int, meta: dict) -> None:
        self._settle_async_save(runner)
        kept = list(self.keep_ckpt_ids)
        dropped = None
        if self.max_keep_ckpts > 0 and not (self.keep_ckpt_ids and self.keep_ckpt_ids[-1] == step):
            # The kept steps written into this checkpoint are the ones left on disk once it is
            # saved; the oldest is deleted after the save succeeds, so a failed save leaves
            # every earlier checkpoint in place. Saving the same step again (after a new best)
            # keeps none out.
            if len(self.keep_ckpt_ids) == self.max_keep_ckpts:
                dropped = self.keep_ckpt_ids.popleft()
            self.keep_ckpt_ids.append(step)
            runner.message_hub.update_info("keep_ckpt_ids", list(self.keep_ckpt_ids))
            # Written into this checkpoint: a kill after it is saved and before the dropped
            # file is deleted leaves that file to the resumed run to delete.
            runner.message_hub.update_info(STALE, [] if dropped is None else [dropped])

        filename = self.filename_tmpl.format(step)
        previous = self.last_ckpt
        self.last_ckpt = self._path(filename)
        runner.message_hub.update_info("last_ckpt", self.last_ckpt)
        try:
            runner.save_checkpoint(
                self.out_dir,
                filename,
                self.file_client_args,
                save_optimizer=self.save_optimizer,
                save_param_scheduler=self.save_param_scheduler,
                meta=meta,
                by_epoch=self.by_epoch,
                backend_args=self.backend_args,
                **({"async_save": True} if self.async_save else {}),
                **self.args,
            )
        except (OSError, RuntimeError) as exc:  # StorageError, ENOSPC, permissions...
            failure = storage_failure(exc, self.out_dir, previous)
            if failure is None:  # not the storage's fault
                raise
        else:
            failure = None
        # Rank 0 alone writes a whole checkpoint: every rank learns of its failure (one
        # collective a save), so that all go on, or all stop, together.
        failure = failure_on_any_rank(failure)
        if failure is not None:
            # As if this save had not been asked for: the pointers keep naming `previous`.
            self.last_ckpt = previous
            runner.message_hub.update_info("last_ckpt", previous)
            if self.max_keep_ckpts > 0:
                self.keep_ckpt_ids = deque(kept, self.max_keep_ckpts)
                runner.message_hub.update_info("keep_ckpt_ids", kept)
                runner.message_hub.update_info(STALE, [])
            save_failed(runner, self, self._path(filename), previous, failure)
            return
        self._saved_since_resume = True
        if self.async_save:
            self._finish_in_background(runner, previous, kept, step, dropped)
            return
        if is_main_process():
            try:
                self._write_pointers(runner)
            except OSError as exc:  # the checkpoint is whole; only its pointer is behind
                pointer_failed(runner, self, self.last_ckpt, exc)
        if dropped is not None:
            self._remove_step(dropped)

    def _write_pointers(self, runner: Any) -> None:
        # The pointer moves last, once the checkpoint it names is complete; written atomically.
        # Each names the checkpoint relative to its own folder when it lies there, so a copied
        # work dir resumes its own files.
        work_dir = os.fspath(runner.work_dir)
        write_pointer(work_dir, self.last_ckpt)
        if self.out_dir != work_dir:
            write_pointer(self.out_dir, self.last_ckpt, backend=self._store)

    # --- best checkpoints ---

    def after_val_epoch(self, runner: Any, metrics: dict[str, Any] | None = None) -> None:
        """Save a new best checkpoint for each ``save_best`` metric that improved."""
        if not metrics:
            runner.logger.warning(
                "Since `metrics` is an empty dict, the behavior to save the best checkpoint "
                "will be skipped in this evaluation."
            )
            return
        if not self.save_best:
            return
        if self._outside_training:
            self._report_outside_training(runner, metrics)
            return
        self._save_best_checkpoint(runner, metrics)

    # --- publishing ---

    def after_train(self, runner: Any) -> None:
        """Publish the last and best checkpoints with only ``published_keys``."""
        self._settle_async_save(runner)
        if self.published_keys is None or not is_main_process():
            return
        paths = []
        if self.save_last and self.last_ckpt is not None:
            paths.append(self.last_ckpt)
        if self.save_best is not None:
            if len(self.key_indicators) == 1:
                paths.append(self.best_ckpt_path)
            else:
                paths.extend(self.best_ckpt_path_dict.values())
        for path in paths:
            if path is not None:
                publish_checkpoint(str(path), self.published_keys, self._store)
