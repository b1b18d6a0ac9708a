"""The device input path (loops/device_prefetch.py): batches copied to the device ahead of
their step on a side stream, on CPU.

Three ways to run it here:
- by default on the CPU it is off: the data preprocessor gets the loader's own tensors;
- ``train_cfg.device_prefetch=True`` forces it on over torch's CPU streams (nothing to copy:
  the read-ahead, the counting and the hand-over run);
- a pretend device: the data preprocessor's target is 'meta' while the model stays on the
  CPU, and a side stream whose copies are CPU clones; a tensor the preprocessor would move
  itself goes to 'meta' and fails the forward, so every tensor the model gets is a copy made
  ahead of its step.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
import torch
from runner_toy_model import toy_cfg, toy_iter_cfg, unique_name
from runner_toys import captured_log

from treadle.runner.device.streams import SideStream, side_stream_for
from treadle.runner.hooks import Hook
from treadle.runner.loops import device_prefetch
from treadle.runner.loops.device_prefetch import (
    DevicePrefetcher,
    check_setting,
    pin_memory_default,
    tensors_to_copy,
)
from treadle.runner.model import BaseDataPreprocessor, unwrap_model
from treadle.runner.model.preprocessors.prefetched import PrefetchedCopies
from treadle.runner.registry import MODELS
from treadle.runner.runner import Runner

META = torch.device("meta")


@MODELS.register_module(name="PrefetchSpyPreprocessor", force=True)
class SpyPreprocessor(BaseDataPreprocessor):
    """Records the inputs it returns at each training call."""

    def __init__(self, non_blocking: bool = False) -> None:
        super().__init__(non_blocking)
        self.outputs: list[list[torch.Tensor]] = []

    def forward(self, data: Any, training: bool = False) -> Any:
        data = super().forward(data, training)
        if training:
            self.outputs.append(list(data["inputs"]))
        return data


class BatchTrace(Hook):
    """The inputs each ``before_train_iter`` sees and each step's loss."""

    priority = "VERY_LOW"

    def __init__(self) -> None:
        self.seen: list[list[torch.Tensor]] = []
        self.losses: dict[int, float] = {}

    def before_train_iter(self, runner, batch_idx, data_batch=None) -> None:
        self.seen.append(list(data_batch["inputs"]))

    def after_train_iter(self, runner, batch_idx, data_batch=None, outputs=None) -> None:
        self.losses[runner.iter + 1] = outputs["loss"].item()


class CloningStream(SideStream):
    """A side stream for the pretend device: copies are CPU clones, on torch's CPU streams;
    it counts the batches copied and handed over."""

    def __init__(self, device: torch.device) -> None:
        self.device = torch.device(device)
        self._module = torch.cpu
        self.stream = torch.cpu.Stream()
        self.copied = self.handed = self.most_in_flight = 0
        self.copies: list[torch.Tensor] = []

    def move(self, tensor: torch.Tensor) -> torch.Tensor:
        moved = tensor.clone()
        self.copies.append(moved)
        return moved

    def copy(self, tensors):
        result = super().copy(tensors)
        self.copied += 1
        self.most_in_flight = max(self.most_in_flight, self.copied - self.handed)
        return result

    def current(self) -> Any:
        return torch.cpu.current_stream()

    def hand_over(self, copies, ready) -> None:
        self.handed += 1


class PretendDevice(Hook):
    """Before training: the data preprocessor sends batches to 'meta' (its model stays on the
    CPU); with ``strict``, a tensor it moves itself really goes there (and fails the forward)."""

    priority = "VERY_HIGH"

    def __init__(self, strict: bool = True) -> None:
        self.strict = strict

    def before_train(self, runner) -> None:
        self._send_to(runner, META)

    # Validation is not prefetched: it runs on the CPU the model is on.
    def before_val(self, runner) -> None:
        self._send_to(runner, torch.device("cpu"))

    def after_val(self, runner) -> None:
        self._send_to(runner, META)

    def _send_to(self, runner, device: torch.device) -> None:
        preprocessor = unwrap_model(runner.model).data_preprocessor
        preprocessor.__dict__["_device_here"] = device
        if self.strict:
            preprocessor.__dict__["_device_as_set"] = device


@pytest.fixture
def streams(monkeypatch):
    """The side streams made for the pretend device."""
    made: list[CloningStream] = []

    def make(device):
        if torch.device(device) != META:
            return side_stream_for(device)
        made.append(CloningStream(device))
        return made[-1]

    monkeypatch.setattr(device_prefetch, "side_stream_for", make)
    return made


