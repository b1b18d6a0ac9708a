"""Check 7: the data preprocessor and the copy to the device.

- a batch already on the device (a tensor, a list of tensors, a data element's field, with the
  preprocessor moved by ``.to('cuda')``, which names no index) comes back without a copy: the
  same storage (``data_ptr``);
- on CUDA, a DataLoader built with ``pin_memory=True`` gives pinned batches, and a preprocessor
  with ``non_blocking=True`` copies them to the device without a sync (under
  ``torch.cuda.set_sync_debug_mode('error')``).
"""

from __future__ import annotations

from pathlib import Path

import torch

from gpu_pass_checks.rows import Row, no_cuda_analogue, verdict


def identity_row(device: str) -> Row:
    from treadle.runner.model import BaseDataPreprocessor
    from treadle.runner.structures import BaseDataElement

    preprocessor = BaseDataPreprocessor().to(device)
    sample = BaseDataElement(label=torch.arange(3, device=device))
    batch = {
        "inputs": torch.randn(4, 8, device=device),
        "extra": [torch.ones(2, device=device), torch.zeros(2, device=device)],
        "data_samples": [sample],
    }
    before = [
        batch["inputs"].data_ptr(),
        *(t.data_ptr() for t in batch["extra"]),
        sample.label.data_ptr(),
    ]
    out = preprocessor(batch, training=True)
    after = [
        out["inputs"].data_ptr(),
        *(t.data_ptr() for t in out["extra"]),
        out["data_samples"][0].label.data_ptr(),
    ]
    copies = sum(a != b for a, b in zip(before, after, strict=True))
    return verdict(
        "preprocessor: batch on the device kept",
        copies == 0,
        f"{copies} copies of {len(before)} tensors",
        f"{copies} of {len(before)} tensors already on {device} were copied",
    )


def pinned_row(work_dir: Path) -> Row:
    from gpu_pass_checks.toys import loader
    from treadle.runner.model import BaseDataPreprocessor
    from treadle.runner.runner import Runner

    dataloader = Runner.build_dataloader(loader(length=8, batch_size=4, pin_memory=True), seed=0)
    batch = next(iter(dataloader))
    pinned = batch["inputs"].is_pinned() and batch["data_samples"].is_pinned()
    preprocessor = BaseDataPreprocessor(non_blocking=True).to("cuda")
    error = None
    torch.cuda.set_sync_debug_mode("error")
    try:
        moved = preprocessor(batch, training=True)
    except RuntimeError as caught:
        error = str(caught).splitlines()[0]
        moved = None
    finally:
        torch.cuda.set_sync_debug_mode("default")
    on_device = moved is not None and moved["inputs"].is_cuda and moved["data_samples"].is_cuda
    return verdict(
        "preprocessor: pinned, non-blocking copy",
        pinned and error is None and on_device,
        "0 syncs" if error is None else "a sync",
        error or f"batch pinned: {pinned}, moved to the device: {on_device}",
    )


def run(device: str, work_dir: Path) -> list[Row]:
    rows = [identity_row(device)]
    if device == "cuda":
        rows.append(pinned_row(work_dir))
    else:
        rows.append(no_cuda_analogue("preprocessor: pinned, non-blocking copy", "pinned memory"))
    return rows
