"""CheckpointHook's best checkpoints: one per ``save_best`` metric, written when the metric
improves, the previous one removed once the new one is complete.

A mixin of :class:`~treadle.runner.hooks.CheckpointHook` (its own module, to keep the hook's
short); it reads the hook's settings (``save_best``, ``key_indicators``, ``rules``, ``out_dir``,
``best_with_state``...) and calls its saving methods.
"""

from __future__ import annotations

import difflib
import os
from typing import Any

from treadle.dist import is_main_process

from .checkpoint_failure import removal_failed
from .checkpoint_publish import remove_checkpoint


def _number(value: Any) -> Any:
    """A tensor's or NumPy scalar's value as a Python number; anything else as it is."""
    return value.item() if hasattr(value, "item") else value


def _folder(path: str) -> str:
    """The folder of a checkpoint path (local, or a URI such as s3://bucket/ckpts/a.pth)."""
    if "://" in path:
        return path.rstrip("/").rsplit("/", 1)[0]
    return os.path.abspath(os.path.dirname(path))


def same_folder(path: str, folder: str) -> bool:
    """Whether the checkpoint ``path`` lies in ``folder`` (local or a URI)."""
    if "://" in folder:
        return _folder(path) == folder.rstrip("/")
    # Absolute: a run resumed with work_dir written another way is still the same folder.
    return _folder(path) == os.path.abspath(folder)


class BestCheckpoints:
    """The best-checkpoint part of CheckpointHook (see the module's docstring).

    Example:
        >>> from treadle.runner.hooks import CheckpointHook
        >>> hook = CheckpointHook(save_best='accuracy/top1', rule='greater')
        >>> hook._score_keys('accuracy/top1')
        ('best_score', 'best_ckpt')
    """

    # Set by CheckpointHook.
    save_best: Any
    key_indicators: list[str]
    rules: list[str | None]

    def _report_outside_training(self, runner: Any, metrics: dict[str, Any]) -> None:
        # runner.val() (MMEngine #1587): no optimizer, scheduler or loop state of a training
        # run to save, and a standalone validation must not replace a training run's best.
        if "auto" in self.key_indicators:
            self._init_rule(self.rules, [next(iter(metrics))])
        self._check_metrics(metrics)
        scores = ", ".join(f"{key}: {_number(metrics[key])}" for key in self.key_indicators)
        runner.logger.info(
            f"CheckpointHook: {scores} (save_best); no best checkpoint is saved outside "
            "training (runner.val() has no training state to save)"
        )

    def _score_keys(self, key: str) -> tuple[str, str]:
        if len(self.key_indicators) == 1:
            return "best_score", "best_ckpt"
        return f"best_score_{key}", f"best_ckpt_{key}"

    def _check_metrics(self, metrics: dict) -> None:
        for key in self.key_indicators:
            if key not in metrics:
                close = difflib.get_close_matches(key, list(metrics), n=3, cutoff=0.5)
                hint = f"; did you mean {' or '.join(map(repr, close))}?" if close else ""
                raise KeyError(
                    f"CheckpointHook: save_best names {key!r}, but the evaluation returned "
                    f"{sorted(metrics)}{hint}"
                )

    def _save_best_checkpoint(self, runner: Any, metrics: dict[str, Any]) -> None:
        if not self.save_best:
            return
        # A best checkpoint is written at once: the save in flight first, and its outcome.
        self._settle_async_save(runner)
        if "auto" in self.key_indicators:
            self._init_rule(self.rules, [next(iter(metrics))])
        self._check_metrics(metrics)
        unit, step = ("epoch", runner.epoch) if self.by_epoch else ("iter", runner.iter)
        filename = self.filename_tmpl.format(step)
        meta = dict(epoch=runner.epoch, iter=runner.iter)
        hub = runner.message_hub

        updated = False
        for key in self.key_indicators:
            score = metrics[key]
            score_key, path_key = self._score_keys(key)
            best_score = hub.runtime_info.get(score_key, self.init_value_map[self._rule(key)])
            if score is None or not self.is_better_than[key](score, best_score):
                continue
            updated = True
            # A plain number: checkpoints load with weights_only, which refuses NumPy scalars.
            score = _number(score)
            best_name = f"best_{key}_{filename}".replace("/", "_")
            path = self._path(best_name)
            previous = self._best_path(key)
            # Recorded before the write, so that the best checkpoint names itself: a run
            # resumed from it (best_with_state) replaces it at the next better score.
            old_info = (hub.runtime_info.get(score_key), hub.runtime_info.get(path_key))
            hub.update_info(score_key, score)
            hub.update_info(path_key, path)
            self._set_best_path(key, path)
            try:
                self._write_best(runner, best_name, meta)
            except BaseException:
                self._set_best_path(key, previous)  # type: ignore[arg-type]
                hub.update_info(score_key, old_info[0])
                hub.update_info(path_key, old_info[1])
                raise
            runner.logger.info(
                f"The best checkpoint with {score:0.4f} {key} at {step} {unit} is saved to "
                f"{best_name}."
            )
            # The old best goes once the new one is complete: a failed or killed save leaves
            # the old one in place (MMEngine deletes it first).
            if previous and previous != path:
                self._remove_best(runner, previous)
        # The periodic checkpoint of this step was written before validation, with the old
        # best in its message hub: write it again so a resume from it knows the new best file.
        # Only that one: MMEngine writes a checkpoint at this step even when the interval
        # skipped it, off the user's schedule and counted against max_keep_ckpts.
        if updated and self.last_ckpt == self._path(filename):
            # The loop's state holds the generators training continues from, not those of
            # validation.
            self._save_checkpoint_with_step(runner, step, dict(meta))

    def _write_best(self, runner: Any, best_name: str, meta: dict) -> None:
        # best_with_state: what a periodic checkpoint holds, so a run resumes from the best.
        with_state = self.best_with_state
        runner.save_checkpoint(
            self.out_dir,
            filename=best_name,
            file_client_args=self.file_client_args,
            save_optimizer=with_state,
            save_param_scheduler=with_state and runner.param_schedulers is not None,
            meta=dict(meta),
            by_epoch=False,
            backend_args=self.backend_args,
        )

    def _remove_best(self, runner: Any, previous: str) -> None:
        if not is_main_process():
            return
        if not same_folder(previous, self.out_dir):
            # The best of the run this one resumed from, in its own folder: not ours to delete.
            runner.logger.info(
                f"The previous best checkpoint {previous} is kept: it is outside {self.out_dir}"
            )
            return
        try:
            if remove_checkpoint(previous, self._store):
                runner.logger.info(f"The previous best checkpoint {previous} is removed")
        except OSError as exc:  # a file too many is no reason to stop training
            removal_failed(previous, exc)

    def _rule(self, key: str) -> str:
        return self.rules[self.key_indicators.index(key)]  # type: ignore[return-value]

    def _best_path(self, key: str) -> str | None:
        if len(self.key_indicators) == 1:
            return self.best_ckpt_path
        return self.best_ckpt_path_dict.get(key)

    def _best_paths(self) -> list[str]:
        if self.save_best is None:
            return []
        if len(self.key_indicators) == 1:
            paths = [self.best_ckpt_path]
        else:
            paths = list(self.best_ckpt_path_dict.values())
        return [path for path in paths if path]

    def _set_best_path(self, key: str, path: str) -> None:
        if len(self.key_indicators) == 1:
            self.best_ckpt_path = path
        else:
            self.best_ckpt_path_dict[key] = path