def _cfg(make_cfg, work_dir, prefetch=None, workers=0, dataset=None, hooks=(), **overrides):
    cfg = make_cfg(work_dir, **overrides)
    cfg["model"] = dict(cfg["model"], data_preprocessor=dict(type="PrefetchSpyPreprocessor"))
    loader = copy.deepcopy(cfg["train_dataloader"])
    loader["num_workers"] = workers
    if dataset is not None:
        loader["dataset"] = dataset
    cfg["train_dataloader"] = loader
    if prefetch is not None:
        cfg["train_cfg"] = dict(cfg["train_cfg"], device_prefetch=prefetch)
    cfg["custom_hooks"] = [*cfg.get("custom_hooks", []), *hooks]
    cfg["experiment_name"] = unique_name("prefetch")
    return cfg


def _train(cfg) -> tuple[Runner, BatchTrace]:
    trace = BatchTrace()
    cfg = dict(cfg, custom_hooks=[*cfg["custom_hooks"], trace])
    runner = Runner(**cfg)
    runner.train()
    return runner, trace


def _same_values(first: list[list[torch.Tensor]], second: list[list[torch.Tensor]]) -> bool:
    return len(first) == len(second) and all(
        len(a) == len(b) and all(torch.equal(x, y) for x, y in zip(a, b, strict=True))
        for a, b in zip(first, second, strict=True)
    )


def _outputs(runner) -> list[list[torch.Tensor]]:
    return unwrap_model(runner.model).data_preprocessor.outputs


# -- on the CPU by default: off, nothing copied -----------------------------------------------


@pytest.mark.parametrize("make_cfg", [toy_cfg, toy_iter_cfg], ids=["epoch", "iter"])
def test_off_on_the_cpu_by_default_and_the_preprocessor_gets_the_loaders_tensors(
    tmp_path, make_cfg
):
    runner, trace = _train(_cfg(make_cfg, tmp_path))
    loop = runner.train_loop
    assert loop.__dict__["_device_prefetch_plan"] is None
    assert not isinstance(getattr(loop, "_iterator", None), DevicePrefetcher)
    assert unwrap_model(runner.model).data_preprocessor._prefetched is None
    outputs = _outputs(runner)
    assert len(outputs) == len(trace.seen) == loop.max_iters
    # The very tensors the loader gave (and the hooks saw): no copy on the way.
    for seen, out in zip(trace.seen, outputs, strict=True):
        assert all(a is b for a, b in zip(seen, out, strict=True))
        assert [a.data_ptr() for a in seen] == [b.data_ptr() for b in out]


# -- forced on over torch's CPU streams -------------------------------------------------------


@pytest.mark.filterwarnings("ignore:This DataLoader will create")
@pytest.mark.parametrize("workers", [0, 2])
@pytest.mark.parametrize("make_cfg", [toy_cfg, toy_iter_cfg], ids=["epoch", "iter"])
def test_forced_on_the_cpu_same_batches_same_order_no_copy(tmp_path, make_cfg, workers):
    off_runner, off = _train(_cfg(make_cfg, tmp_path / "off", workers=workers))
    on_runner, on = _train(_cfg(make_cfg, tmp_path / "on", prefetch=True, workers=workers))
    plan = on_runner.train_loop.__dict__["_device_prefetch_plan"]
    assert plan is not None and plan.read_ahead == (workers > 0)
    assert plan.copying.on  # on the CPU the path runs to the end, though nothing is copied
    assert on.losses == off.losses
    assert _same_values(on.seen, off.seen)
    assert _same_values(_outputs(on_runner), _outputs(off_runner))
    for seen, out in zip(on.seen, _outputs(on_runner), strict=True):
        assert all(a is b for a, b in zip(seen, out, strict=True))


def test_forced_on_the_cpu_says_so_in_the_log(tmp_path):
    runner = Runner(**_cfg(toy_cfg, tmp_path, prefetch=True, workers=2))
    with captured_log() as log:
        runner.train()
    assert any(
        "device prefetch: the CPU has nothing to copy" in m and "next batch read ahead" in m
        for m in log.messages
    ), log.messages


def test_device_prefetch_false_keeps_it_off_on_a_device_with_streams(tmp_path, streams):
    runner, _ = _train(_cfg(toy_cfg, tmp_path, prefetch=False, hooks=[PretendDevice(False)]))
    assert runner.train_loop.__dict__["_device_prefetch_plan"] is None
    assert streams == []


# -- a pretend device: the copies reach the model ---------------------------------------------


