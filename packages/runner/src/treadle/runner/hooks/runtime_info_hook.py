"""``RuntimeInfoHook``: keeps the message hub up to date with where the run is."""

from __future__ import annotations

from itertools import repeat
from typing import Any

from ..registry import HOOKS
from ..utils.train_steps import ITERATION, OUTPUTS, step_records, steps_between
from .errors import RunnerStateTypeError
from .hook import DATA_BATCH, Hook, keeps_methods


def _is_scalar(value: Any) -> bool:
    """Whether ``value`` is one number (a Python number, or a tensor or array of one element)."""
    if isinstance(value, (int, float)):
        return True
    numel = getattr(value, "numel", None)
    if callable(numel):
        return numel() == 1
    size = getattr(value, "size", None)
    return isinstance(size, int) and size == 1 and hasattr(value, "item")


@HOOKS.register_module()
class RuntimeInfoHook(Hook):
    """Publishes the run's state in ``runner.message_hub`` for parts that have no runner.

    Runtime info: ``cfg`` (text), ``seed``, ``experiment_name``, ``treadle_version`` once;
    ``loop_stage`` ('train', 'val' or 'test'); ``epoch``, ``iter``, ``max_epochs``,
    ``max_iters`` and the train set's ``dataset_meta``. Scalars: ``train/<name>`` for each
    learning rate of ``runner.optim_wrapper.get_lr()`` before each iteration and for each entry
    of the train step's outputs after it (tensors are stored unread: no device sync),
    ``val/<metric>`` and ``test/<metric>`` after evaluation (non-scalar metrics go to the
    runtime info under the same key).

    Example:
        >>> runner_cfg = dict(default_hooks=dict(runtime_info=dict(type='RuntimeInfoHook')))
    """

    priority = "VERY_HIGH"
    # It only records: the loops may call it only when another hook acts (see Hook).
    defer_train_iter = True

    def __init__(self) -> None:
        # The stage to go back to when a validation run inside training ends.
        self._outer_stage: str | None = None
        # `train/<name>` keys by output name, so that the per-step path formats no strings.
        self._train_keys: dict[str, str] = {}
        # The last iterations whose learning rates and outputs are in the message hub (the
        # loop calls this hook only where another hook is due; see record_skipped_steps).
        self._lr_through = -1
        self._outputs_through = -1

    @property
    def writes_when_read(self) -> bool:
        """Whether the loop may skip this hook at a step where only hooks due at every step
        run, leaving its writes to the message hub's pending writer (write_pending): yes,
        unless a subclass has iteration methods of its own, which are then called."""
        return keeps_methods(self, RuntimeInfoHook, ("before_train_iter", "after_train_iter"))

    def _train_key(self, name: str) -> str:
        key = self._train_keys.get(name)
        if key is None:
            key = self._train_keys[name] = f"train/{name}"
        return key

    def before_run(self, runner: Any) -> None:
        from .. import __version__

        cfg = getattr(runner, "cfg", None)
        runner.message_hub.update_info_dict(
            {
                "cfg": getattr(cfg, "pretty_text", "") if cfg is not None else "",
                "seed": runner.seed,
                "experiment_name": runner.experiment_name,
                "treadle_version": __version__,
            }
        )
        self._outer_stage = None

    def before_train(self, runner: Any) -> None:
        hub = runner.message_hub
        self._lr_through = self._outputs_through = runner.iter - 1
        hub.update_info("loop_stage", "train")
        hub.update_info("epoch", runner.epoch)
        hub.update_info("iter", runner.iter)
        hub.update_info("max_epochs", runner.max_epochs)
        hub.update_info("max_iters", runner.max_iters)
        dataset = getattr(runner.train_dataloader, "dataset", None)
        if hasattr(dataset, "metainfo"):
            hub.update_info("dataset_meta", dataset.metainfo)

    def after_train(self, runner: Any) -> None:
        runner.message_hub.pop_info("loop_stage")

    def before_train_epoch(self, runner: Any) -> None:
        runner.message_hub.update_info("epoch", runner.epoch)

    def before_train_iter(self, runner: Any, batch_idx: int, data_batch: DATA_BATCH = None) -> None:
        hub = runner.message_hub
        iteration = runner.iter
        hub.update_info("iter", iteration)
        lrs = self._lrs(runner)
        # Steps the loop ran without calling the hooks, not written yet (record_skipped_steps
        # has nothing to write otherwise: the test is its own first one, without the calls).
        if self._outputs_through < iteration - 1 and step_records(runner) is not None:
            self.record_skipped_steps(runner, iteration, lrs)
        self._lr_through = iteration
        # As MMEngine: the learning rates this iteration trains with, before it runs.
        self._write_lrs(hub, lrs, 1)

    def after_train_iter(
        self,
        runner: Any,
        batch_idx: int,
        data_batch: DATA_BATCH = None,
        outputs: dict | None = None,
    ) -> None:
        iteration = runner.iter
        if (self._outputs_through == iteration - 1 and self._lr_through >= iteration) or (
            step_records(runner) is None
        ):
            # The hooks ran at the step before and before this one (where every hook is due at
            # every step), or the loop records nothing: this step's outputs are all to write.
            self._write_outputs(runner.message_hub, outputs)
            self._outputs_through = iteration
            return
        # The current step's outputs (and any step before it not written yet).
        self.record_skipped_steps(runner, iteration + 1)

    def record_skipped_steps(
        self, runner: Any, before: int, lrs: dict[str, Any] | None = None
    ) -> None:
        """Write the learning rates and outputs of the recorded steps before iteration
        ``before`` that are not in the message hub yet: the loop calls it before the hooks of
        an iteration, so that all of them read one entry per step, as if this hook had run at
        each. The learning rates changed at none of the skipped steps, since changing them is a
        hook's job (ParamSchedulerHook runs at every step when a scheduler steps by iteration).
        """
        if self._outputs_through >= before - 1:
            return  # nothing skipped (steps_between's first test, without its call)
        steps = steps_between(runner, self._outputs_through, before)
        if steps is None:
            return
        hub = runner.message_hub
        lr_missing = sum(1 for step in steps if step[ITERATION] > self._lr_through)
        if lr_missing:
            self._write_lrs(hub, self._lrs(runner) if lrs is None else lrs, lr_missing)
            self._lr_through = steps[-1][ITERATION]
        if len(steps) == 1:
            self._write_outputs(hub, steps[0][OUTPUTS])
        else:
            self._write_step_outputs(hub, steps)
        self._outputs_through = steps[-1][ITERATION]

    def write_pending(self, runner: Any, before: int, fetched_at: float | None = None) -> None:
        """Write what the hook would have written by now had the loop called it at every step:
        the recorded steps before iteration ``before``, then, when ``fetched_at`` is given
        (``before``'s train_step is running), the learning rates it trains with. The message
        hub's pending writer asks when something reads the hub between two iterations at which
        the hooks are due."""
        self.record_skipped_steps(runner, before)
        if fetched_at is not None and self._lr_through < before:
            self._write_lrs(runner.message_hub, self._lrs(runner), 1)
            self._lr_through = before

    @staticmethod
    def _lrs(runner: Any) -> dict[str, Any]:
        lrs = runner.optim_wrapper.get_lr()
        if not isinstance(lrs, dict):
            raise RunnerStateTypeError(
                f"RuntimeInfoHook: `runner.optim_wrapper.get_lr()` should return a dict of "
                f"learning rates ({type(runner.optim_wrapper).__name__} returned "
                f"{type(lrs).__name__}); build the optimizer wrapper as an OptimWrapper or an "
                f"OptimWrapperDict"
            )
        return lrs

    def _write_lrs(self, hub: Any, lrs: dict[str, Any], times: int) -> None:
        keys = self._train_keys
        for name, values in lrs.items():
            key = keys.get(name) or self._train_key(name)
            if times == 1:
                hub.update_scalar(key, values[0])
            else:
                hub.extend_scalar(key, repeat(values[0], times))

    def _write_step_outputs(self, hub: Any, steps: list[tuple]) -> None:
        """The outputs of the recorded steps: one ``extend_scalar`` per name where every step
        returned the same names (the usual case), else step by step."""
        first = steps[0][OUTPUTS]
        if type(first) is dict and first:
            keys = first.keys()
            if all(type(step[OUTPUTS]) is dict and step[OUTPUTS].keys() == keys for step in steps):
                for name in keys:
                    hub.extend_scalar(
                        self._train_key(name), [step[OUTPUTS][name] for step in steps]
                    )
                return
        for step in steps:
            self._write_outputs(hub, step[OUTPUTS])

    def _write_outputs(self, hub: Any, outputs: dict | None) -> None:
        if outputs:
            keys = self._train_keys
            for name, value in outputs.items():
                hub.update_scalar(keys.get(name) or self._train_key(name), value)

    def before_val(self, runner: Any) -> None:
        self._outer_stage = runner.message_hub.get_info("loop_stage", None)
        runner.message_hub.update_info("loop_stage", "val")

    def after_val(self, runner: Any) -> None:
        # A validation inside training hands the stage back to training.
        if self._outer_stage == "train":
            runner.message_hub.update_info("loop_stage", "train")
        else:
            runner.message_hub.pop_info("loop_stage")
        self._outer_stage = None

    def before_test(self, runner: Any) -> None:
        runner.message_hub.update_info("loop_stage", "test")

    def after_test(self, runner: Any) -> None:
        runner.message_hub.pop_info("loop_stage")

    def after_val_epoch(self, runner: Any, metrics: dict[str, Any] | None = None) -> None:
        self._publish_metrics(runner, "val", metrics)

    def after_test_epoch(self, runner: Any, metrics: dict[str, Any] | None = None) -> None:
        self._publish_metrics(runner, "test", metrics)

    @staticmethod
    def _publish_metrics(runner: Any, mode: str, metrics: dict[str, Any] | None) -> None:
        if not metrics:
            return
        hub = runner.message_hub
        for name, value in metrics.items():
            if _is_scalar(value):
                hub.update_scalar(f"{mode}/{name}", value)
            else:
                hub.update_info(f"{mode}/{name}", value)

    # MMEngine's attribute name for the stage a validation run returns to.
    @property
    def last_loop_stage(self) -> str | None:
        """The loop stage ('train' or None) that the running validation hands back to."""
        return self._outer_stage

    @last_loop_stage.setter
    def last_loop_stage(self, stage: str | None) -> None:
        self._outer_stage = stage