@pytest.mark.filterwarnings("ignore:This DataLoader will create")
@pytest.mark.parametrize("workers", [0, 2])
@pytest.mark.parametrize("make_cfg", [toy_cfg, toy_iter_cfg], ids=["epoch", "iter"])
def test_on_a_device_the_model_gets_the_copies_and_hooks_the_host_batch(
    tmp_path, streams, make_cfg, workers
):
    _, off = _train(_cfg(make_cfg, tmp_path / "off", workers=workers))
    runner, on = _train(_cfg(make_cfg, tmp_path / "on", workers=workers, hooks=[PretendDevice()]))
    (stream,) = streams
    steps = runner.train_loop.max_iters
    assert on.losses == off.losses
    assert _same_values(on.seen, off.seen)
    # Every input the model got is a copy made before the step, none is a host tensor.
    copies = {id(t) for t in stream.copies}
    outputs = _outputs(runner)
    assert len(outputs) == steps
    assert all(id(t) in copies for out in outputs for t in out)
    assert not any(id(t) in copies for seen in on.seen for t in seen)
    assert stream.handed == steps
    # Two batches in flight at most: with workers, the next one is copied during a step.
    assert stream.most_in_flight == (2 if workers else 1)


@pytest.mark.parametrize("in_place", [False, True])
def test_a_tensor_a_hook_replaces_or_changes_is_moved_not_the_stale_copy(
    tmp_path, streams, in_place
):
    class Doubles(Hook):
        """Replaces the first input (and changes the second in place)."""

        def before_train_iter(self, runner, batch_idx, data_batch=None) -> None:
            inputs = data_batch["inputs"]
            inputs[0] = inputs[0] * 2
            if in_place:
                inputs[1].mul_(3)

    _, off = _train(_cfg(toy_cfg, tmp_path / "off", hooks=[Doubles()]))
    runner, on = _train(_cfg(toy_cfg, tmp_path / "on", hooks=[Doubles(), PretendDevice(False)]))
    assert on.losses == off.losses
    copies = {id(t) for t in streams[0].copies}
    for seen, out in zip(on.seen, _outputs(runner), strict=True):
        assert out[0] is seen[0]  # the hook's new tensor, moved by the preprocessor itself
        assert all(torch.equal(a, b) for a, b in zip(seen, out, strict=True))
        if in_place:
            # Moved as changed. (The samples are views of one tensor, which share a version
            # counter: the change marks the other samples' copies stale too, and they are
            # moved again: never a stale copy, at worst a second one.)
            assert out[1] is seen[1]
        else:
            assert id(out[1]) in copies and id(out[2]) in copies


def test_copies_stop_when_the_preprocessor_never_takes_them(tmp_path, streams):
    @MODELS.register_module(name="PrefetchSelfMovingModel", force=True)
    class SelfMoving(MODELS.get("RunnerToyModel")):
        def train_step(self, data, optim_wrapper):
            with optim_wrapper.optim_context(self):
                losses = self(data["inputs"], data["data_samples"], mode="loss")
            parsed, log_vars = self.parse_losses(losses)
            optim_wrapper.update_params(parsed)
            return log_vars

    cfg = _cfg(toy_cfg, tmp_path, hooks=[PretendDevice(False)])
    cfg["model"] = dict(type="PrefetchSelfMovingModel")
    runner = Runner(**cfg)
    with captured_log() as log:
        runner.train()
    limit = device_prefetch.UNUSED_LIMIT
    # The limit's batches, then the one handed over when the limit was found, are copied.
    assert streams[0].copied == limit + 1
    assert any("took none of the copies of 3 batches in a row" in m for m in log.messages)


# -- exact resume with prefetching on ---------------------------------------------------------

EVERY_5_ITERS = dict(
    logger=dict(type="LoggerHook", interval=1),
    checkpoint=dict(type="CheckpointHook", interval=5, by_epoch=False),
)


def _noisy() -> dict:
    import worker_noise_toys  # noqa: F401  (registers WorkerNoiseToyDataset)

    return dict(type="WorkerNoiseToyDataset", length=24)


@pytest.mark.filterwarnings("ignore:This DataLoader will create")
@pytest.mark.parametrize("device", ["forced-cpu", "pretend"])
@pytest.mark.parametrize("make_cfg", [toy_cfg, toy_iter_cfg], ids=["epoch", "iter"])
def test_exact_resume_mid_epoch_with_prefetch_on(tmp_path, streams, make_cfg, device):
    on = dict(hooks=[PretendDevice()]) if device == "pretend" else dict(prefetch=True)

    def cfg(work_dir, **more):
        if make_cfg is toy_cfg:
            more["default_hooks"] = EVERY_5_ITERS
        return _cfg(make_cfg, work_dir, workers=2, dataset=_noisy(), **more)

    _, never_stopped = _train(cfg(tmp_path / "full", **on))
    _, off = _train(cfg(tmp_path / "off", prefetch=False))
    saved = tmp_path / "full" / "iter_5.pth"
    resumed_runner, resumed = _train(
        cfg(tmp_path / "resumed", load_from=str(saved), resume=True, **on)
    )
    assert min(resumed.losses) == 6 and max(resumed.losses) == max(never_stopped.losses)
    assert resumed.losses == {
        it: loss for it, loss in never_stopped.losses.items() if it in resumed.losses
    }
    # The same numbers as a run without prefetching (workers' random transforms included).
    assert never_stopped.losses == off.losses
    assert resumed_runner.train_loop.__dict__["_device_prefetch_plan"].read_ahead


@pytest.mark.filterwarnings("ignore:This DataLoader will create")
def test_a_batch_read_ahead_does_not_count_in_the_saved_position(tmp_path):
    def saved_loop(prefetch, name):
        cfg = _cfg(
            toy_cfg,
            tmp_path / name,
            prefetch=prefetch,
            workers=2,
            dataset=_noisy(),
            default_hooks=EVERY_5_ITERS,
        )
        _train(cfg)
        return torch.load(tmp_path / name / "iter_5.pth", weights_only=False)["loop"]

    with_prefetch, without = saved_loop(True, "on"), saved_loop(False, "off")
    assert with_prefetch["sampler"] == without["sampler"]
    assert with_prefetch["batch_idx"] == without["batch_idx"] == 5
    workers_on, workers_off = with_prefetch["rng"]["workers"], without["rng"]["workers"]
    assert workers_on["skip"] == workers_off["skip"]
    assert len(workers_on["states"]) == 2
    for a, b in zip(workers_on["states"], workers_off["states"], strict=True):
        assert (a is None) == (b is None)
        if a is not None:
            assert torch.equal(a["torch"], b["torch"])
            assert torch.equal(a["python"]["state"], b["python"]["state"])


# -- the pieces -------------------------------------------------------------------------------


class _Counts:
    consumed = 0


def _counted(items):
    counts = _Counts()

    def generate():
        for item in items:
            counts.consumed += 1
            if isinstance(item, Exception):
                raise item
            yield item

    return generate(), counts


def _prefetcher(items, read_ahead=True):
    source, counts = _counted(items)
    stream = CloningStream(META)
    table = PrefetchedCopies(META)
    return DevicePrefetcher(source, stream, table, read_ahead, counts), counts, stream, table


def test_prefetcher_counts_only_the_batches_handed_to_the_loop():
    batches = [{"inputs": torch.full((2,), float(i))} for i in range(3)]
    prefetcher, counts, stream, table = _prefetcher(batches)
    first = next(prefetcher)
    assert first is batches[0] and counts.consumed == 1 and stream.copied == 2
    assert len(table) == 1
    assert [next(prefetcher), next(prefetcher)] == batches[1:]
    assert counts.consumed == 3
    with pytest.raises(StopIteration):
        next(prefetcher)
    assert len(table) == 0  # the copies are dropped with the pass
    with pytest.raises(StopIteration):
        next(prefetcher)


def test_prefetcher_raises_an_error_of_the_source_at_the_batch_it_stands_for():
    batches = [{"inputs": torch.ones(2)}, ValueError("bad sample 7")]
    prefetcher, *_ = _prefetcher(batches)
    assert next(prefetcher) is batches[0]  # its step runs before the error shows
    with pytest.raises(ValueError, match="bad sample 7"):
        next(prefetcher)


def test_prefetcher_without_read_ahead_copies_when_the_loop_takes_a_batch():
    batches = [{"inputs": torch.ones(2)}, {"inputs": torch.zeros(2)}]
    prefetcher, counts, stream, _ = _prefetcher(batches, read_ahead=False)
    next(prefetcher)
    assert stream.copied == 1 and counts.consumed == 1
    next(prefetcher)
    assert stream.copied == 2 and stream.most_in_flight == 1


def test_prefetcher_stops_copying_batches_already_on_the_device():
    batches = [{"inputs": torch.ones(2, device=META)} for _ in range(6)]
    prefetcher, counts, stream, _ = _prefetcher(batches)
    assert list(prefetcher) == batches and counts.consumed == 6
    assert stream.copied == 0 and prefetcher._plain  # passed on as they come, from the 4th on


def test_prefetcher_stops_copies_nobody_takes_and_drops_them():
    batches = [{"inputs": torch.full((2,), float(i))} for i in range(8)]
    prefetcher, counts, stream, table = _prefetcher(batches)
    taken = [next(prefetcher) for _ in range(5)]
    limit = device_prefetch.UNUSED_LIMIT
    # Judged at the hand-over of batch limit+1, when batch limit+2 was read ahead already.
    assert stream.copied == limit + 2
    assert len(table) == 1  # the copies of the batch being trained
    assert [*taken, *prefetcher] == batches and counts.consumed == 8
    assert len(table) == 0 and prefetcher._plain


def test_tensors_to_copy_finds_them_where_the_preprocessor_moves_them():
    from treadle.runner.structures import BaseDataElement

    a, b, c = torch.ones(1), torch.ones(2), torch.ones(3, device=META)
    batch = {"inputs": [a, (b, a)], "data_samples": [BaseDataElement(x=torch.ones(1))], "c": c}
    found = tensors_to_copy(batch, META)
    assert sorted(t.numel() for t in found) == [1, 2]  # each once; 'meta' ones stay


def test_cast_data_takes_the_copy_unless_the_tensor_changed():
    preprocessor = BaseDataPreprocessor()
    preprocessor.__dict__["_device_here"] = META
    table = PrefetchedCopies(META)
    preprocessor._prefetched = table
    host, changed, other = torch.ones(2), torch.ones(2), torch.ones(2)
    host_copy, changed_copy = host.clone(), changed.clone()
    table.put([(host, host_copy), (changed, changed_copy)])
    changed.add_(1)
    out = preprocessor({"a": host, "b": changed, "c": [other]})
    assert out["a"] is host_copy
    assert out["b"] is changed and out["c"][0] is other  # moved as before (to the CPU here)
    assert table.hits == 1
    assert preprocessor({"a": host})["a"] is host  # a copy is handed out once


def test_a_copied_model_gets_an_empty_table():
    preprocessor = BaseDataPreprocessor()
    preprocessor._prefetched = PrefetchedCopies(META)
    preprocessor._prefetched.put([(torch.ones(1), torch.ones(1))])
    copied = copy.deepcopy(preprocessor)
    assert len(copied._prefetched) == 0 and copied._prefetched.device == META


def test_no_side_streams_on_the_cpu_or_meta():
    assert side_stream_for("cpu") is None
    assert side_stream_for(META) is None
    assert side_stream_for(None) is None


# -- configuration ----------------------------------------------------------------------------


def test_a_bad_device_prefetch_value_names_the_key(tmp_path):
    runner = Runner(**_cfg(toy_cfg, tmp_path, prefetch="yes"))
    with pytest.raises(TypeError, match=r"train_cfg.device_prefetch must be True, False or None"):
        runner.train()
    with pytest.raises(TypeError, match="got int: 1"):
        check_setting(1)


def test_device_prefetch_works_with_a_loop_named_by_type(tmp_path):
    cfg = _cfg(toy_cfg, tmp_path, prefetch=True)
    cfg["train_cfg"] = dict(type="EpochBasedTrainLoop", max_epochs=1, device_prefetch=True)
    runner, trace = _train(cfg)
    assert runner.train_loop.device_prefetch is True
    assert len(trace.losses) == 4


def test_pin_memory_is_asked_for_on_an_accelerator_unless_named(monkeypatch):
    cfg = dict(batch_size=2)
    assert pin_memory_default(cfg, None) is cfg  # on the CPU
    monkeypatch.setattr(device_prefetch, "get_device", lambda: "cuda")
    assert pin_memory_default(cfg, None) == dict(batch_size=2, pin_memory=True)
    assert pin_memory_default(cfg, True)["pin_memory"] is True
    assert pin_memory_default(cfg, False) is cfg
    named = dict(batch_size=2, pin_memory=False)
    assert pin_memory_default(named, None) is named


def test_forced_on_without_a_usable_preprocessor_warns_and_trains(tmp_path):
    runner = Runner(**_cfg(toy_cfg, tmp_path, prefetch=True))
    original = runner.model.train_step

    def compiled(*args, **kwargs):  # what compile(target='train_step') leaves
        return original(*args, **kwargs)

    compiled.__treadle_compiled__ = True
    runner.model.train_step = compiled
    with captured_log() as log:
        runner.train()
    assert runner.train_loop.__dict__["_device_prefetch_plan"] is None
    assert any(
        "train_cfg.device_prefetch=True, but batches are not copied ahead: train_step is "
        "compiled" in m
        for m in log.messages
    ), log.messages
